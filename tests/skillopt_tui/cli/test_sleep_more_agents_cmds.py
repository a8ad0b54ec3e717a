"""`skillopt sleep harvest` over the five other agents' stores, each given by its flag:
every source is listed with its files, sessions and skips, and no planted secret is shown."""

import json
import subprocess
import sys
from pathlib import Path

from tests.sleep.more_agents import SECRET, home_with

SKILLOPT = Path(sys.executable).parent / "skillopt"


def run(*args):
    return subprocess.run([str(SKILLOPT), *args], capture_output=True, text=True, timeout=60)


def flags(tmp_path):
    home = home_with(tmp_path, "pi", "opencode", "copilot", "vscode", "cursor")
    return [
        "--claude-home", str(tmp_path / "none"), "--codex-home", str(tmp_path / "none"),
        "--pi-home", str(home / ".pi" / "agent"),
        "--opencode-data", str(home / ".local" / "share" / "opencode"),
        "--copilot-home", str(home / ".copilot"),
        "--vscode-user-dir", f"{home / '.config' / 'Code'},{home / '.config' / 'Code - Insiders'}",
        "--cursor-home", str(home / ".cursor"),
        "--state-dir", str(tmp_path / "state"),
    ]  # fmt: skip


def test_harvest_lists_every_source_with_files_sessions_and_skips(tmp_path):
    out = run("sleep", "harvest", "--all-projects", "--include-automation", *flags(tmp_path))
    assert out.returncode == 0, out.stderr
    sources = [line for line in out.stdout.splitlines() if line.startswith("source ")]
    by_tool = {line.split()[1]: line.split(": ", 1)[1] for line in sources}
    assert by_tool["pi"] == "2 file(s), 2 with new tasks, 0 skipped"
    assert by_tool["opencode"] == "4 stored session(s), 3 with new tasks, 1 sub-agent, 0 skipped"
    assert by_tool["copilot"] == "2 file(s), 2 with new tasks, 0 skipped"
    assert by_tool["cursor"] == "1 file(s), 1 with new tasks, 0 skipped"
    assert [line.split()[1] for line in sources].count("vscode") == 2
    assert "(1 prompt(s) on abandoned branches, not tasks)" in out.stdout
    assert SECRET not in out.stdout + out.stderr


def test_harvest_json_has_sessions_of_each_source(tmp_path):
    out = run("sleep", "harvest", "--all-projects", "--json", *flags(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    got = sorted({s["source"] for s in data["sessions"]})
    assert got == ["copilot", "cursor", "opencode", "pi", "vscode"]
    (typed,) = [s for s in data["sessions"] if s["source"] == "opencode"]  # the TUI's
    assert len(typed["tasks"]) == 5
    assert SECRET not in out.stdout


def test_a_home_that_is_a_file_is_a_one_line_error(tmp_path):
    (tmp_path / "file").write_text("x")
    out = run("sleep", "harvest", "--all-projects", "--pi-home", str(tmp_path / "file"),
              "--state-dir", str(tmp_path / "state"))  # fmt: skip
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "--pi-home" in out.stderr and not (tmp_path / "state").exists()
