"""`skillopt train --estimate` as a user runs it: the embedded model and handoff say what
they cost ($0, no API cost), where the old line said "cost unknown (no price)" for handoff."""

from __future__ import annotations

from tests.skillopt_tui.cli.test_train_cmds import skillopt


def test_the_demo_estimate_says_the_embedded_model_is_free(tmp_path):
    done = skillopt(tmp_path, "train", "--config", "configs/demo.yaml", "--estimate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("$0: target on the embedded model (free)")


def test_a_handoff_estimate_says_no_api_cost(tmp_path):
    args = ["--set", "models.optimizer.backend=handoff", "--set", "train.strategy=llm"]
    args += ["--set", f"models.handoff_dir={tmp_path / 'handoff'}"]
    done = skillopt(tmp_path, "train", "--config", "configs/demo.yaml", *args, "--estimate")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert "cost unknown" not in line
    assert line.endswith(
        "no API cost: target on the embedded model (free), optimizer on handoff "
        "(you answer the prompts)"
    )
    assert not (tmp_path / "handoff").exists()  # an estimate writes no prompt
