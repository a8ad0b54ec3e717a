"""A Sleep world on the transcripts the REAL `claude` and `codex` CLIs wrote
(tests/sleep/fixtures/real, made by tests/sleep/fixtures/make_real_transcripts.py), put
back where they came from: the fixture maker replaced its private home by FIXTURE_HOME,
and this puts a test's own home in its place (in the bytes and in Claude's folder name),
so the project the sessions ran in exists and a night can be run on them.

One interactive Claude Code session in the project with five typed prompts, one
`claude -p` and one `codex exec` session (automation, left out by default)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import config_from_dict
from core.skills_repo import SkillsRepo
from sleep.harvest.run import HarvestOptions
from sleep.night.held_tasks import transcript_harvester
from sleep.night.run import Night
from sleep.state.settings import SleepSettings, save_settings
from tests.sleep.transcripts import REAL, touch_in_order

FIXTURE_HOME = "/home/dev"
BRAIN = "tests.sleep.night_double:brain"
SKILL_TEXT = "# Notes app\n\nKeep answers short.\n"
TRAIN = {
    "epochs": 1,
    "strategy": "llm",
    "gate": {"metric": "soft"},
    "schedule": {"kind": "constant", "start": 2, "end": 2},
    "slow_update": {"enabled": False},
    "meta_skill": {"enabled": False},
}
INTERACTIVE = "91bbcae6-10d8-48d0-958e-3ba90ef9ead4"  # the session a person typed in


@dataclass
class RealWorld:
    home: Path
    project: Path
    skills: Path
    state: Path
    config: Path  # the night config recorded in sleep.yaml (the scripted TEST DOUBLE)

    @property
    def homes(self) -> list[str]:
        return ["--claude-home", str(self.home / ".claude"), "--codex-home", str(self.home / ".codex")]  # fmt: skip


def _encoded(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _copy_back(source: Path, dest: Path, home: Path) -> list[Path]:
    written = []
    for file in sorted(source.rglob("*.jsonl")):
        rel = str(file.relative_to(source)).replace(_encoded(FIXTURE_HOME), _encoded(str(home)))
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes().replace(FIXTURE_HOME.encode(), str(home).encode()))
        written.append(target)
    return written


def scripted_roles() -> dict[str, Any]:
    return {r: {"backend": "scripted", "model": BRAIN} for r in ("target", "optimizer", "judge")}


def openai_roles(base_url: str) -> dict[str, Any]:
    """Every role but the miner on an OpenAI-compatible server (loopback in tests)."""
    role = {"backend": "openai", "base_url": base_url, "model": "m", "max_retries": 0}
    return {r: {**role, "timeout_s": 30.0} for r in ("target", "optimizer", "judge")}


def night_config(roles: dict[str, Any]) -> dict[str, Any]:
    return {"models": roles, "train": TRAIN}


def _lay_out(root: Path, roles: dict[str, Any]) -> RealWorld:
    home = root / "home"
    claude = _copy_back(REAL / "claude", home / ".claude", home)
    codex = _copy_back(REAL / "codex", home / ".codex", home)
    by_name = {p.stem: p for p in claude}
    # the order the CLIs wrote them in: the interactive session first (the harvest reads by mtime)
    touch_in_order([by_name[INTERACTIVE], *[p for p in claude if p.stem != INTERACTIVE], *codex])
    project = home / "src" / "notes-app"
    project.mkdir(parents=True)  # where the interactive session ran
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    skills = root / "skills"
    SkillsRepo.init(skills).add_skill("notes-app", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    config = root / "night.json"
    config.write_text(json.dumps(night_config(roles)))
    state = root / "state"
    save_settings(
        state,
        SleepSettings(
            project=str(project),
            skills_repo=str(skills),
            backend="scripted",
            config=str(config),
            claude_home=str(home / ".claude"),
            codex_home=str(home / ".codex"),
            min_val_tasks=1,  # as real_night: five tasks give one or two held-out ones
        ),
    )
    return RealWorld(home, project, skills, state, config)


def make_real_world(root: Path, roles: dict[str, Any] | None = None) -> RealWorld:
    """The world under root/w<k>, for the first k whose five tasks split into at least
    one train and one val task (task ids, hence splits, depend on the project's path), so
    that a night on it always replays, learns and gates (it calls its models)."""
    for k in range(20):
        world = _lay_out(root / f"w{k}", roles or scripted_roles())
        dry_night = real_night(world, dt.date(2026, 12, 2), dry=True)
        routes = asyncio.run(dry_night.plan()).routes
        if routes and routes[0]["train"] and routes[0]["val"]:
            return world
    raise AssertionError("no project path gave both a train and a val task")


def real_night(
    world: RealWorld,
    day: dt.date,
    roles: dict[str, Any] | None = None,
    *,
    dry: bool = False,
    project: Path | None = None,
) -> Night:
    """The night `skillopt sleep run` builds for this world (or another `project` on the
    same state), on `day`."""
    project = project or world.project
    config = json.loads(world.config.read_text()) if roles is None else night_config(roles)
    harvester = transcript_harvester(
        HarvestOptions(
            state_dir=world.state,
            project=project,
            claude_home=str(world.home / ".claude"),
            codex_home=str(world.home / ".codex"),
            commit=not dry,
        )
    )
    return Night(
        state_dir=world.state,
        repo=SkillsRepo.open(world.skills),
        config=config_from_dict(config),
        harvest=harvester,
        project=project,
        today=day,
        dry=dry,
        # the real CLIs' five tasks give one held-out task or two, not the default six:
        # the gate's minimum is a setting, lowered here (tests/sleep/test_held_out.py)
        min_val_tasks=1,
    )


def frozen_tasks(night_folder: Path) -> dict[str, list[tuple[str, str]]]:
    """The night's tasks per split, as (id, intent) — what it replays and gates on."""
    skills = json.loads((night_folder / "tasks.json").read_text())["skills"]
    return {
        f"{skill}/{split}": sorted((t["id"], t["intent"]) for t in tasks)
        for skill, splits in skills.items()
        for split, tasks in splits.items()
    }
