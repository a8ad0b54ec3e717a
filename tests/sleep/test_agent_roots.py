"""Where the five other agents' homes are looked for: flag, then environment, then the
default, every candidate listed (found or not)."""

from __future__ import annotations

from pathlib import Path

from sleep.harvest.agent_roots import (
    copilot_root_paths,
    cursor_root_paths,
    opencode_db_paths,
    pi_root_paths,
    vscode_user_dirs,
)

HOME = Path("/home/u")


def test_defaults_without_environment():
    assert pi_root_paths(None, {}, HOME) == [HOME / ".pi" / "agent"]
    assert opencode_db_paths(None, {}, HOME) == [HOME / ".local/share/opencode/opencode.db"]
    assert copilot_root_paths(None, {}, HOME) == [HOME / ".copilot"]
    assert cursor_root_paths(None, {}, HOME) == [HOME / ".cursor"]
    assert vscode_user_dirs(None, {}, HOME) == [
        HOME / ".config" / "Code",
        HOME / ".config" / "Code - Insiders",
        HOME / "Library/Application Support/Code",
        HOME / "Library/Application Support/Code - Insiders",
    ]


def test_environment_then_flags():
    env = {
        "PI_CODING_AGENT_DIR": "/p",
        "XDG_DATA_HOME": "/data",
        "COPILOT_HOME": "/c",
        "XDG_CONFIG_HOME": "/cfg",
        "APPDATA": "/win",
        "VSCODE_PORTABLE": "/port",
    }
    assert pi_root_paths(None, env, HOME) == [Path("/p")]
    assert opencode_db_paths(None, env, HOME) == [Path("/data/opencode/opencode.db")]
    assert opencode_db_paths(None, {**env, "OPENCODE_DB": "/x/my.db"}, HOME) == [Path("/x/my.db")]
    assert copilot_root_paths(None, env, HOME) == [Path("/c")]
    dirs = vscode_user_dirs(None, env, HOME)
    assert dirs[:2] == [Path("/cfg/Code"), Path("/cfg/Code - Insiders")]
    assert Path("/win/Code") in dirs and dirs[-1] == Path("/port/user-data")
    # a flag wins, comma-separated for several; a folder or the db file itself
    assert pi_root_paths("/a,/b", env, HOME) == [Path("/a"), Path("/b")]
    assert opencode_db_paths("/d", env, HOME) == [Path("/d/opencode.db")]
    assert opencode_db_paths("/d/o.db", env, HOME) == [Path("/d/o.db")]
    assert vscode_user_dirs("/v", env, HOME) == [Path("/v")]
