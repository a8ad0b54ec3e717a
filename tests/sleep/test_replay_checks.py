"""The command-check runner (sleep/night/replay_checks.py): each mined verification command runs
in the real bubblewrap jail over a workspace, within its time limit, its output's tail
clipped and redacted; without the jail none runs, and the results say so; a check cannot
write outside its workspace. Then how the results decide an item."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleep.night import replay_shell
from sleep.night.replay_checks import (
    MAX_TAIL_CHARS,
    CheckResult,
    decide,
    judge_section,
    missing_program,
    planned_checks,
    results_of,
    run_command_checks,
    trajectory_message,
)
from tests.support.jail import jail  # noqa: F401 - the fixture

MAKEFILE = "test:\n\tpython3 -m unittest -q test_calc\n"
TESTS = (
    "import unittest\nfrom calc import total\n\n"
    "class T(unittest.TestCase):\n"
    "    def test_skips_none(self):\n"
    "        self.assertEqual(total([1, None, 2]), 3)\n"
)


def workspace(tmp_path: Path, calc: str) -> Path:
    root = tmp_path / "ws"
    root.mkdir(parents=True)
    (root / "Makefile").write_text(MAKEFILE)
    (root / "test_calc.py").write_text(TESTS)
    (root / "calc.py").write_text(calc)
    return root


FIXED = "def total(xs):\n    return sum(x for x in xs if x is not None)\n"
BROKEN = "def total(xs):\n    return sum(xs)\n"


@pytest.mark.usefixtures("jail")
def test_make_test_passes_on_a_fixed_workspace_and_fails_on_a_broken_one(tmp_path):
    [passed] = run_command_checks(workspace(tmp_path / "a", FIXED), ["make test"], 60)
    assert (passed.status, passed.exit_code) == ("pass", 0)
    assert "OK" in passed.output
    [failed] = run_command_checks(workspace(tmp_path / "b", BROKEN), ["make test"], 60)
    assert failed.status == "fail" and failed.exit_code not in (0, None)
    assert "TypeError" in failed.output and "FAILED" in failed.line()


@pytest.mark.usefixtures("jail")
def test_a_check_past_its_time_limit_is_stopped_and_fails(tmp_path):
    # (what it printed before is kept, but on a loaded machine it may not have printed yet)
    [done] = run_command_checks(workspace(tmp_path, FIXED), ["echo started; sleep 60"], 1.0)
    assert done.status == "timeout" and done.exit_code is None
    assert "time limit" in done.line() and "stopped after 1s" in done.reason


@pytest.mark.usefixtures("jail")
def test_the_output_kept_is_its_clipped_tail_with_secrets_redacted(tmp_path):
    token = "ghp_" + "a1B2c3D4" * 5  # in the project's files, printed by the check
    root = workspace(tmp_path, FIXED)
    (root / ".env").write_text(f"GITHUB_TOKEN={token}\n")
    [done] = run_command_checks(root, ["seq 1 50000; cat .env; echo LAST LINE"], 60)
    assert done.status == "pass"
    assert done.output.startswith("[… output cut]\n")
    assert len(done.output) <= MAX_TAIL_CHARS + len("[… output cut]\n")
    assert done.output.endswith("LAST LINE") and "49999" in done.output
    assert token not in done.output and "[REDACTED:github_token]" in done.output
    assert token not in repr(trajectory_message([done]))


@pytest.mark.usefixtures("jail")
def test_a_check_cannot_write_outside_its_workspace(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = workspace(tmp_path, FIXED)
    results = run_command_checks(
        root,
        [f"touch {outside}/escaped", "touch ../escaped", "echo x > /etc/escaped", "touch kept"],
        60,
    )
    assert [r.status for r in results] == ["fail", "fail", "fail", "pass"]
    assert list(outside.iterdir()) == [] and not (root.parent / "escaped").exists()
    assert (root / "kept").exists()  # the workspace itself is writable


@pytest.mark.usefixtures("jail")
def test_a_program_the_jail_lacks_is_not_run_but_a_missing_script_fails(tmp_path):
    # A person's `python -m pytest` (python from pyenv or a venv in the home the jail
    # hides) cannot start there: counted as a failure it scored every replay 0, the
    # current skill's and the candidate's alike, so the gate never moved.
    root = workspace(tmp_path, FIXED)
    absent, script = run_command_checks(root, ["no-such-prog-4f2 -m pytest -q", "./t.sh"], 60)
    assert (absent.status, absent.exit_code) == ("not-run", 127)
    assert "`no-such-prog-4f2` is not found on this machine" in absent.reason
    assert absent.line().startswith("`no-such-prog-4f2 -m pytest -q`: not run (")
    assert decide([absent], judged_by_evidence=True).soft is None
    assert script.status == "fail"  # named by a path: the reply may have removed it


def test_only_exit_127_with_a_program_name_is_a_missing_program():
    assert missing_program(127, "/bin/sh: 1: python: not found\n") == "python"
    assert missing_program(127, "bash: line 1: tox: command not found") == "tox"
    assert missing_program(127, "/bin/sh: 1: ./t.sh: not found") == ""
    assert missing_program(1, "/bin/sh: 1: python: not found") == ""
    assert missing_program(127, "something else") == ""


def test_without_the_jail_no_check_runs_and_the_results_say_so(tmp_path, monkeypatch):
    monkeypatch.setattr(replay_shell, "jail_problem", lambda: "bubblewrap (bwrap) is not installed")
    root = workspace(tmp_path, FIXED)
    results = run_command_checks(root, ["touch ran-unconfined", "make test"], 60)
    assert [r.status for r in results] == ["not-run", "not-run"]
    assert all("bubblewrap (bwrap) is not installed" in r.reason for r in results)
    assert all("never run outside the jail" in r.reason for r in results)
    assert not (root / "ran-unconfined").exists()
    planned = planned_checks([{"kind": "command", "value": "make test"}], "tools")
    assert planned[0]["will_run"] is False and "not installed" in planned[0]["not_run_reason"]


def test_dry_run_says_which_checks_will_run(monkeypatch):
    monkeypatch.setattr(replay_shell, "jail_problem", lambda: "")
    checks = [{"kind": "command", "value": "make test"}, {"kind": "contains", "value": "pnpm"}]
    agent = planned_checks(checks, "agent")
    assert agent[0] == {
        "kind": "command",
        "value": "make test",
        "will_run": True,
        "not_run_reason": "",
    }
    assert agent[1] == {"kind": "contains", "value": "pnpm"}  # a reply check: always applied
    [chat, _] = planned_checks(checks, "chat")
    assert chat["will_run"] is False and "no workspace" in chat["not_run_reason"]


PASS = CheckResult("make test", "pass", 0, "OK")
FAIL = CheckResult("make test", "fail", 2, "1 failed")
TIMEOUT = CheckResult("pytest", "timeout", None, "", "stopped after 120s")
NOT_RUN = CheckResult("make test", "not-run", reason="bubblewrap (bwrap) is not installed")


def test_a_failed_or_timed_out_check_decides_the_item():
    assert decide([PASS, FAIL], judged_by_evidence=True).soft == 0.0
    assert decide([TIMEOUT], judged_by_evidence=False).soft == 0.0
    assert "hard fail" in decide([FAIL], judged_by_evidence=True).note


def test_passing_checks_decide_only_without_a_rubric_or_reference():
    assert decide([PASS], judged_by_evidence=True).soft is None  # evidence for the judge
    assert decide([PASS], judged_by_evidence=False).soft == 1.0
    # a check that could not run is no evidence either way
    assert decide([PASS, NOT_RUN], judged_by_evidence=False).soft is None
    assert decide([NOT_RUN], judged_by_evidence=False).soft is None
    assert decide([], judged_by_evidence=False) == decide([], judged_by_evidence=True)


def test_the_judge_reads_the_results_and_a_task_without_checks_changes_nothing():
    section = judge_section([FAIL, NOT_RUN])
    assert "`make test`: FAILED (exit 2)" in section and "1 failed" in section
    assert "not run (bubblewrap (bwrap) is not installed)" in section
    assert "hard fail" in section
    assert judge_section([]) == ""


def test_a_replay_that_ran_no_checks_leaves_them_not_run():
    [result] = results_of(None, ["make test"])
    assert result.status == "not-run" and "returned no workspace" in result.reason
    assert results_of([PASS], ["make test"]) == [PASS]
    assert results_of(None, []) == []


def test_dry_run_promises_no_check_to_a_mode_that_has_not_run_one(monkeypatch):
    monkeypatch.setattr(replay_shell, "jail_problem", lambda: "")
    for mode in ("chat", "skipped"):
        [check] = planned_checks([{"kind": "command", "value": "make test"}], mode)
        assert check["will_run"] is False and mode in check["not_run_reason"]
    # the handoff runner runs the task's check in the workspace the answerer worked in
    [check] = planned_checks([{"kind": "command", "value": "make test"}], "handoff-workspace")
    assert check["will_run"] is True


def project_with_venv(tmp_path: Path, makefile: str) -> Path:
    """A person's project whose `python` is its own virtualenv's (none on the jail's
    system PATH is named `python`), and whose Makefile's recipe calls it."""
    project = tmp_path / "project"
    project.mkdir()
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")],
                   check=True)  # fmt: skip
    (project / "Makefile").write_text(makefile)
    return project


@pytest.mark.usefixtures("jail")
def test_make_test_finds_the_python_its_recipe_calls(tmp_path):
    """Fails on the old code: the jail lent `make` (the program the command starts) but
    not the `python` its recipe runs: "python: not found", exit 2, scored as a failure."""
    project = project_with_venv(tmp_path, "test: calc\n\tpython -m unittest -q test_calc\n"
                                "calc:\n\t@python -c 'import calc'\n")  # fmt: skip
    root = workspace(tmp_path / "ws", FIXED)
    (root / "Makefile").write_text((project / "Makefile").read_text())
    [passed] = run_command_checks(root, ["make test"], 60, project)
    assert (passed.status, passed.exit_code) == ("pass", 0), passed.output
    assert "OK" in passed.output


@pytest.mark.usefixtures("jail")
def test_a_program_a_make_recipe_cannot_find_is_not_run_with_the_reason(tmp_path):
    """Fails on the old code: make's "No such file or directory" (exit 2) was a failure,
    scoring every replay 0 whatever its work."""
    root = workspace(tmp_path, FIXED)
    (root / "Makefile").write_text(
        "test:\n\tno-such-prog-4f2 -q\nlint:\n\tno-such-prog-4f2 x && true\n"
    )
    direct, shelled = run_command_checks(root, ["make test", "make lint"], 60, root)
    for result in (direct, shelled):
        assert result.status == "not-run", result
        assert "`no-such-prog-4f2` is not found on this machine" in result.reason
        assert decide([result], judged_by_evidence=True).soft is None


def test_make_reports_a_missing_program_two_ways():
    assert missing_program(2, "make: python: No such file or directory\n") == "python"
    shelled = "/bin/sh: 1: pytest: not found\nmake: *** [Makefile:2: test] Error 127\n"
    assert missing_program(2, shelled) == "pytest"
    assert missing_program(2, "make: *** [Makefile:2: test] Error 1\n") == ""


def test_the_programs_of_a_make_target_and_its_prerequisites(tmp_path):
    from sleep.night.check_toolchain import recipe_programs

    (tmp_path / "Makefile").write_text(
        "VAR := 1\n.PHONY: test\nall: build\n\tcc -o x x.c\n"
        "test: lint\n\t@python -m pytest -q\n\t$(MAKE) other\nlint:\n\t-ruff check .\n"
        "build:\n\tnpm run build\n"
    )
    assert recipe_programs("make test", tmp_path) == ["python", "ruff"]
    assert recipe_programs("make", tmp_path) == ["cc", "npm"]  # the default goal: all
    assert recipe_programs("pytest -q", tmp_path) == []
