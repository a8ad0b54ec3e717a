"""`skillopt integrations install|uninstall` on a temporary home: round trips leave it
byte-identical, replaced files are backed up, --dry-run writes nothing, and an agent's own
later edit of its config survives uninstall."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
ASSETS = ROOT / "skillopt_tui" / "integrations" / "assets"
PLUGIN = ROOT / "integrations" / "claude-code"


def skillopt(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillopt_tui", "integrations", *args, "--home", str(home)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip


def snapshot(home: Path) -> dict[str, tuple[bytes | None, int]]:
    out = {}
    for path in sorted(home.rglob("*")):
        mode = stat.S_IMODE(path.stat().st_mode)
        out[str(path.relative_to(home))] = (path.read_bytes() if path.is_file() else None, mode)
    return out


def populated_home(tmp_path: Path) -> Path:
    """A home that already has the agents' own config, including a hand-made skillopt entry."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    config = home / ".codex" / "config.toml"
    config.write_text(
        'model = "gpt-x"\n\n[mcp_servers.skillopt]\ncommand = "/old/skillopt"\n\n[tui]\nx = 1\n'
    )
    config.chmod(0o600)
    (home / ".claude.json").write_text(
        '{"numStartups": 3, "mcpServers": {"other": {"command": "o"}}}'
    )
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands" / "mine.md").write_text("my command\n")
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text(
        '{\r\n  "theme": "tokyo",\r\n  "mcp": {\r\n    "other": {"type": "local", "command": ["o"]}\r\n  }\r\n}\r\n'
    )
    (home / ".copilot").mkdir()
    (home / ".copilot" / "mcp-config.json").write_text('{"mcpServers": {}}')
    return home


@pytest.mark.parametrize("agent", ["codex", "claude-code", "opencode", "copilot"])
@pytest.mark.parametrize("start", ["empty", "populated"])
def test_round_trip_leaves_the_home_byte_identical(tmp_path, agent, start):
    home = populated_home(tmp_path) if start == "populated" else tmp_path / "home"
    home.mkdir(exist_ok=True)
    before = snapshot(home)
    installed = skillopt(home, "install", agent)
    assert installed.returncode == 0, installed.stderr
    assert snapshot(home) != before
    listed = skillopt(home, "list")
    assert re.search(rf"^{agent}\s+installed$", listed.stdout, re.MULTILINE)
    again = skillopt(home, "install", agent)  # idempotent: a second install changes nothing
    assert again.returncode == 0, again.stderr
    removed = skillopt(home, "uninstall", agent)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(home) == before


def test_codex_install_writes_the_skill_and_replaces_a_hand_made_entry(tmp_path):
    home = populated_home(tmp_path)
    original = (home / ".codex" / "config.toml").read_bytes()
    assert skillopt(home, "install", "codex").returncode == 0
    skill = home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md"
    assert skill.read_text() == (ASSETS / "skillopt-sleep" / "SKILL.md").read_text()
    text = (home / ".codex" / "config.toml").read_text()
    assert text.count("[mcp_servers.skillopt]") == 1 and "/old/skillopt" not in text
    assert 'model = "gpt-x"' in text and "[tui]" in text
    import tomllib

    entry = tomllib.loads(text)["mcp_servers"]["skillopt"]
    assert entry["args"] == ["mcp"] and Path(entry["command"]).name == "skillopt"
    backup = home / ".codex" / "config.toml.skillopt-backup"
    assert backup.read_bytes() == original


def test_installing_over_an_existing_skill_backs_it_up(tmp_path):
    home = tmp_path / "home"
    skill = home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("my own notes\n")
    dry = skillopt(home, "install", "codex", "--dry-run")
    assert f"replace   {skill}; back up to {skill}.skillopt-backup" in dry.stdout
    assert skillopt(home, "install", "codex").returncode == 0
    assert Path(f"{skill}.skillopt-backup").read_text() == "my own notes\n"
    assert skill.read_text().startswith("---\nname: skillopt-sleep\n")
    assert skillopt(home, "uninstall", "codex").returncode == 0
    assert skill.read_text() == "my own notes\n"
    assert not Path(f"{skill}.skillopt-backup").exists()


@pytest.mark.parametrize("agent", ["codex", "claude-code", "opencode", "copilot"])
def test_dry_run_names_every_file_and_writes_nothing(tmp_path, agent):
    home = populated_home(tmp_path)
    before = snapshot(home)
    dry = skillopt(home, "install", agent, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert snapshot(home) == before
    assert skillopt(home, "install", agent).returncode == 0
    after_install = snapshot(home)
    written = {
        p
        for p, (data, _) in after_install.items()
        if data is not None and before.get(p) != after_install[p]
    }
    for path in written:
        assert str(home / path) in dry.stdout, path
    dry_out = skillopt(home, "uninstall", agent, "--dry-run")
    assert snapshot(home) == after_install
    assert "restore" in dry_out.stdout and "remove" in dry_out.stdout


def test_uninstall_keeps_what_the_agent_wrote_after_install(tmp_path):
    home = populated_home(tmp_path)
    assert skillopt(home, "install", "claude-code").returncode == 0
    path = home / ".claude.json"
    data = json.loads(path.read_text())
    assert data["mcpServers"]["skillopt"]["args"] == ["mcp"]
    data["numStartups"] = 4  # Claude Code saved its state meanwhile
    path.write_text(json.dumps(data))
    assert skillopt(home, "uninstall", "claude-code").returncode == 0
    final = json.loads(path.read_text())
    assert final == {"numStartups": 4, "mcpServers": {"other": {"command": "o"}}}
    assert (home / ".claude" / "commands" / "mine.md").read_text() == "my command\n"
    assert not (home / ".claude" / "commands" / "skillopt-sleep.md").exists()


def test_unknown_agent_is_a_one_line_error(tmp_path):
    done = skillopt(tmp_path, "install", "vim")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "skillopt: error: unknown agent 'vim': choose one of claude-code, codex, opencode, copilot"
    )


def frontmatter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, f"{path}: no frontmatter"
    return yaml.safe_load(match.group(1))


@pytest.mark.parametrize(
    "path",
    [ASSETS / "skillopt-sleep" / "SKILL.md", PLUGIN / "skills" / "skillopt-sleep" / "SKILL.md"],
)
def test_skill_frontmatter_is_within_the_agent_skills_limits(path):
    meta = frontmatter(path)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"]) and len(meta["name"]) <= 64
    assert meta["name"] == path.parent.name  # the folder is named after the skill
    assert 0 < len(meta["description"]) <= 1024
    assert "<" not in meta["description"] and ">" not in meta["description"]


def test_the_plugin_ships_the_same_texts_as_the_installer():
    pairs = [
        ("skillopt-sleep/SKILL.md", "skills/skillopt-sleep/SKILL.md"),
        ("commands/skillopt-sleep.md", "commands/skillopt-sleep.md"),
        ("commands/skillopt-handoff.md", "commands/skillopt-handoff.md"),
    ]
    for asset, copy in pairs:
        assert (PLUGIN / copy).read_bytes() == (ASSETS / asset).read_bytes(), copy


def test_session_end_hook_only_appends_a_line(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    payload = '{"session_id": "abc", "reason": "exit",\n "cwd": "/p"}'
    for _ in range(2):
        subprocess.run(
            [str(PLUGIN / "hooks" / "session-end.sh")],
            input=payload,
            text=True,
            env=env,
            check=True,
        )
    log = tmp_path / ".local" / "state" / "skillopt" / "sleep" / "sessions-ended.log"
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    assert lines[0].split("\t")[1] == '{"session_id": "abc", "reason": "exit", "cwd": "/p"}'
    assert sorted(p.name for p in log.parent.iterdir()) == ["sessions-ended.log"]


@pytest.mark.parametrize(
    ("agent", "config", "parent", "skill"),
    [
        ("opencode", ".config/opencode/opencode.json", "mcp", ".config/opencode/skills"),
        ("copilot", ".copilot/mcp-config.json", "mcpServers", ".copilot/skills"),
    ],
)
def test_opencode_and_copilot_get_the_skill_and_our_server_only(
    tmp_path, agent, config, parent, skill
):
    home = populated_home(tmp_path)
    before = (home / config).read_bytes()
    done = skillopt(home, "install", agent)
    assert done.returncode == 0, done.stderr
    data = json.loads((home / config).read_text())
    ours = data[parent]["skillopt"]
    command = ours["command"][0] if agent == "opencode" else ours["command"]
    assert Path(command).name == "skillopt" and Path(command).is_absolute()
    assert (home / skill / "skillopt-sleep" / "SKILL.md").is_file()
    if agent == "opencode":  # the user's server, theme and CRLF stay as they were
        assert data["mcp"]["other"] == {"type": "local", "command": ["o"]}
        assert data["theme"] == "tokyo" and b"\r\n" in (home / config).read_bytes()
    assert skillopt(home, "uninstall", agent).returncode == 0
    assert (home / config).read_bytes() == before
