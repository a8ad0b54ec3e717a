"""Issue 9, conventions a git user expects: help shows placeholders, not typer's type
labels; `skillopt skills ...` finds the skills repository it runs in (the current directory
or a parent, like git), then $SKILLOPT_SKILLS_REPO, then ./skills."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_in_process import run_main

REPO = Path(__file__).resolve().parents[3]
SKILLOPT = Path(sys.executable).parent / "skillopt"
COMMANDS = [
    ("train",), ("eval",), ("runs",), ("init",), ("tui",),
    ("skills", "list"), ("skills", "add"), ("skills", "stage"), ("skills", "log"),
    ("skills", "diff"), ("skills", "adopt"), ("skills", "reject"), ("skills", "rollback"),
    ("skills", "show"),
]  # fmt: skip


def _env(**env: str) -> dict[str, str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "120", **env}
    if "SKILLOPT_SKILLS_REPO" not in env:
        full_env.pop("SKILLOPT_SKILLS_REPO", None)
    return full_env


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SKILLOPT), *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_shows_placeholders_not_type_labels(tmp_path, command):
    # In this process (tests/support/cli_in_process.py): what help prints is not about the
    # process, and fourteen interpreter starts cost more than the help they printed.
    done = run_main([*command, "--help"], env=_env(), cwd=tmp_path, argv0=str(SKILLOPT))
    assert done.returncode == 0, done.stderr
    assert f"Usage: skillopt {' '.join(command)}" in done.stdout
    assert re.findall(r"<(?:bool|str|int|float|path|list\[\w+\])>", done.stdout) == []


def _init_with_a_skill(tmp_path: Path) -> Path:
    (tmp_path / "skill.md").write_text("Answer briefly.\n")
    assert run("init", "repo", cwd=tmp_path).returncode == 0
    return tmp_path / "repo"


def test_skills_commands_find_the_repo_they_run_in(tmp_path):
    repo = _init_with_a_skill(tmp_path)
    added = run("skills", "add", "brief", "--from", str(tmp_path / "skill.md"), cwd=repo)
    assert added.returncode == 0, added.stderr
    (repo / "brief").mkdir(exist_ok=True)
    listed = run("skills", "list", cwd=repo / "brief")  # a parent is the repo
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("brief\tbrief/SKILL.md")
    assert not (repo / "skills").exists()


def test_the_variable_then_dot_skills_come_after_the_enclosing_repo(tmp_path):
    repo = _init_with_a_skill(tmp_path)
    run("skills", "add", "brief", "--from", str(tmp_path / "skill.md"), cwd=repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    by_env = run("skills", "list", cwd=elsewhere, SKILLOPT_SKILLS_REPO=str(repo))
    assert by_env.returncode == 0 and by_env.stdout.startswith("brief\t"), by_env.stderr
    other = tmp_path / "other"
    assert run("init", str(other), cwd=tmp_path).returncode == 0
    inside = run("skills", "list", cwd=other, SKILLOPT_SKILLS_REPO=str(repo))
    assert inside.returncode == 0 and inside.stdout == ""  # the repo it runs in wins
    (elsewhere / "skills").mkdir()
    assert run("init", "skills", cwd=elsewhere).returncode == 0
    default = run("skills", "list", cwd=elsewhere)
    assert default.returncode == 0 and default.stdout == "", default.stderr


@pytest.mark.parametrize("group", ["sleep", "skills"])
def test_a_groups_command_list_shows_each_summary_as_one_sentence(group, tmp_path):
    """Wide enough that nothing wraps: each summary's first paragraph is on one row, never
    broken where its docstring broke a line."""
    import inspect

    from skillopt_tui.cli.main import _root_command

    shown = run(group, "--help", cwd=tmp_path, COLUMNS="400")
    assert shown.returncode == 0, shown.stderr
    rows = [" ".join(line.split()) for line in shown.stdout.splitlines()]
    commands = _root_command().commands[group].commands
    assert commands
    for name, command in commands.items():
        summary = " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split())
        assert any(summary in row for row in rows), (name, summary)
