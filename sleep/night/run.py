"""One Sleep night: harvest → mine → route → split → replay → judge → reflect → gate → stage.

Everything after the harvest is the engine's own loop (core.training.run_training) over a
`ReplayEnvironment` of mined tasks, one run per routed skill, staged through the skills
repository on `staged/<night-id>-<skill>`. So a night has the engine's guarantees: bounded
edits, a strict gate on val tasks only, atomic state, resume without repeating a paid call,
the usage ledger's caps. What this module adds is the night's own state:

    <state>/nights/<night-id>/night.json      status, per-skill results, staged branches
    <state>/nights/<night-id>/sessions.json   tonight's harvest, frozen before the cursors move
    <state>/nights/<night-id>/tasks.json      the tasks it replays, with their splits
    <state>/nights/<night-id>/<skill>/        an ordinary run directory (events.jsonl, ...)
    <state>/nights/<night-id>/checks/<skill>.jsonl  each replay's command checks (replay_checks)
    <state>/nights/<night-id>/handoff/        prompt and answer files (handoff backend),
                                              and workspaces/ for agentic tasks
    <state>/tasks.json                        the mined-task archive across nights
    <state>/carried-sessions.json             sessions of failed nights closed, for the next
    <state>/night.lock                        one night at a time

A night that is stopped (budget, interrupt) or waiting for handoff answers keeps its id
and its frozen tasks: the next run continues it, on any day. A backend failure fails the
night loudly and stages nothing for the skill it hit; a re-run the same day retries it,
and a later day's night closes it and takes up its tasks (sleep/night/held_tasks.py). A
finished night's id is never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_json
from core.config import AGENT_BACKENDS, Config
from core.errors import UserError
from core.file_lock import FileLock
from core.models.factory import build_model_client
from core.models.handoff import HandoffWaiting, pending_prompts, waiting_summary
from core.models.types import ModelError
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.run.staging import StagedCandidate
from core.sign_test import sign_test_p
from core.skill.edits import Edit
from core.skills_repo import SkillsRepo
from core.skills_repo.repo_stager import SkillsRepoStager
from core.training.check_flips import CheckFlips
from core.training.setup import build_client_with_budget_events
from core.training.trainer import run_training
from sleep.harvest.cursors import HarvestState
from sleep.harvest.run import STATE_FILE
from sleep.mine.heuristic import mine_sessions
from sleep.mine.interrupted import describe_interrupted, interrupted_left_out, still_left_out
from sleep.mine.preferences import (
    Preference,
    assign_preferences,
    group_preferences,
    named_needs,
)
from sleep.mine.tasks import MinedTask, TaskArchive, task_listing
from sleep.mine.with_model import (
    HEURISTIC,
    mine_with_model,
    mined_by_model,
    uses_model_miner,
)

# handoff_answers masks secrets in handoff answers; handoff_workspace registers the
# handoff-workspace replay (sleep/night/replay_modes.py) when imported.
from sleep.night import (
    handoff_answers,  # noqa: F401 - registers itself when imported
    handoff_workspace,  # noqa: F401 - registers itself when imported
)
from sleep.night.check_origins import check_origins
from sleep.night.edit_trace import (
    EditTrace,
    corrected_words,
    fact_flag,
    project_files,
    trace_edits,
    trace_notes,
    trace_trailers,
)
from sleep.night.edited_tree import start_commit
from sleep.night.held_out import (
    NO_OCCURRENCE,
    GatedRecord,
    gate_roles,
    gate_signature,
    held_out_occurrences,
    night_splits,
    preference_tasks,
    preferences_by_task,
    waiting_for_val,
    waiting_preferences,
)
from sleep.night.held_tasks import (
    CarryArchive,
    Harvested,
    Harvester,
    carried,
    close_failed_nights,
    freeze,
    frozen,
    open_night,
    read_frozen,
    read_json,
    with_carried,
)
from sleep.night.known_preferences import in_project, known_preferences
from sleep.night.lacked_inputs import left_out_line, left_out_of_analysis
from sleep.night.preference_gate import PreferenceGate
from sleep.night.replay_checks import DEFAULT_CHECK_TIMEOUT_S, planned_checks, tally
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from sleep.night.replay_modes import (
    WORKSPACE_MODES,
    replay_at_night,
    replay_mode,
    replayable,
    workspace_runner,
)
from sleep.night.replay_tools import ToolReplay, skill_path_for
from sleep.night.routing import BY_SIBLING, Route, plan_routes, readers, sibling_files
from sleep.night.split_scheme import Resplit, pinned_splits, resplit_once, trained_pins
from sleep.night.staged_branch import holding_branch
from sleep.night.unlanded_edits import unlanded_edits, unlanded_line
from sleep.state.settings import DEFAULT_MAX_VAL_TASKS, DEFAULT_MIN_VAL_TASKS
from sleep.state.state_dir import check_state_dir


class NightBusy(UserError):
    """Another night holds the lock."""


@dataclass
class NightPlan:
    """What a night will do, before it spends anything (also `dry-run`'s answer)."""

    night_id: str
    sessions: int
    automation_skipped: int
    routes: list[dict[str, Any]] = field(default_factory=list)
    # The sessions routing left out: {session, source, reason} (sleep/night/routing.py), and the
    # requests the person interrupted: {session, source, reason, prompt} (sleep/mine/interrupted.py).
    left_out: list[dict[str, str]] = field(default_factory=list)
    # The status of the open night tonight continues on its frozen tasks (None: a new one).
    continues: str | None = None
    # What the person keeps asking for across sessions (sleep/mine/preferences.py), most
    # often said first, tonight's and earlier nights' (sleep/night/known_preferences.py):
    # {id, text, name, need?, project, occurrences: [{task, session, agent, date}]}.
    preferences: list[dict[str, Any]] = field(default_factory=list)
    # "heuristic", or "heuristic+<backend>:<model>" when the miner model mined too (None:
    # the night continues on frozen tasks, mined by an earlier round).
    mined_by: str | None = None


@dataclass
class NightResult:
    night_id: str
    status: str  # finished | waiting | stopped | failed
    folder: Path
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)
    message: str = ""
    pending: int = 0  # handoff prompts waiting for answers
    # The sessions routing left out: {session, source, reason} (sleep/night/routing.py), and the
    # requests the person interrupted: {session, source, reason, prompt} (sleep/mine/interrupted.py).
    left_out: list[dict[str, str]] = field(default_factory=list)
    # The night that split the stored tasks again for a new split scheme says what moved
    # and what kept its old split (sleep/night/split_scheme.py); {} on every other night.
    resplit: dict[str, Any] = field(default_factory=dict)
    mined_by: str | None = None  # as NightPlan's (None: continued on frozen tasks)
    # The project's preferences so far, from the task archive (as NightPlan's, with their
    # project): what the person keeps correcting, readable after the night.
    preferences: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["folder"] = str(self.folder)
        return data


BY_STORED = "stored tasks, gated again (their split or the gate's settings changed)"
WEAK_EVIDENCE_P = 0.1  # a staged candidate whose sign-test p is above this is weak


class NightStager:
    """Adds the night's evidence to each candidate: routing, night id,
    `Evidence-Strength: weak` when its sign-test p is above WEAK_EVIDENCE_P, and edit by
    edit the preference it addresses with the sessions (agent, date) it was corrected in
    (sleep/night/edit_trace.py); `Source-Sessions` are those sessions, not all of the
    night's. Keeps what it staged for the night's result."""

    def __init__(
        self,
        inner: SkillsRepoStager,
        sessions: list[str],
        trailers: dict[str, str],
        preferences: list[Preference] | None = None,
        files: frozenset[str] = frozenset(),
        corrected: dict[str, str] | None = None,
        gate: PreferenceGate | None = None,
    ):
        self.inner = inner
        self.gate = gate  # says why each staged edit was kept (night.json)
        self.sessions = sessions
        self.trailers = trailers
        self.base = inner.base
        self.preferences = preferences or []
        self.files = files
        self.corrected = corrected or {}
        self.staged: list[StagedCandidate] = []
        self.traces: list[EditTrace] = []

    def stage(self, candidate: StagedCandidate) -> str:
        p = sign_test_p(candidate.items_improved, candidate.items_regressed)
        extra = {"Evidence-Strength": "weak"} if p > WEAK_EVIDENCE_P else {}
        self.traces = trace_edits(candidate.edits, self.preferences, self.corrected, self.files)
        traced = list(dict.fromkeys(s for t in self.traces for s in t.session_ids))
        staged = dataclasses.replace(
            candidate,
            source_sessions=traced or self.sessions,
            trailers={
                **candidate.trailers,
                **self.trailers,
                **extra,
                **trace_trailers(self.traces),
            },
            notes="\n".join(
                filter(None, [candidate.notes, "\n" + trace_notes(self.traces) if traced else ""])
            ),
        )
        self.staged.append(staged)
        return self.inner.stage(staged)

    def evidence(self) -> dict[str, Any] | None:
        """What the night's result says of its last staged candidate: the sign test's p,
        whether that is weak, the items that moved, each edit's trace and the
        preferences its edits address."""
        if not self.staged:
            return None
        last = self.staged[-1]
        p = sign_test_p(last.items_improved, last.items_regressed)
        addressed = {pref.id: pref for t in self.traces for pref in t.preferences}
        return {
            "p": p,
            "weak": p > WEAK_EVIDENCE_P,
            "improved": last.items_improved,
            "regressed": last.items_regressed,
            "val_items": last.val_items,
            "moved": last.moved,
            "edits": [
                {**t.to_dict(), **self._kept_because(last, t.index - 1)} for t in self.traces
            ],
            "preferences": [
                {"id": pref.id, "text": pref.text, "name": pref.name, "sessions": pref.sessions}
                for pref in addressed.values()
            ],
        }

    def _kept_because(self, staged: StagedCandidate, index: int) -> dict[str, str]:
        """Why the gate kept the staged candidate's edit at `index`: the held-out
        occurrences of its preferences that went from failing to passing."""
        if self.gate is None or index >= len(staged.edits):
            return {}
        before = {str(m["id"]): float(m["before"]) for m in staged.moved}
        after = {str(m["id"]): float(m["after"]) for m in staged.moved}
        flips = {str(m["id"]): CheckFlips.from_dict(m.get("checks_flipped")) for m in staged.moved}
        edit = Edit.from_dict(dict(staged.edits[index]))
        return {"kept_because": self.gate.kept_because(edit, before, after, flips)}


def night_folder(
    state_dir: Path, day: dt.date, project: Path | None = None, label: str | None = None
) -> tuple[str, Path]:
    """The project's night a run continues (sleep/night_tasks.open_night), else a new one:
    today's id unless that night is over, then -2, -3, ... With a label (the project's,
    sleep/night/projects.py) each project keeps nights of its own."""
    nights = Path(state_dir) / "nights"
    folder = open_night(nights, day, _str(project))
    if folder is not None:
        return folder.name, folder
    base = f"sleep-{day.isoformat()}" + (f"-{label}" if label else "")
    for n in range(1, 1000):
        night_id = base if n == 1 else f"{base}-{n}"
        folder = nights / night_id
        if not (folder / "night.json").exists():
            return night_id, folder
    raise UserError(f"{nights}: more than 999 nights today; remove old ones")


def session_ids(sessions: list[dict[str, Any]]) -> list[str]:
    return [f"{s.get('source', '?')}:{s.get('session_id', '?')}" for s in sessions]


@dataclass
class Night:
    """One night's inputs. `config` is the night's run config (models, budget, train
    settings from sleep/night.yaml or the user's); `harvest` reads tonight's sessions,
    hands them to the freeze callback it is given before it moves any cursor, and returns
    them (called once per night; sleep/night_tasks.transcript_harvester)."""

    state_dir: Path
    repo: SkillsRepo
    config: Config
    harvest: Harvester
    project: Path | None = None
    skill: str | None = None
    val_fraction: float = 0.3
    test_fraction: float = 0.0
    max_tasks: int = 40
    pass_mark: float = 0.7
    check_timeout_s: float = DEFAULT_CHECK_TIMEOUT_S  # each command check's time limit
    min_val_tasks: int = DEFAULT_MIN_VAL_TASKS  # the gate's minimum (sleep/night/held_out.py)
    max_val_tasks: int = DEFAULT_MAX_VAL_TASKS
    include_automation: bool = False
    auto_adopt: bool = False
    batch: str = "off"  # sleep.batch: run.batch for the night's runs; off = the config's
    today: dt.date = field(default_factory=dt.date.today)
    label: str | None = None  # the project's name in night ids and staged branches
    on_line: Callable[[str], None] = lambda _line: None
    # A dry run plans without writing anything: no saved harvest, no archive, no night
    # folder; only the miner model's replies (the response cache) and, under handoff,
    # its prompts, which the night then finds answered.
    dry: bool = False
    heuristic_only: bool = False  # mine with the heuristic alone (`dry-run --heuristic-only`)
    # How tonight's tasks were mined (`_mine`; None until they are).
    mined_by: str | None = field(default=None, init=False)
    # The need names the miner model gave so far (the archive's, then tonight's routes').
    _needs: list[str] | None = field(default=None, init=False, repr=False)
    _harvested: Harvested | None = field(default=None, init=False, repr=False)
    _routed: list[tuple[Route, dict[str, list[MinedTask]]]] | None = field(
        default=None, init=False, repr=False
    )
    # The skills' outcomes the night's last round saved (night.json), read when it runs.
    _before: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    # The project's main instruction files, each with the set it learns from (routing).
    _siblings: dict[str, set[str]] = field(default_factory=dict, init=False, repr=False)
    # The sessions tonight's routing left out (set when the night routes its sessions).
    left_out: list[dict[str, str]] = field(default_factory=list, init=False, repr=False)
    # The stored tasks that keep an older split scheme's split (sleep/night/split_scheme.py).
    resplit: Resplit = field(default_factory=Resplit, init=False, repr=False)
    # How the round that mined tonight's frozen tasks mined them (night.json `mined_by`).
    _mined_before: str | None = field(default=None, init=False, repr=False)
    # The stored tasks an earlier night trained on: never held out (split_scheme.py).
    _trained: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    # each skill's tasks before its split (its family's): what a waiting message counts
    _learned_from: dict[str, list[MinedTask]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.state_dir = Path(self.state_dir)
        self.night_id, self.folder = night_folder(
            self.state_dir, self.today, self.project, self.label
        )
        self.check_frozen()

    # -- inputs, frozen per night -------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        return self.harvested().sessions

    def harvested(self) -> Harvested:
        """Tonight's input: the open night's frozen harvest, else the carried sessions of
        closed nights plus a new harvest, frozen in the night's folder before the harvest
        moves its cursors (a dry run freezes nothing and moves nothing)."""
        if self._harvested is not None:
            return self._harvested
        self._harvested = frozen(self.folder)
        if self._harvested is not None:
            return self._harvested
        carry = carried(self.state_dir, self.today, _str(self.project))

        def freeze_tonight(harvested: Harvested) -> None:
            self._harvested = with_carried(harvested, carry)
            if not self.dry:
                freeze(self.folder, self._harvested)

        read = self.harvest(freeze_tonight)
        if self._harvested is None:  # the harvester moved no cursor (a preview)
            freeze_tonight(read)
        if carry and not self.dry:  # now held by this night's frozen sessions
            CarryArchive(self.state_dir).drop(list(carry))
        assert self._harvested is not None
        return self._harvested

    async def routed_tasks(
        self, sessions: list[dict[str, Any]]
    ) -> list[tuple[Route, dict[str, list[MinedTask]]]]:
        """Tonight's sessions routed, mined and split — once per night object (a dry run
        plans and then estimates on the same tasks without mining twice)."""
        if self._routed is None:
            self._routed = await self._route_and_mine(sessions)
        return self._routed

    async def _route_and_mine(
        self, sessions: list[dict[str, Any]]
    ) -> list[tuple[Route, dict[str, list[MinedTask]]]]:
        saved = self.folder / "tasks.json"
        considered = [s for s in sessions if self.include_automation or not s.get("automation")]
        routing = plan_routes(
            considered, self.repo.list_skills(), project=self.project, forced=self.skill
        )
        stopped = interrupted_left_out(considered)
        self.left_out = routing.left_out + stopped  # until mined (the miner may take one up)
        for line in routing.describe_left_out():
            self.on_line(line)
        routes = routing.routes
        if saved.exists():
            frozen = read_frozen(saved, "skills")
            by_skill = {r.skill: r for r in routes}
            entries = {e.name: e for e in self.repo.list_skills()}
            for name in frozen:  # a skill gated again on its stored tasks has no sessions
                if name not in by_skill and name in entries:
                    by_skill[name] = Route(name, [BY_STORED], agents=readers(entries[name]))
            out = [
                (by_skill[name], {k: [MinedTask.from_dict(t) for t in v] for k, v in f.items()})
                for name, f in frozen.items()
                if name in by_skill
            ]
            tasks = [t for _route, splits in out for held in splits.values() for t in held]
            self._left_out_interrupted(routing.left_out, stopped, tasks)
            return out
        archive = TaskArchive(self.state_dir / "tasks.json")
        stored = archive.load()  # read once: the re-split, the miner's names and the merge
        self.resplit = resplit_once(  # before tonight's tasks join the stored ones
            self.state_dir, stored, val_fraction=self.val_fraction,
            test_fraction=self.test_fraction, write=not self.dry,
        )  # fmt: skip
        if self.resplit.now:
            self.on_line(self.resplit.line())
        self._trained = trained_pins(self.state_dir)
        mined_all: list[MinedTask] = []
        for route in routes:
            mined = await self._mine(route.sessions, stored)
            for task in mined:
                task.skill = route.skill
            mined_all += mined
        self._left_out_interrupted(routing.left_out, stopped, mined_all)
        known = archive.merge(mined_all, write=not self.dry, stored=stored)
        assign_preferences(list(known.values()))  # grouped across nights
        entries = {e.name: e for e in self.repo.list_skills()}
        self._siblings = {} if self.skill else sibling_files(list(entries.values()), self.project)
        routed = {r.skill for r in routes}
        routes = routes + [  # a need learned from one agent, proposed to the other's file
            Route(name, [BY_SIBLING], agents=readers(entries[name]))
            for name in sorted(self._siblings)
            if name not in routed and self._siblings[name] & routed
        ]
        out = [(route, self._splits(route, known)) for route in routes]
        out += self._stored_routes(archive, {r.skill for r in routes})
        if not self.dry:
            frozen = {r.skill: {k: [t.to_dict() for t in v] for k, v in s.items()} for r, s in out}
            write_json(saved, {"skills": frozen})
        return out

    def _left_out_interrupted(
        self,
        routed_out: list[dict[str, str]],
        stopped: list[dict[str, str]],
        tasks: list[MinedTask],
    ) -> None:
        """The interrupted requests left out once mined, said on the console: not one the
        miner model made a task of (it read what followed as what the person wanted)."""
        stopped = still_left_out(stopped, tasks)
        self.left_out = routed_out + stopped
        for line in describe_interrupted(stopped):
            self.on_line(line)

    def _splits(self, route: Route, known: dict[str, MinedTask]) -> dict[str, list[MinedTask]]:
        """The route's tasks of the archive `known` (this project), split for tonight. It
        learns from its own tasks and, for a project's CLAUDE.md or AGENTS.md, from the
        other main file's too (a need is the person's, whichever agent they corrected);
        it is gated and tested only on tasks of agents that read it."""
        family = self._siblings.get(route.skill, {route.skill})
        tasks = [
            t
            for t in known.values()
            if t.skill in family
            and in_project(t.project, self.project)
            and (t.skill == route.skill or len(family) > 1)
        ]
        self._learned_from[route.skill] = tasks
        splits = night_splits(
            tasks,
            max_tasks=self.max_tasks,
            max_val_tasks=self.max_val_tasks,
            val_fraction=self.val_fraction,
            test_fraction=self.test_fraction,
            pinned={**self._trained, **self.resplit.pinned},
            gated_by=self._gated_by(family) if len(family) > 1 else None,
        )
        return {
            split: [t for t in held if route.accepts(t.source_sessions) or split == "train"]
            if len(family) > 1
            else [t for t in held if route.accepts(t.source_sessions)]
            for split, held in splits.items()
        }

    def _waiting(self, route: Route, splits: dict[str, list[MinedTask]]) -> list[Preference]:
        """The preferences of this skill's tasks with none of their occurrences held out
        for it, counted over every task it learns from (the other file's too)."""
        mine = {t.id for tasks in splits.values() for t in tasks}
        every = self._learned_from.get(route.skill) or [t for s in splits.values() for t in s]
        held = [t.id for t in splits["val"]]
        return [p for p in waiting_preferences(every, held) if mine & set(preference_tasks(p))]

    def _gated_by(self, family: set[str]) -> Callable[[MinedTask], tuple[str, ...]]:
        """Which of the sibling files gate on a task (the agents that read each): every
        file of the family computes the same splits, each with its own held-out
        occurrence of a preference (sleep/night/held_out.preference_splits)."""
        entries = {e.name: e for e in self.repo.list_skills()}
        routes = [Route(n, agents=readers(entries[n])) for n in sorted(family) if n in entries]
        return lambda task: tuple(r.skill for r in routes if r.accepts(task.source_sessions))

    def _stored_routes(
        self, archive: TaskArchive, routed: set[str]
    ) -> list[tuple[Route, dict[str, list[MinedTask]]]]:
        """Skills no session reached tonight whose stored tasks gate differently than when
        a night last ran them (their split, or a setting the gate reads, changed: a lowered
        `min_val_tasks`, a new pass mark): those are gated again on the stored tasks, so a
        changed setting acts without waiting for new sessions."""
        if self.skill is not None and self.skill in routed:
            return []
        known = archive.load()
        gated = GatedRecord(self.state_dir)
        out = []
        for entry in self.repo.list_skills():
            if entry.name in routed or (self.skill is not None and entry.name != self.skill):
                continue
            route = Route(entry.name, [BY_STORED], agents=readers(entry))
            splits = self._splits(route, known)
            if not splits["val"] or not splits["train"]:
                continue
            if gated.get(self._gate_key(entry.name)) in (None, self._signature(splits)):
                continue  # never gated here (its sessions route it), or nothing changed
            out.append((route, splits))
        return out

    def _gate_key(self, skill: str) -> str:
        return f"{_str(self.project) or ''}|{skill}"

    def _signature(self, splits: dict[str, list[MinedTask]]) -> str:
        return gate_signature(
            splits,
            {
                "min_val_tasks": self.min_val_tasks,
                "max_val_tasks": self.max_val_tasks,
                "pass_mark": self.pass_mark,
                "max_tasks": self.max_tasks,
            },
        )

    async def _mine(
        self, sessions: list[dict[str, Any]], stored: Mapping[str, MinedTask]
    ) -> list[MinedTask]:
        """The heuristic, then the miner model wherever one capable of it is configured
        (sleep/mine/with_model.uses_model_miner), in a dry run too, so the plan shows the
        tasks the night will replay; its replies are kept in the state dir's response
        cache (keyed by the request's hash), so the night after a dry run repays nothing.
        `heuristic_only` (`dry-run --heuristic-only`) keeps a dry run free."""
        miner = self.config.models.miner
        if self.heuristic_only or not uses_model_miner(miner, self.config.models.env_file):
            self._say_mined_by(HEURISTIC)
            return mine_sessions(sessions, include_automation=self.include_automation)
        if self._needs is None:  # the names the model gave before, so it reuses them
            self._needs = named_needs(stored.values())
        client = build_model_client(self.run_config(1, False))
        runtime = client.runtime("miner")
        self._say_mined_by(mined_by_model(runtime.kind, runtime.model))
        try:
            return await mine_with_model(
                sessions,
                client.bind("miner"),
                include_automation=self.include_automation,
                needs=self._needs,
            )
        finally:
            await client.aclose()

    def _mined(self) -> str | None:
        """How tonight's tasks were mined: by this round, else by the round that mined
        them (a resumed night continues on its frozen tasks and mines nothing)."""
        return self.mined_by or self._mined_before

    def _say_mined_by(self, how: str) -> None:
        if self.mined_by != how:
            self.on_line(f"mined by {how}")
        self.mined_by = how

    async def plan(self) -> NightPlan:
        harvested = self.harvested()
        sessions = harvested.sessions
        delivered = (
            0 if self.include_automation else sum(1 for s in sessions if s.get("automation"))
        )
        plan = NightPlan(
            night_id=self.night_id,
            sessions=len(sessions),
            automation_skipped=harvested.automation_skipped + delivered,
            continues=read_json(self.folder / "night.json").get("status"),
        )
        routed = await self.routed_tasks(sessions)
        plan.left_out = self.left_out
        plan.mined_by = self.mined_by
        planned = [t for _route, splits in routed for tasks in splits.values() for t in tasks]
        plan.preferences = known_preferences(self.state_dir, self.project, planned)
        backend = self.config.models.target.backend
        for route, splits in routed:
            kept = replayable(splits, backend, lambda _task, _why: None)
            # why the night would gate nothing for this skill yet (None: it gates, or it
            # lacks train or val tasks altogether, which the night reports as before)
            waiting = (
                waiting_for_val(len(kept["val"]), self.min_val_tasks, self._waiting(route, splits))
                if kept["train"] and kept["val"]
                else None
            )
            plan.routes.append(
                {
                    "skill": route.skill,
                    "routed_by": route.routed_by,
                    "sessions": len(route.sessions),
                    **{split: len(tasks) for split, tasks in splits.items()},
                    "waiting_for_val": waiting,
                    "tasks": planned_tasks(
                        splits,
                        str(route.routed_by),
                        self.config.models.target.backend,
                        Path(self.project) if self.project else None,
                    ),
                }
            )
        return plan

    # -- the night ----------------------------------------------------------------------
    def check_frozen(self) -> None:
        """The inputs a resumed night reuses, checked when the night is made (before it
        takes the lock or writes): a malformed one is one line and leaves it as it was."""
        for name, key in (("sessions.json", "sessions"), ("tasks.json", "skills")):
            if (self.folder / name).exists():
                read_frozen(self.folder / name, key)
        # The state the night reads later, checked now too, before anything is written.
        HarvestState.load(self.state_dir / STATE_FILE)
        TaskArchive(self.state_dir / "tasks.json").load()
        pinned_splits(self.state_dir)

    async def run(self) -> NightResult:
        check_state_dir(self.state_dir, writing=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.state_dir / "night.lock")
        if not lock.try_acquire():
            raise NightBusy(
                f"another Sleep night (pid {lock.holder_pid() or '?'}) is running on "
                f"{self.state_dir}; wait for it or run with another --state-dir"
            )
        try:
            return await self._run()
        finally:
            lock.release()

    async def _run(self) -> NightResult:
        # what the last round of this night showed, so a waiting round repeats nothing
        saved = read_json(self.folder / "night.json")
        before = saved.get("skills")
        self._before = before if isinstance(before, dict) else {}
        if isinstance(saved.get("resplit"), dict):  # a resumed night keeps what it said
            self.resplit.said = saved["resplit"]
        if isinstance(saved.get("mined_by"), str):  # its frozen tasks are mined no more
            self._mined_before = saved["mined_by"]
        result = NightResult(self.night_id, "running", self.folder)
        result.mined_by = self._mined_before
        self._save(result)
        try:
            return await self._run_phases(result)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # Interrupted mid-phase: the frozen tasks stay, the next run continues them.
            result.status = "stopped"
            result.message = "night interrupted; run the same command to continue it"
            self._save(result)
            self.on_line(result.message)
            raise
        except Exception as exc:
            # Whatever stopped it, the night no longer runs: `sleep status` must not say so.
            result.status = "failed"
            result.message = f"night failed: {type(exc).__name__}: {exc}"[:500]
            self._save(result)
            raise

    async def _run_phases(self, result: NightResult) -> NightResult:
        for closed in close_failed_nights(self.state_dir, self.today, _str(self.project)):
            self.on_line(f"closed failed night {closed}; tonight takes up its tasks")
        frozen_before = frozen(self.folder) is not None
        sessions = self.sessions()
        if frozen_before:
            self.on_line(
                f"continuing night {self.night_id} with its {len(sessions)} frozen session(s)"
            )
        try:
            routed = await self.routed_tasks(sessions)
        except ModelError as exc:  # the miner failed or waits for a handoff answer
            result.left_out, result.mined_by = self.left_out, self._mined()
            result.status = "waiting" if isinstance(exc, HandoffWaiting) else "failed"
            result.pending = len(pending_prompts(self.folder / "handoff"))
            result.message = (
                waiting_summary(self.folder / "handoff")
                if result.status == "waiting"
                else f"night failed while mining, nothing staged: {exc}"
            )
            self._save(result)
            return result
        result.left_out, result.mined_by = self.left_out, self._mined()
        result.resplit = self.resplit.report()
        result.preferences = known_preferences(self.state_dir, self.project)
        for route, splits in routed:
            outcome = await self._run_skill(route, splits)
            result.skills[route.skill] = outcome
            self._save(result)
        statuses = {o["status"] for o in result.skills.values()}
        result.pending = len(pending_prompts(self.folder / "handoff"))
        if "failed" in statuses:
            result.status = "failed"
        elif "waiting" in statuses:
            result.status = "waiting"
        elif statuses & {"stopped", "waiting"}:
            result.status = "stopped"
        else:
            result.status = "finished"
            handoff_workspace.discard(self.folder / "handoff")
        result.message = self._message(result)
        self._save(result)
        return result

    async def _run_skill(self, route: Route, splits: dict[str, list[MinedTask]]) -> dict[str, Any]:
        outcome = await self._gate_skill(route, splits)
        if outcome.get("status") in ("finished", "skipped"):
            GatedRecord(self.state_dir).put(self._gate_key(route.skill), self._signature(splits))
        return outcome

    async def _gate_skill(self, route: Route, splits: dict[str, list[MinedTask]]) -> dict[str, Any]:
        splits = replayable(splits, self.config.models.target.backend, self._skipped_line)
        counts = {split: len(tasks) for split, tasks in splits.items()}
        outcome: dict[str, Any] = {"routed_by": route.routed_by, **counts, "staged": None}
        if not splits["train"] or not splits["val"]:
            outcome.update(
                status="skipped",
                reason=(
                    f"too few tasks to learn and gate ({counts['train']} train, {counts['val']} val; "
                    "need at least one of each): more sessions will come"
                ),
            )
            self.on_line(f"{route.skill}: skipped, {outcome['reason']}")
            return outcome
        everything = [t for tasks in splits.values() for t in tasks]
        waiting = waiting_for_val(counts["val"], self.min_val_tasks, self._waiting(route, splits))
        if waiting is not None:
            self.on_line(f"{route.skill}: {waiting}")
            outcome.update(status="skipped", reason=waiting, waiting_for_val=True)
            return outcome
        config = self.run_config(len(splits["train"]), bool(splits["test"]))
        run_id = f"{self.night_id}-{route.skill}"
        run_dir = RunDirectory(self.folder / route.skill)
        bus = EventBus()
        client = build_client_with_budget_events(config, bus)
        sources = sorted(
            {sid for tasks in splits.values() for t in tasks for sid in t.source_sessions}
        )
        roles = gate_roles(splits["val"])
        preferences = group_preferences(everything)
        # The preference gate decides, and keeps only edits whose own preference moved
        # (sleep/night/preference_gate.py): with no held-out occurrence nothing stages.
        gate_rule = PreferenceGate(
            roles,
            self.pass_mark,
            held_out_occurrences(preferences, roles),
            check_origins(splits["val"], preferences),
        )
        outcome["gate"] = "preferences"
        if "occurrence" not in roles.values():
            outcome["no_occurrence"] = True
            self.on_line(f"{route.skill}: {NO_OCCURRENCE}")
        try:
            env = ReplayEnvironment(
                splits,
                client.bind("judge"),
                pass_mark=self.pass_mark,
                agent=self._agent(route),
                tools=self._tools(route),
                judge_backend=config.models.judge.backend,
                target_backend=config.models.target.backend,
                workspace=self._workspace(route),
                check_timeout_s=self.check_timeout_s,
                checks_log=self._checks_log(route),
                gate_rule=gate_rule,
                preferences=preferences_by_task(preferences),
            )
            state = run_dir.read_state()
            inner = SkillsRepoStager(
                self.repo, route.skill, run_id, base=state.stager_base if state else None
            )
            stager = NightStager(
                inner,
                sources,
                {"Night": self.night_id, "Routed-By": route.routed_by},
                preferences,
                project_files(self.project),
                corrected_words(everything, preferences),
                gate_rule,
            )
            self.on_line(
                f"{route.skill}: {counts['train']} train / {counts['val']} val / "
                f"{counts['test']} test tasks ({route.routed_by})"
            )
            summary = await run_training(
                config,
                run_dir=run_dir,
                bus=bus,
                client=client,
                env=env,
                stager=stager,
                initial_skill=self.repo.read_skill(route.skill),
            )
        except ModelError as exc:
            waiting = isinstance(exc, HandoffWaiting)
            outcome.update(status="waiting" if waiting else "failed", reason=str(exc))
            return outcome
        finally:
            await client.aclose()
        outcome.update(
            status=summary.status,
            reason=summary.reason,
            baseline_val=summary.baseline_val,
            best_val=summary.best_val,
            run_dir=str(run_dir.path),
            candidates=candidates_gated(run_dir.path),
        )
        before = self._before.get(route.skill) or {}
        if summary.status == "waiting" and all(
            before.get(k) == outcome[k] for k in ("baseline_val", "best_val")
        ):
            outcome["scores_unchanged"] = True  # the console shows them once, not every round
        left_out = left_out_of_analysis(run_dir.path)
        if left_out:  # failed for want of inputs: not the analysts' failures
            outcome["left_out_of_analysis"] = left_out
            if len(left_out) != len(before.get("left_out_of_analysis") or []):
                self.on_line(left_out_line(route.skill, left_out))
        edits = unlanded_edits(run_dir.path)
        if edits:
            outcome["edits_not_landed"] = edits
            if len(edits) != len(before.get("edits_not_landed") or []):
                self.on_line(unlanded_line(route.skill, edits))
        if self._checks_log(route).exists():
            outcome["checks"] = tally(self._checks_log(route))
        dropped = dropped_edits(run_dir.path)
        if dropped:
            outcome["dropped_edits"] = dropped
            if len(dropped) != len(before.get("dropped_edits") or []):
                for edit in dropped:
                    self.on_line(dropped_line(route.skill, edit))
        if summary.staged:
            # the branch that holds the candidate: another night's, when its text was the same
            outcome["staged"] = holding_branch(self.repo, summary.staged, run_id)
            outcome["evidence"] = stager.evidence()
            if outcome["evidence"] and outcome["evidence"]["weak"]:
                self.on_line(weak_line(route.skill, outcome["evidence"]))
            for trace in stager.traces:
                if trace.project_facts:
                    self.on_line(f"{route.skill}: {fact_flag(trace)}")
            if self.auto_adopt and summary.status == "finished":
                outcome["adopted"] = self.repo.adopt(outcome["staged"]).commit
        return outcome

    def _checks_log(self, route: Route) -> Path:
        return self.folder / "checks" / f"{route.skill}.jsonl"

    def _skipped_line(self, task: MinedTask, reason: str) -> None:
        self.on_line(f"skipped task {task.id}: {reason}")

    def _agent(self, route: Route) -> AgentReplay | None:
        """With a coding agent as target, where its replays work: the project's history up
        to the commit recorded when the night started (kept in replay.json, so a resumed
        night replays the same trees; each task starts at its last commit before its
        session began, sleep/night/edited_tree.commit_before), or a copy of the folder when
        it is not a git repository."""
        if self.config.models.target.backend not in AGENT_BACKENDS:
            return None
        return self._replay_tree(route)

    def _workspace(self, route: Route) -> AgentReplay | None:
        """Where a chat target's agentic tasks replay (sleep/night/replay_modes.py), when a
        workspace runner is registered for its backend's mode."""
        backend = self.config.models.target.backend
        if backend in AGENT_BACKENDS or not any(workspace_runner(m) for m in WORKSPACE_MODES):
            return None
        if self.project is None:  # no tree to copy: a task needing one fails by its id
            return None
        return dataclasses.replace(
            self._replay_tree(route),
            skill_path=skill_path_for(route.agents),
            keep_in=self.folder / "handoff" / handoff_workspace.FOLDER,
        )

    def _replay_tree(self, route: Route) -> AgentReplay:
        if self.project is None:
            raise UserError("a coding-agent target replays tasks in the project: pass --project")
        recorded = self._recorded_tree()
        return AgentReplay(Path(recorded["project"]), recorded["commit"], route.skill)

    def _tools(self, route: Route) -> ToolReplay | None:
        """With an API backend and a project, where agentic tasks replay as our tool loop
        (sleep/night/replay_tools.py): the same recorded tree, the skill where its agent reads it."""
        if self.config.models.target.backend in (*AGENT_BACKENDS, "handoff") or not self.project:
            return None
        recorded = self._recorded_tree()
        project, commit = Path(recorded["project"]), recorded["commit"]
        return ToolReplay(project, commit, skill_path_for(route.agents))

    def _recorded_tree(self) -> dict[str, Any]:
        saved = self.folder / "replay.json"
        recorded = read_json(saved)
        if "commit" not in recorded:
            recorded = {"project": str(self.project), "commit": git_head(Path(self.project))}
            write_json(saved, recorded)
        return recorded

    def run_config(self, n_train: int, has_test: bool) -> Config:
        config = self.config.model_copy(deep=True)
        config.run.name = None
        config.train.batch_size = n_train  # one step sees every train task of the night
        config.train.steps_per_epoch = 1
        config.train.final_test = has_test
        if self.batch != "off":
            config.run.batch = self.batch  # type: ignore[assignment]
        config.models.handoff_dir = str(self.folder / "handoff")
        if config.cache.path is None:
            config.cache.path = str(self.state_dir / "responses.sqlite")
        return config

    def _message(self, result: NightResult) -> str:
        if not result.skills:
            return "no new sessions in scope since the last night: nothing to learn from"
        if result.status == "waiting":
            return waiting_summary(self.folder / "handoff")
        staged = [o["staged"] for o in result.skills.values() if o.get("staged")]
        if result.status == "failed":
            failed = {k: o["reason"] for k, o in result.skills.items() if o["status"] == "failed"}
            return "night failed, nothing staged for " + "; ".join(
                f"{k}: {v}" for k, v in failed.items()
            )
        if result.status == "stopped":
            return "night stopped (budget or interrupt); run the same command to continue"
        if staged:
            review = "; ".join(review_command(b, self.repo.path) for b in staged)
            return f"staged {', '.join(staged)} — review with `skillopt tui` or `{review}`"
        held = [f"{k}: {o['reason']}" for k, o in result.skills.items() if o["status"] == "skipped"]
        if held:
            return "nothing staged; " + "; ".join(held)
        unlanded = [e for o in result.skills.values() for e in o.get("edits_not_landed", [])]
        why = (
            f" ({len(unlanded)} proposed edit(s) did not land: {unlanded[0]['reason']})"
            if unlanded
            else ""
        )
        if not any(o.get("candidates") for o in result.skills.values()):
            if all((o.get("baseline_val") or 0.0) >= 1.0 for o in result.skills.values()):
                # skip_when_perfect ended it before the optimizer was asked: saying it
                # "proposed no usable edit" sends the person looking for a broken optimizer
                return (
                    "nothing staged: the current skill already scores 1.000 on every "
                    "held-out task, so no candidate could beat it"
                )
            return (
                f"no candidate tonight (the optimizer proposed no usable edit{why}); nothing staged"
            )
        return f"no candidate beat the current skill tonight{why}; nothing staged"

    def _save(self, result: NightResult) -> None:
        write_json(self.folder / "night.json", {**result.to_dict(), "project": _str(self.project)})


def review_command(branch: str, repo: Path) -> str:
    """The command that shows a staged branch, as it works from any folder: the skills
    repository named (a night's repository is seldom the one `skills` finds unnamed)."""
    return shlex.join(["skillopt", "skills", "diff", branch, "--repo", str(repo)])


def weak_line(skill: str, evidence: dict[str, Any]) -> str:
    """The console's warning for a candidate staged on weak evidence."""
    return (
        f"{skill}: staged on weak evidence (sign test p={evidence['p']:.3g} > "
        f"{WEAK_EVIDENCE_P}: {evidence['improved']} item(s) improved, "
        f"{evidence['regressed']} regressed of {evidence['val_items']} held out); "
        "the commit says Evidence-Strength: weak: review it before adopting"
    )


def dropped_edits(run_dir: Path) -> list[dict[str, Any]]:
    """The edits the gate took out of accepted candidates for want of held-out evidence of
    their own (gate.json `dropped`, core/training/edit_attribution.py), step by step."""
    out = []
    for gate in sorted((Path(run_dir) / "steps").glob("*/gate.json")):
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(gate.read_text(encoding="utf-8"))
            out += [
                {"step": info.get("step"), **d}
                for d in info.get("dropped") or []
                if isinstance(d, dict)
            ]
    return out


def dropped_line(skill: str, edit: dict[str, Any]) -> str:
    """The console's line for an edit the gate did not stage."""
    words = " ".join(str(edit.get("content", "")).split())
    shown = words if len(words) <= 70 else words[:69] + "…"
    return f"{skill}: dropped: {edit.get('op', 'edit')} {shown!r}: {edit.get('reason', '')}"


def candidates_gated(run_dir: Path) -> int:
    """How many candidates a night's run put to the gate (steps and slow updates, valid
    or not): with none, "no candidate beat the current skill" would be untrue."""
    steps = Path(run_dir) / "steps"
    count = 0
    for gate in steps.glob("*/gate.json"):
        with contextlib.suppress(OSError, ValueError):
            count += "source" in json.loads(gate.read_text(encoding="utf-8"))
    return count + len(list(steps.glob("*/slow_update_gate.json")))


def planned_tasks(
    splits: dict[str, list[MinedTask]],
    routed_by: str,
    backend: str = "",
    project: Path | None = None,
) -> list[dict[str, Any]]:
    """The tasks a skill's night holds, as `dry-run --json` lists them, with how each is
    replayed (or why it is not), whether each check's programs are found for `project`,
    what a held-out one gates as (`gates_as`: occurrence or guard; None in train), and the
    commit a workspace replay starts from (`start_commit`: the project's last before the
    task's session began; None when the project is no git repository)."""
    out = []
    roles = gate_roles(splits.get("val", []))
    head = git_head(project) if project is not None else None
    for split, tasks in splits.items():
        for task in tasks:
            source, _, session = (task.source_sessions or ["?:?"])[0].partition(":")
            out.append(
                {
                    "id": task.id,
                    "text": task.intent,
                    "source": source,
                    "session": session,
                    "split": split,
                    "routed_by": routed_by,
                    "gates_as": roles.get(task.id) if split == "val" else None,
                    "start_commit": (
                        start_commit(
                            project,
                            head,
                            task.session_started or task.first_seen,
                            task.session_commit,
                        )
                        if project is not None and head
                        else None
                    ),
                    **task_listing(
                        task, replay_mode(task, backend), replay_at_night(task, backend)
                    ),
                }
            )
            out[-1]["checks"] = planned_checks(
                out[-1]["checks"], replay_at_night(task, backend).mode, project
            )
    return out


def git_head(project: Path) -> str | None:
    """The project's HEAD commit, or None when it is not a git repository with commits."""
    from core.safe_git import run_git

    if not project.is_dir():
        return None
    done = run_git("rev-parse", "--verify", "-q", "HEAD", cwd=project)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def _str(path: Path | None) -> str | None:
    return str(Path(path).expanduser().absolute()) if path is not None else None


def night_defaults() -> Path:
    """sleep/night.yaml: the run config of a night when the user gives none."""
    from importlib import resources

    return Path(str(resources.files("sleep").joinpath("night.yaml")))


def run_night(night: Night) -> NightResult:
    return asyncio.run(night.run())
