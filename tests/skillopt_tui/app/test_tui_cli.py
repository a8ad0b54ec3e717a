"""`skillopt tui` bad input: one line on stderr, exit code 2, no traceback, no terminal UI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SKILLOPT = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "skillopt"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--run", "/nonexistent/run"], "--run /nonexistent/run: no such run directory"),
        (["--skills-repo", "/nonexistent/repo"], "--skills-repo /nonexistent/repo: no such"),
    ],
)
def test_bad_paths_are_one_line_errors(args, message):
    result = subprocess.run(
        [str(SKILLOPT), "tui", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_skills_repo_falls_back_to_env_then_local_skills(tmp_path, monkeypatch):
    from skillopt_tui.cli.tui_cmd import REPO_ENV, TuiUsageError, resolve_skills_repo

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(REPO_ENV, raising=False)
    assert resolve_skills_repo(None) is None  # nothing anywhere: runs only
    (tmp_path / "skills").mkdir()
    assert resolve_skills_repo(None) is None  # ./skills is not a skills repo
    (tmp_path / "skills" / "skills.yaml").write_text("version: 1\nskills: []\n")
    assert resolve_skills_repo(None) == Path("skills")
    (tmp_path / "other").mkdir()
    monkeypatch.setenv(REPO_ENV, str(tmp_path / "other"))
    assert resolve_skills_repo(None) == tmp_path / "other"
    assert resolve_skills_repo(tmp_path / "skills") == tmp_path / "skills"  # option wins
    monkeypatch.setenv(REPO_ENV, str(tmp_path / "missing"))
    with pytest.raises(TuiUsageError, match=REPO_ENV):
        resolve_skills_repo(None)
