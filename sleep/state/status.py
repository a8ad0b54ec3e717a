"""What `skillopt sleep status` (and the TUI's Sleep screen) report: the recorded
settings, whether a nightly line is scheduled, and the recent nights, each staged branch
with what became of it since (sleep/state/branch_state.py: read from the skills repository)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.models.handoff import pending_prompts
from sleep.state.branch_state import branch_states
from sleep.state.settings import load_settings

RECENT_NIGHTS = 10


def list_nights(
    state_dir: Path, limit: int = RECENT_NIGHTS, skills_repo: str | Path | None = None
) -> list[dict[str, Any]]:
    """The newest nights' night.json; each skill that staged a branch gets `branch_state`
    (staged, adopted, rolled back, rejected, gone) from `skills_repo` (default: the
    recorded one), when it can be read."""
    nights = []
    folders = sorted(
        (Path(state_dir) / "nights").glob("sleep-*"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for folder in folders[:limit]:
        try:
            data = json.loads((folder / "night.json").read_text(encoding="utf-8"))
        except FileNotFoundError:  # a dry run's miner prompts wait there for the night
            data = {"night_id": folder.name, "status": "planned", "skills": {}}
        except (OSError, ValueError):
            data = None
        if not _well_formed(data):  # `[]`, no `skills`, skills not by name: still listed
            data = {"night_id": folder.name, "status": "unreadable", "skills": {}}
        # A finished night's prompts wait for nothing: a re-run starts a new night.
        finished = data.get("status") == "finished"
        data["pending"] = 0 if finished else len(pending_prompts(folder / "handoff"))
        nights.append(data)
    _add_branch_states(state_dir, nights, skills_repo)
    return nights


def _well_formed(data: Any) -> bool:
    skills = data.get("skills") if isinstance(data, dict) else None
    return (
        isinstance(skills, dict)
        and all(isinstance(v, dict) for v in skills.values())
        and isinstance(data.get("status"), str)
    )


def _staged_outcomes(nights: list[dict[str, Any]]) -> list[dict[str, Any]]:
    skills = [n.get("skills") for n in nights]
    return [
        o
        for outcomes in skills
        if isinstance(outcomes, dict)
        for o in outcomes.values()
        if isinstance(o, dict) and isinstance(o.get("staged"), str)
    ]


def _add_branch_states(
    state_dir: Path, nights: list[dict[str, Any]], skills_repo: str | Path | None
) -> None:
    outcomes = _staged_outcomes(nights)
    if not outcomes:
        return
    if skills_repo is None:
        try:
            skills_repo = load_settings(state_dir).skills_repo
        except UserError:
            return
    states = branch_states(skills_repo, sorted({o["staged"] for o in outcomes}))
    for outcome in outcomes:
        if outcome["staged"] in states:
            outcome["branch_state"] = states[outcome["staged"]]


def night_status(state_dir: Path, crontab_text: str | None = None) -> dict[str, Any]:
    from sleep.state.schedule import scheduled_line

    settings = load_settings(state_dir)
    line = scheduled_line(state_dir, crontab_text)
    return {
        "state_dir": str(state_dir),
        "settings": settings.model_dump(),
        "scheduled": line,
        "nights": list_nights(state_dir, skills_repo=settings.skills_repo),
    }


def gate_line(skill: str, outcome: dict[str, Any]) -> str | None:
    """What a night's gate made of a skill, on one line for `sleep status`: held-out val
    before -> after, on how many items, the sign test's p (weak or not), the staged
    branch and how many edits the gate dropped. None for a skill the night did not gate."""
    before, after = outcome.get("baseline_val"), outcome.get("best_val")
    if not isinstance(before, int | float):
        return None
    after = after if isinstance(after, int | float) else before
    items = outcome.get("val")
    parts = [f"{skill}: val {before:.3f} -> {after:.3f}"]
    if isinstance(items, int):
        parts[0] += f" on {items} held-out item(s)"
    evidence = outcome.get("evidence")
    if isinstance(evidence, dict) and isinstance(evidence.get("p"), int | float):
        weak = " (weak)" if evidence.get("weak") else ""
        parts.append(
            f"{evidence.get('improved', 0)} improved / {evidence.get('regressed', 0)} "
            f"regressed, p={evidence['p']:.3g}{weak}"
        )
    staged = outcome.get("staged")
    parts.append(f"staged {staged}" if isinstance(staged, str) else "nothing staged")
    dropped = outcome.get("dropped_edits")
    if isinstance(dropped, list) and dropped:  # sleep/night/run.dropped_edits
        parts.append(f"{len(dropped)} edit(s) dropped (no held-out evidence of their own)")
    return ", ".join(parts)
