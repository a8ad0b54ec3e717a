"""`skillopt tui` bad input: one line on stderr, exit code 2, no traceback, no terminal UI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SKILLOPT = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "skillopt"


@pytest.mark.parametrize("args, message", [
    (["--run", "/nonexistent/run"], "--run /nonexistent/run: no such run directory"),
    (["--skills-repo", "/nonexistent/repo"], "--skills-repo /nonexistent/repo: no such"),
])
def test_bad_paths_are_one_line_errors(args, message):
    result = subprocess.run([str(SKILLOPT), "tui", *args], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert "Traceback" not in result.stderr
