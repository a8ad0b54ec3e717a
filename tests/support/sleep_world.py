"""A Sleep world for the TUI tests: a private home with Claude Code and Codex transcripts
(our own made-up content in the recorded formats, tests/sleep/transcripts.py), a project
with its CLAUDE.md in a real skills repository, sleep.yaml as `skillopt sleep init` writes
it, and optionally a real night already run on the scripted TEST DOUBLE
(tests/sleep/night_double.py) — the same night `skillopt sleep run` runs.

Everything lives under the home folder, so with $HOME pointing there the screen shows
stable `~/…` paths (snapshots)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from core.config import load_config
from core.skills_repo import SkillsRepo
from sleep.harvest.run import HarvestOptions
from sleep.night.held_tasks import transcript_harvester
from sleep.night.run import Night
from sleep.state.settings import SleepSettings, load_settings, save_settings
from tests.sleep.night_double import INSTALL_PROMPT, parts_for
from tests.sleep.transcripts import (
    claude_assistant,
    claude_user,
    codex_meta,
    codex_prompt,
    jsonl,
    touch_in_order,
    write_claude,
    write_codex,
)

DAY = dt.date(2026, 11, 30)
BRAIN = "tests.sleep.night_double:brain"
SKILL_TEXT = "# Notes\n\nKeep answers short.\n"
SECRET_PROMPT = "deploy it with the key AKIAIOSFODNN7EXAMPLE to the staging bucket"
TRAIN = {
    "epochs": 1,
    "strategy": "llm",
    "gate": {"metric": "soft"},
    "schedule": {"kind": "constant", "start": 2, "end": 2},
    "slow_update": {"enabled": False},
    "meta_skill": {"enabled": False},
}


@dataclass
class SleepWorld:
    home: Path
    project: Path
    skills: Path
    state: Path
    config: Path

    @property
    def settings(self) -> SleepSettings:
        return load_settings(self.state)


def _session(
    project: Path,
    i: int,
    prompts: list[str],
    *,
    unanswered: bool = False,
    cwd=None,
    month: int = 11,
    **extra,
) -> list[dict]:
    session = str(uuid.UUID(int=i + 1))
    parent = None
    records = []
    for k, text in enumerate(prompts):
        record = claude_user(
            text,
            cwd=str(cwd or project),
            session=session,
            uuid=str(uuid.UUID(int=1000 * (i + 1) + k)),
            timestamp=f"2026-{month:02d}-{10 + i % 20:02d}T10:0{k}:00Z",
            parentUuid=parent,
            **extra,
        )
        records.append(record)
        if not (unanswered and k == len(prompts) - 2):  # answered by the next prompt: aborted
            reply = claude_assistant("done", cwd=str(cwd or project), session=session)
            reply["parentUuid"] = record["uuid"]
            records.append(reply)
            parent = reply["uuid"]
    return records


def session_prompts(part: str) -> list[str]:
    return [
        INSTALL_PROMPT.format(part=part),
        "no, use pnpm instead of npm",
        f"explain what the {part} module is for",
    ]


def write_later_sessions(world: SleepWorld, sessions: int = 8) -> None:
    """A second batch of Claude Code sessions in the project, a month of timestamps and a
    day of mtimes after write_transcripts' batch: the same tasks asked again, so the next
    night replays the first night's held-out tasks (paired by task id across nights)."""
    paths = []
    for i, part in enumerate(parts_for(world.project, sessions)):
        records = _session(world.project, 100 + i, session_prompts(part), month=12)
        paths.append(write_claude(world.home / ".claude", records, session=records[0]["sessionId"]))
    touch_in_order(paths, start=1_700_086_400)  # a day after the first batch


def write_transcripts(home: Path, project: Path, sessions: int = 8) -> None:
    claude, codex = home / ".claude", home / ".codex"
    paths = []
    for i, part in enumerate(parts_for(project, sessions)):
        prompts = session_prompts(part)
        if i == 0:
            prompts.append(SECRET_PROMPT)
        records = _session(project, i, prompts, unanswered=i == 0)
        paths.append(write_claude(claude, records, session=records[0]["sessionId"]))
    # a print-mode (automation) session, a session of another project, a sub-agent file
    auto = _session(project, 50, ["summarise the release notes"], entrypoint="sdk-cli")
    paths.append(write_claude(claude, auto, session=auto[0]["sessionId"]))
    other = _session(project, 60, ["how do I run the other tests?"], cwd=home / "src" / "other")
    paths.append(write_claude(claude, other, session=other[0]["sessionId"]))
    sub = paths[0].parent / "agent-0001.jsonl"
    sub.write_bytes(jsonl(_session(project, 70, ["sub-agent prompt"])))
    # a file that is not JSON Lines at all: reported as skipped, never fatal
    broken = paths[0].parent / f"{uuid.UUID(int=99)}.jsonl"
    broken.write_bytes(b"\xff\xfe not json\n{truncated")
    # one Codex session in the project
    thread = "019e0000-0000-7000-8000-000000000042"
    rollout = write_codex(
        codex,
        [codex_meta(thread, cwd=str(project)), *codex_prompt("list the make targets")],
        thread=thread,
    )
    touch_in_order([*paths, sub, broken, rollout])  # the harvest reads by mtime: fix it


def night_config(path: Path, backend: str = "scripted") -> Path:
    roles = {
        r: (
            {"backend": "scripted", "model": BRAIN}
            if backend == "scripted"
            else {"backend": backend}
        )
        for r in ("target", "optimizer", "judge", "miner")
    }
    path.write_text(json.dumps({"models": roles, "train": TRAIN}))
    return path


def make_world(root: Path, *, backend: str = "scripted") -> SleepWorld:
    """Transcripts, project, skills repo and sleep.yaml; no night yet."""
    home = root / "home"
    project = home / "src" / "notes-app"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    write_transcripts(home, project)
    skills = home / "skills"
    repo = SkillsRepo.init(skills)
    repo.add_skill("notes-app", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    state = home / ".local" / "state" / "skillopt" / "sleep"
    config = night_config(home / "night.yaml", backend)
    save_settings(
        state,
        SleepSettings(
            projects=[str(project)],
            skills_repo=str(skills),
            backend=backend,
            config=str(config),
            claude_home=str(home / ".claude"),
            codex_home=str(home / ".codex"),
            # parts_for guarantees two held-out tasks, not the default six: the gate's
            # minimum is a setting, lowered here (tests/sleep/test_held_out.py tests it)
            min_val_tasks=2,
        ),
    )
    return SleepWorld(home, project, skills, state, config)


def world_night(world: SleepWorld, day: dt.date = DAY) -> Night:
    """The night `skillopt sleep run` would run on this world, on the test double."""
    s = world.settings

    harvested = transcript_harvester(
        HarvestOptions(
            state_dir=world.state,
            project=world.project,
            claude_home=s.claude_home,
            codex_home=s.codex_home,
            include_automation=s.include_automation,
        )
    )

    return Night(
        state_dir=world.state,
        repo=SkillsRepo.open(world.skills),
        config=load_config(world.config, []),
        harvest=harvested,
        project=world.project,
        include_automation=s.include_automation,
        min_val_tasks=s.min_val_tasks,
        today=day,
    )


def run_night(world: SleepWorld, day: dt.date = DAY) -> dict:
    """A real night on the test double, in this process (as `skillopt sleep run` does)."""
    return asyncio.run(world_night(world, day).run()).to_dict()


# -- the transcripts the real CLIs wrote (tests/sleep/fixtures/make_real_transcripts.py) --
REAL_FIXTURE_HOME = "/home/dev"  # what the fixture script scrubbed the private home to
AGENTS_TEXT = "# Agent notes\n\nRun the tests before you finish.\n"


def real_cli_world(root: Path) -> SleepWorld:
    """The real Claude Code and Codex transcripts moved into a private home (the fixture
    script's scrubbing undone: its FIXTURE_HOME becomes this home, nothing else changes),
    their project with both a CLAUDE.md and an AGENTS.md, each a skill of a real skills
    repository deployed back where it was found, and sleep.yaml on the test double."""
    from tests.sleep.transcripts import REAL

    home = root / "home"
    for tool in ("claude", "codex"):
        for src in sorted((REAL / tool).rglob("*.jsonl")):
            dst = home / f".{tool}" / src.relative_to(REAL / tool)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(
                src.read_bytes().replace(REAL_FIXTURE_HOME.encode(), str(home).encode())
            )
    files = sorted((home / ".claude").rglob("*.jsonl"), key=lambda p: "e89635d4" in p.name)
    touch_in_order([*files, *sorted((home / ".codex").rglob("*.jsonl"))])
    project = home / "src" / "notes-app"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    (project / "AGENTS.md").write_text(AGENTS_TEXT)
    skills = home / "skills"
    repo = SkillsRepo.init(skills)
    repo.add_skill("notes-app", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    repo.add_skill("notes-app-agents", AGENTS_TEXT, deploy_to=str(project / "AGENTS.md"))
    state = home / ".local" / "state" / "skillopt" / "sleep"
    config = night_config(home / "night.yaml")
    save_settings(
        state,
        SleepSettings(
            projects=[str(project)],
            skills_repo=str(skills),
            backend="scripted",
            config=str(config),
            claude_home=str(home / ".claude"),
            codex_home=str(home / ".codex"),
            include_automation=True,  # the Codex transcripts are `codex exec` sessions
            min_val_tasks=1,  # the real CLIs' few tasks, not the default six held-out ones
        ),
    )
    return SleepWorld(home, project, skills, state, config)
