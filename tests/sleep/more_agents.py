"""The five other agents' stores in a private home, for the harvest tests: the committed
fixtures written by the real pi, OpenCode and Copilot CLIs (tests/sleep/fixtures/agents/
make_*.py) and hand-made VS Code Copilot Chat and Cursor stores in their documented
formats (no binary runs here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sleep.harvest.run import HarvestOptions, HarvestResult, harvest

REAL = Path(__file__).parent / "fixtures" / "real"
HANDMADE = Path(__file__).parent / "fixtures" / "handmade"
SECRET = "ghp_FIXTUREsecret0123456789abcdefghijklmnop"
PROJECT = "/home/dev/src/notes-app"


def expected(agent: str) -> dict:
    return json.loads((REAL / agent / "expected.json").read_text())


def redacted(prompt: str) -> str:
    return prompt.replace("<secret>", "[REDACTED:github_token]")


def home_with(tmp: Path, *agents: str) -> Path:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    if "pi" in agents:
        shutil.copytree(REAL / "pi" / "sessions", home / ".pi" / "agent" / "sessions")
    if "copilot" in agents:
        shutil.copytree(REAL / "copilot" / "session-state", home / ".copilot" / "session-state")
        shutil.copy(REAL / "copilot" / "session-store.db", home / ".copilot")
    if "opencode" in agents:
        data = home / ".local" / "share" / "opencode"
        data.mkdir(parents=True)
        shutil.copy(REAL / "opencode" / "opencode.db", data / "opencode.db")
    if "vscode" in agents:
        for name in ("Code", "Code - Insiders"):
            shutil.copytree(HANDMADE / "vscode" / name, home / ".config" / name)
    if "cursor" in agents:
        shutil.copytree(HANDMADE / "cursor", home / ".cursor")
    return home


def run(
    tmp: Path, home: Path, *, commit: bool = True, automation: bool = True, **kw
) -> HarvestResult:
    none = tmp / "absent"
    return harvest(
        HarvestOptions(
            state_dir=tmp / "state", claude_home=str(none), codex_home=str(none),
            include_automation=automation, commit=commit,
            environ={"HOME": str(home), "SKILLOPT_STATE_DIR": str(tmp / "ours")},
            home=home, **kw,
        )
    )  # fmt: skip


def mark_ours(tmp: Path, *session_ids: str) -> None:
    """Record sessions as started by our own backends (core.models.agents.process)."""
    folder = tmp / "ours"
    folder.mkdir(exist_ok=True)
    rows = [json.dumps({"agent": "test", "session_id": sid}) for sid in session_ids]
    (folder / "agent-sessions.jsonl").write_text("".join(r + "\n" for r in rows))


def texts(result: HarvestResult, source: str) -> list[list[str]]:
    return [[t.text for t in s.tasks] for s in result.sessions if s.source == source]
