"""What `skillopt sleep status` (and the TUI's Sleep screen) report: the recorded
settings, whether a nightly line is scheduled, and the recent nights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.models.handoff import pending_prompts
from sleep.settings import load_settings

RECENT_NIGHTS = 10


def list_nights(state_dir: Path, limit: int = RECENT_NIGHTS) -> list[dict[str, Any]]:
    nights = []
    folders = sorted(
        (Path(state_dir) / "nights").glob("sleep-*"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for folder in folders[:limit]:
        try:
            data = json.loads((folder / "night.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if not _well_formed(data):  # `[]`, no `skills`, skills not by name: still listed
            data = {"night_id": folder.name, "status": "unreadable", "skills": {}}
        data["pending"] = len(pending_prompts(folder / "handoff"))
        nights.append(data)
    return nights


def _well_formed(data: Any) -> bool:
    skills = data.get("skills") if isinstance(data, dict) else None
    return (
        isinstance(skills, dict)
        and all(isinstance(v, dict) for v in skills.values())
        and isinstance(data.get("status"), str)
    )


def night_status(state_dir: Path, crontab_text: str | None = None) -> dict[str, Any]:
    from sleep.schedule import scheduled_line

    settings = load_settings(state_dir)
    line = scheduled_line(state_dir, crontab_text)
    return {
        "state_dir": str(state_dir),
        "settings": settings.model_dump(),
        "scheduled": line,
        "nights": list_nights(state_dir),
    }
