"""`skillopt train / eval / runs` as a user runs them (subprocesses), on the scenario of
tests/support/train_scenario.py with the skill-sensitive TEST DOUBLE as target."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.train_scenario import write_config

REPO = Path(__file__).resolve().parents[3]
SKILLOPT = Path(sys.executable).parent / "skillopt"


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["SKILLOPT_TEST_CALL_LOG"] = str(tmp_path / "calls.jsonl")
    for key in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SKILLOPT_TEST_HANG_AT_CALL",
        "SKILLOPT_TEST_DELAY_S",
        "SKILLOPT_TEST_DOWN",
    ):
        env.pop(key, None)
    env.update(extra)
    return env


def skillopt(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SKILLOPT), *args],
        cwd=REPO,
        env=env_for(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_error(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("skillopt: error: ")
    return lines[0]


def test_train_then_runs_then_eval(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "scenario"
    done = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "finished" and summary["run_dir"] == str(out)
    assert (summary["baseline_val"], summary["best_val"]) == (0.0, pytest.approx(0.6))
    assert "step 0: accepted" in done.stderr and "step 1: rejected" in done.stderr

    listed = skillopt(tmp_path, "runs", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert listed.returncode == 0
    (info,) = json.loads(listed.stdout)
    assert (info["run_id"], info["status"], info["steps_done"]) == ("scenario", "finished", 4)
    assert info["best_val"] == pytest.approx(0.6)
    text = skillopt(tmp_path, "runs", "--runs-dir", str(tmp_path / "runs"))
    assert "scenario" in text.stdout and "finished" in text.stdout

    scored = skillopt(
        tmp_path,
        "eval",
        "--config",
        str(config),
        "--skill",
        str(out / "best_skill.md"),
        "--split",
        "test",
        "--json",
    )
    assert scored.returncode == 0, scored.stderr
    result = json.loads(scored.stdout)
    assert result["n"] == 3 and result["hard"] == pytest.approx(2 / 3)
    assert result["buckets"]["country_to_capital"]["n"] == 3


def test_default_out_dir_is_under_runs_dir(tmp_path):
    config = write_config(tmp_path)
    done = skillopt(tmp_path, "train", "--config", str(config), "--set", "run.name=named")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "runs" / "named")
    assert (tmp_path / "runs" / "named" / "summary.json").exists()


def test_bad_input_is_a_one_line_error_with_exit_2(tmp_path):
    config = write_config(tmp_path)
    out = str(tmp_path / "out")
    corrupt = tmp_path / "corrupt.md"
    corrupt.write_text("---\nname: [unclosed\n---\nAnswer.\n", encoding="utf-8")
    cases = [
        (("train", "--config", str(tmp_path / "missing.yaml"), "--out", out), "not found"),
        (
            ("train", "--config", str(config), "--set", "env.name=nosuchenv", "--out", out),
            "unknown environment 'nosuchenv'",
        ),
        (("train", "--config", str(config), "--set", "train.bogus=1", "--out", out), "unknown key"),
        (("eval", "--config", str(config), "--skill", str(tmp_path / "nope.md")), "not found"),
        (
            ("eval", "--config", str(config), "--skill", str(tmp_path), "--split", "val"),
            "directory, not a file",
        ),
        (
            ("eval", "--config", str(config), "--skill", str(config), "--split", "train"),
            "--split must be val or test",
        ),
        (("eval", "--config", str(config), "--skill", str(corrupt)), str(corrupt)),
    ]
    for args, expected in cases:
        result = skillopt(tmp_path, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert expected in one_line_error(result), args
    assert not (tmp_path / "out").exists()  # bad input never leaves a run directory behind


def test_out_dir_in_use_by_a_live_process(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "run"
    marker = tmp_path / "calls.jsonl.hanging"
    env = env_for(tmp_path, SKILLOPT_TEST_HANG_AT_CALL="2")
    holder = subprocess.Popen(
        [str(SKILLOPT), "train", "--config", str(config), "--out", str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        second = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out))
        assert second.returncode == 2
        assert f"run directory {out} is in use by process {holder.pid}" in one_line_error(second)
    finally:
        holder.kill()
        holder.wait()


def test_resume_refuses_a_changed_config_and_fresh_needs_force(tmp_path):
    config = write_config(tmp_path)
    out = str(tmp_path / "run")
    first = skillopt(
        tmp_path, "train", "--config", str(config), "--out", out, "--set", "budget.max_tokens=300"
    )
    assert first.returncode == 3, first.stderr
    changed = skillopt(
        tmp_path, "train", "--config", str(config), "--out", out, "--set", "train.batch_size=2"
    )
    assert changed.returncode == 2
    message = one_line_error(changed)
    assert "train.batch_size" in message and "--fresh" in message
    refused = skillopt(tmp_path, "train", "--config", str(config), "--out", out, "--fresh")
    assert refused.returncode == 2 and "--force" in one_line_error(refused)
    fresh = skillopt(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        out,
        "--set",
        "train.batch_size=2",
        "--fresh",
        "--force",
        "--json",
    )
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["status"] == "finished"
    assert "resuming" not in fresh.stderr


def test_budget_stop_exits_3_then_resumes_with_a_higher_cap(tmp_path):
    config = write_config(tmp_path)
    out = str(tmp_path / "run")
    stopped = skillopt(
        tmp_path, "train", "--config", str(config), "--out", out, "--set", "budget.max_tokens=300"
    )
    assert stopped.returncode == 3
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith("skillopt: stopped: token budget reached") and "rerun" in last
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["status"] == "stopped"
    resumed = skillopt(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        out,
        "--set",
        "budget.max_tokens=100000",
        "--json",
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr
    assert json.loads(resumed.stdout)["best_val"] == pytest.approx(0.6)


def test_sigterm_stops_at_a_step_boundary_and_the_run_resumes(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "run"
    env = env_for(tmp_path, SKILLOPT_TEST_DELAY_S="0.05")
    proc = subprocess.Popen(
        [str(SKILLOPT), "train", "--config", str(config), "--out", str(out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while True:
        state_path = out / "state.json"
        if state_path.exists() and json.loads(state_path.read_text())["next_step"] >= 1:
            break
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stderr
    assert "stopped on request" in stderr
    state = json.loads((out / "state.json").read_text())
    assert state["status"] == "stopped" and 1 <= state["next_step"] < 4
    resumed = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["best_val"] == pytest.approx(0.6)


def test_skills_repo_gives_the_initial_skill_and_stages_accepted_candidates(tmp_path):
    from core.skills_repo import SkillsRepo
    from tests.support.train_scenario import INITIAL_SKILL

    repo = SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com"))
    repo.add_skill("capitals", INITIAL_SKILL)
    config = write_config(tmp_path, initial_skill=None)
    out = tmp_path / "runs" / "repo-run"
    done = skillopt(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        str(out),
        "--skills-repo",
        str(tmp_path / "skills"),
        "--skill",
        "capitals",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["best_val"] == pytest.approx(0.6)
    (branch,) = SkillsRepo.open(tmp_path / "skills").staged_branches()
    assert branch.run_id == "repo-run" and branch.commits == 1
    gate = json.loads((out / "steps" / "0000" / "gate.json").read_text())
    assert gate["staged_ref"] == branch.head
    # The run ends saying what to do next, and each printed command works as printed.
    after = done.stderr[done.stderr.index("next: ") :].splitlines()
    assert after[0] == f"next: the best skill is {out / 'best_skill.md'}"
    assert (out / "best_skill.md").is_file()
    assert after[1].split(": ", 1)[1] == f"skillopt tui --runs-dir {out.parent}"
    review = after[2].split(": ", 1)[1].split()
    assert review[:3] == ["skillopt", "skills", "diff"]
    shown = skillopt(tmp_path, *review[1:])
    assert shown.returncode == 0 and "+" in shown.stdout, shown.stderr
    half = skillopt(tmp_path, "train", "--config", str(config), "--skills-repo", str(tmp_path))
    assert half.returncode == 2 and "go together" in one_line_error(half)


def test_a_run_dir_named_run_stages_under_its_parents_name_and_resume_keeps_the_branch(
    tmp_path,
):
    """`--out exp1/run` staged on `staged/run`, like every other `…/run` (fails on the old
    code). The id is chosen once and kept in state.json: a resume stages there."""
    from core.skills_repo import SkillsRepo
    from tests.support.train_scenario import INITIAL_SKILL

    SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com")).add_skill(
        "capitals", INITIAL_SKILL
    )
    config = write_config(tmp_path, initial_skill=None)
    out = tmp_path / "exp1" / "run"
    args = ("train", "--config", str(config), "--out", str(out),
            "--skills-repo", str(tmp_path / "skills"), "--skill", "capitals")  # fmt: skip
    stopped = skillopt(tmp_path, *args, "--set", "budget.max_tokens=300")
    assert stopped.returncode == 3, stopped.stderr
    state = json.loads((out / "state.json").read_text())
    assert state["stager_run_id"] == "exp1-run"
    # the id is read back from the state, never chosen again
    state["stager_run_id"] = "kept-id"
    (out / "state.json").write_text(json.dumps(state))
    resumed = skillopt(tmp_path, *args, "--set", "budget.max_tokens=100000")
    assert resumed.returncode == 0, resumed.stderr
    (branch,) = SkillsRepo.open(tmp_path / "skills").staged_branches()
    assert branch.name == "staged/kept-id"


def test_target_outage_is_a_one_line_failure_and_the_run_resumes(tmp_path):
    config = write_config(tmp_path)
    out = str(tmp_path / "run")
    no_retries = ("--set", "models.target.max_retries=0")
    down = skillopt(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        out,
        *no_retries,
        SKILLOPT_TEST_DOWN="1",
    )
    assert down.returncode == 1, down.stderr
    assert "Traceback" not in down.stderr
    last = down.stderr.strip().splitlines()[-1]
    assert last.startswith("skillopt: error: 5 of 5 val rollouts failed (baseline)")
    assert "SKILLOPT_TEST_DOWN outage" in last and "resumable" in last
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["status"] == "failed" and state["baseline_score"] is None
    back = skillopt(tmp_path, "train", "--config", str(config), "--out", out, *no_retries, "--json")
    assert back.returncode == 0, back.stderr
    assert "resuming" in back.stderr
    summary = json.loads(back.stdout)
    assert (summary["baseline_val"], summary["best_val"]) == (0.0, pytest.approx(0.6))


def test_fresh_force_archives_the_discarded_runs_staged_branch(tmp_path):
    from core.skills_repo import SkillsRepo
    from tests.support.skills_git import plain_git
    from tests.support.train_scenario import INITIAL_SKILL

    SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com")).add_skill(
        "capitals", INITIAL_SKILL
    )
    config = write_config(tmp_path, initial_skill=None)
    out = tmp_path / "runs" / "repo-run"
    repo_args = (
        "--config",
        str(config),
        "--out",
        str(out),
        "--skills-repo",
        str(tmp_path / "skills"),
        "--skill",
        "capitals",
    )
    first = skillopt(tmp_path, "train", *repo_args)
    assert first.returncode == 0, first.stderr
    old_head = SkillsRepo.open(tmp_path / "skills").staged_branches()[0].head

    # Start over with another batch size: its step-0 candidate differs from the old one.
    # Stopped by the budget cap before anything is accepted, then resumed without --fresh.
    fresh = skillopt(
        tmp_path,
        "train",
        *repo_args,
        "--fresh",
        "--force",
        "--set",
        "train.batch_size=2",
        "--set",
        "budget.max_tokens=300",
    )
    assert fresh.returncode == 3, fresh.stderr
    assert "archived staged/repo-run of the discarded run as rejected/repo-run" in fresh.stderr
    repo = SkillsRepo.open(tmp_path / "skills")
    assert repo.staged_branches() == []
    assert plain_git(repo.path, "rev-parse", "rejected/repo-run").strip() == old_head
    resumed = skillopt(
        tmp_path,
        "train",
        *repo_args,
        "--set",
        "train.batch_size=2",
        "--set",
        "budget.max_tokens=100000",
    )
    assert resumed.returncode == 0, resumed.stderr
    (branch,) = SkillsRepo.open(tmp_path / "skills").staged_branches()
    state = json.loads((out / "state.json").read_text())
    refs = [r["ref"] for r in state["staged_refs"]]
    assert refs and old_head not in refs and refs[-1] == branch.head
    staged_text = plain_git(repo.path, "show", f"{branch.head}:capitals/SKILL.md")
    assert staged_text == (out / "best_skill.md").read_text()

    again = skillopt(tmp_path, "train", *repo_args, "--fresh", "--force")
    assert again.returncode == 0, again.stderr
    assert "as rejected/repo-run-2" in again.stderr
    assert plain_git(repo.path, "rev-parse", "rejected/repo-run-2").strip() == branch.head


def test_out_dir_that_is_not_a_run_is_never_deleted_or_overwritten(tmp_path):
    config = write_config(tmp_path)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "main.py").write_text("print('mine')\n")
    (project / "config.yaml").write_text("mine: true\n")
    for extra in ((), ("--fresh",), ("--fresh", "--force")):
        result = skillopt(tmp_path, "train", "--config", str(config), "--out", str(project), *extra)
        assert result.returncode == 2, (extra, result.stderr)
        assert "not a run directory" in one_line_error(result), extra
    assert sorted(p.name for p in project.iterdir()) == [".git", "config.yaml", "main.py"]
    assert (project / "config.yaml").read_text() == "mine: true\n"
    assert (project / "main.py").read_text() == "print('mine')\n"
    assert (project / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_fresh_force_archives_the_old_run_instead_of_deleting_it(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "again"
    first = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out))
    assert first.returncode == 0, first.stderr
    old_summary = (out / "summary.json").read_text()
    fresh = skillopt(
        tmp_path, "train", "--config", str(config), "--out", str(out), "--fresh", "--force"
    )
    assert fresh.returncode == 0, fresh.stderr
    (archive,) = [p for p in out.parent.iterdir() if p.name.startswith(".again.discarded-")]
    assert f"archived the discarded run as {archive}" in fresh.stderr
    assert (archive / "summary.json").read_text() == old_summary
    from core.run.directory import RUN_FILE_NAMES

    assert {p.name for p in archive.iterdir()} <= RUN_FILE_NAMES  # every file a run writes
    assert (out / "summary.json").exists()
    listed = skillopt(tmp_path, "runs", "--runs-dir", str(out.parent), "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["again"]


def test_a_finished_run_refuses_a_changed_set_instead_of_ignoring_it(tmp_path):
    config = write_config(tmp_path)
    out = str(tmp_path / "run")
    first = skillopt(tmp_path, "train", "--config", str(config), "--out", out)
    assert first.returncode == 0, first.stderr
    again = skillopt(tmp_path, "train", "--config", str(config), "--out", out)
    assert again.returncode == 0, again.stderr  # the same config shows the finished run
    changed = skillopt(
        tmp_path, "train", "--config", str(config), "--out", out, "--set", "train.batch_size=2"
    )
    assert changed.returncode == 2
    message = one_line_error(changed)
    assert "already finished" in message and "train.batch_size" in message
    assert "--fresh --force" in message
