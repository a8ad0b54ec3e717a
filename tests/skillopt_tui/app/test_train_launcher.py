"""The TUI's `skillopt train` child (a real process): its output is kept beside the runs,
never in the system's temp folder, and is gone once the ended run's tail was shown."""

from __future__ import annotations

from skillopt_tui.app.train_launcher import LOG_DIR, TrainLauncher


def test_the_run_log_lives_beside_the_runs_and_goes_when_the_run_ends(tmp_path):
    runs = tmp_path / "runs"
    launcher = TrainLauncher()
    process = launcher.start(tmp_path / "missing.yaml", runs)
    assert launcher.log_path is not None
    assert launcher.log_path.parent == runs / LOG_DIR
    assert launcher.log_path.name == f"{launcher.run_dir.name}.log"
    assert process.wait(timeout=120) == 2
    tail = launcher.finished_tail()
    assert "missing.yaml" in tail  # the one-line error, printed before any run dir existed
    assert not launcher.log_path.exists()
    assert sorted(p.name for p in runs.iterdir()) == []  # folder removed, no run dir made
