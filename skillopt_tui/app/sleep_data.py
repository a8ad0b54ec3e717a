"""What the Sleep screen shows, each view read in one blocking call (thread workers make
them). The TUI keeps no state of its own: everything comes from the Sleep state directory
(sleep.yaml, the nights, the mined-task archive) and a harvest preview that moves no
cursor, so the screen always agrees with `skillopt sleep status` and `sleep harvest`."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import load_config
from core.errors import UserError
from core.path_text import shown
from sleep.harvest.agent_roots import MORE_FLAGS
from sleep.harvest.run import HarvestOptions, HarvestResult, harvest
from sleep.harvest.sources import SourceRoot
from sleep.mine.split import task_split
from sleep.mine.tasks import MinedTask, TaskArchive
from sleep.night.run import night_defaults
from sleep.state.settings import SleepSettings, load_settings
from sleep.state.status import list_nights

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class SleepContext:
    """The state directory and what `skillopt sleep init` recorded in it."""

    state_dir: Path
    settings: SleepSettings = field(default_factory=SleepSettings)
    problem: str = ""  # sleep.yaml unreadable: shown, and the defaults are used
    spend: str = ""  # what a night may spend, in words (its config's budget caps)

    @property
    def project(self) -> Path:
        return self.projects[0]

    @property
    def projects(self) -> list[Path]:
        """Every recorded project (the current directory when none is)."""
        recorded = self.settings.projects or [str(Path.cwd())]
        return [Path(p).expanduser().absolute() for p in recorded]

    @property
    def initialised(self) -> bool:
        return bool(self.settings.skills_repo)

    @property
    def backend(self) -> str:
        return self.settings.backend or "handoff"


def load_context(state_dir: Path) -> SleepContext:
    try:
        settings = load_settings(state_dir)
    except UserError as exc:
        return SleepContext(state_dir, problem=str(exc))
    return SleepContext(state_dir, settings, spend=night_spend(settings))


def night_spend(settings: SleepSettings) -> str:
    """The caps a night runs under, in words, from its config (sleep/night.yaml unless
    sleep.yaml names one): what `r` says before it starts a night on a paid backend."""
    config_path = Path(settings.config).expanduser() if settings.config else night_defaults()
    try:
        budget = load_config(config_path).budget
    except (UserError, OSError, ValueError) as exc:
        return f"unknown: its config {shown(config_path)} does not load ({exc})"
    caps = []
    if budget.max_cost_usd is not None:
        caps.append(f"${budget.max_cost_usd:g}")
    if budget.max_tokens is not None:
        caps.append(f"{budget.max_tokens:,} tokens")
    if budget.max_calls is not None:
        caps.append(f"{budget.max_calls:,} calls")
    if caps:
        return "at most " + ", ".join(caps) + f" (budget in {shown(config_path)})"
    return f"no cap: {shown(config_path)} sets no budget (add budget.max_cost_usd to cap it)"


# -- the harvest preview -----------------------------------------------------------------


@dataclass(frozen=True)
class RootRow:
    tool: str
    path: Path
    exists: bool
    files: int
    subagent_files: int
    sessions: int  # sessions of the project with tasks to deliver
    skipped: int = 0  # files (or lines of them) the harvest could not read


@dataclass
class HarvestPreview:
    project: Path
    everything: bool  # True: read as if no night had run (cursors ignored)
    result: HarvestResult | None = None
    problem: str = ""

    def roots(self) -> list[RootRow]:
        """Every root found; for a tool with none found, the first place it looked."""
        if self.result is None:
            return []
        found_tools = {r.tool for r in self.result.roots if r.exists}
        shown_tools: set[str] = set()
        rows = []
        for root in self.result.roots:
            if root.exists or (root.tool not in found_tools and root.tool not in shown_tools):
                rows.append(root_row(root, self.result))
                shown_tools.add(root.tool)
        return rows


def root_row(root: SourceRoot, result: HarvestResult) -> RootRow:
    """One source's row. A database store (OpenCode) counts its session rows as files;
    its sessions are named `<db>::<session id>`."""
    files = {f.shown for f in root.sessions}
    store = f"{shown(root.path)}::"
    sessions = sum(1 for s in result.sessions if s.file in files or s.file.startswith(store))
    skipped = sum(1 for k in result.skipped if k.file in files or k.file == shown(root.path))
    count = root.store_sessions if root.tool == "opencode" else len(files)
    return RootRow(root.tool, root.path, root.exists, count, root.subagent_files, sessions, skipped)


def harvest_preview(
    ctx: SleepContext, *, everything: bool = False, project: Path | None = None
) -> HarvestPreview:
    """Tonight's harvest of `project` (default: the first recorded) as it would read now
    (what is new since the last night), or with `everything` the whole history;
    automation sessions included so they can be shown (marked). Never moves a cursor:
    `commit=False`, and `everything` reads an empty state directory of its own."""
    project = project or ctx.project
    preview = HarvestPreview(project, everything)
    s = ctx.settings

    def run(state_dir: Path) -> HarvestResult:
        return harvest(
            HarvestOptions(
                state_dir=state_dir,
                project=project,
                claude_home=s.claude_home,
                codex_home=s.codex_home,
                **{name: getattr(s, name) for name in MORE_FLAGS},
                include_automation=True,
                commit=False,
            )
        )

    try:
        if everything:
            with tempfile.TemporaryDirectory(prefix="skillopt-preview-") as empty:
                preview.result = run(Path(empty))
        else:
            preview.result = run(ctx.state_dir)
    except UserError as exc:
        preview.problem = str(exc)
    return preview


# -- nights --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NightSkill:
    night_id: str
    skill: str
    status: str
    counts: dict[str, int]  # tasks per split (mined for this skill tonight)
    replayed: int | None  # distinct tasks the run replayed (None: no run directory)
    baseline_val: float | None = None
    best_val: float | None = None
    staged: str | None = None  # the branch the night staged
    branch_state: str = "staged"  # what became of it since (sleep/state/branch_state.py)
    adopted: str | None = None
    run_dir: Path | None = None
    reason: str = ""
    # command-check runs of its replays by status (pass, fail, timeout, not-run)
    checks: dict[str, int] = field(default_factory=dict)
    # the staged candidate's evidence (sleep/night/run.NightStager.evidence): p, weak, ...
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def mined(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class NightView:
    night_id: str
    status: str
    message: str
    pending: int
    folder: Path
    skills: list[NightSkill]
    project: str | None = None  # the project the night was for (night.json)


def replayed_tasks(run_dir: Path) -> int | None:
    """Distinct tasks replayed in a run (any phase), from its events.jsonl."""
    events = run_dir / "events.jsonl"
    if not events.is_file():
        return None
    seen: set[str] = set()
    try:
        with events.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if '"RolloutFinished"' not in line:
                    continue
                try:
                    seen.add(json.loads(line)["item_id"])
                except (ValueError, KeyError, TypeError):
                    continue  # a line being written
    except OSError:
        return None
    return len(seen)


def _night_skill(night_id: str, folder: Path, skill: str, o: dict[str, Any]) -> NightSkill:
    run_dir = Path(o["run_dir"]) if o.get("run_dir") else folder / skill
    has_run = (run_dir / "events.jsonl").is_file()
    return NightSkill(
        night_id=night_id,
        skill=skill,
        status=str(o.get("status", "?")),
        counts={split: int(o.get(split) or 0) for split in SPLITS},
        replayed=replayed_tasks(run_dir) if has_run else None,
        baseline_val=o.get("baseline_val"),
        best_val=o.get("best_val"),
        staged=o.get("staged"),
        branch_state=str(o.get("branch_state") or "staged"),
        adopted=o.get("adopted"),
        run_dir=run_dir if has_run else None,
        reason=str(o.get("reason") or ""),
        checks=_check_counts(o.get("checks")),
        evidence=o["evidence"] if isinstance(o.get("evidence"), dict) else {},
    )


def _check_counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _running_skills(folder: Path, done: dict[str, Any], frozen: dict[str, Any]) -> list[str]:
    """Skills whose run is under way: night.json records a skill only when its run ends,
    so a night in progress shows its live run directory too."""
    return [
        skill
        for skill in frozen
        if skill not in done and (folder / skill / "events.jsonl").is_file()
    ]


def load_nights(state_dir: Path) -> list[NightView]:
    nights = []
    for data in list_nights(state_dir):
        night_id = str(data.get("night_id", "?"))
        folder = Path(data.get("folder") or Path(state_dir) / "nights" / night_id)
        outcomes = data.get("skills") or {}
        skills = [_night_skill(night_id, folder, k, o) for k, o in outcomes.items()]
        if data.get("status") == "running":
            frozen = _read_json(folder / "tasks.json").get("skills", {})
            for skill in _running_skills(folder, outcomes, frozen):
                counts = {split: len(frozen[skill].get(split, [])) for split in SPLITS}
                skills.append(_night_skill(night_id, folder, skill, {"status": "live", **counts}))
        nights.append(
            NightView(
                night_id=night_id,
                status=str(data.get("status", "?")),
                message=str(data.get("message") or ""),
                pending=int(data.get("pending") or 0),
                folder=folder,
                skills=skills,
                project=data.get("project") if isinstance(data.get("project"), str) else None,
            )
        )
    return nights


# -- mined tasks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    task: MinedTask
    split: str
    sources: list[str]  # "claude:<id>  <transcript file>" where the night knows the file


@dataclass
class TaskList:
    title: str  # "night sleep-… tasks" or "archive"
    rows: list[TaskRow] = field(default_factory=list)
    problem: str = ""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _session_files(folder: Path) -> dict[str, str]:
    saved = _read_json(folder / "sessions.json").get("sessions", [])
    return {
        f"{s.get('source', '?')}:{s.get('session_id', '?')}": str(s.get("file") or "")
        for s in saved
        if isinstance(s, dict)
    }


def _sources(task: MinedTask, files: dict[str, str]) -> list[str]:
    return [
        f"{sid}  {short_file(files[sid])}" if files.get(sid) else sid
        for sid in task.source_sessions
    ]


def short_file(path: str) -> str:
    """A transcript file by its folder and name (the root is on the Sources tab)."""
    parts = Path(path).parts
    return str(Path(*parts[-2:])) if len(parts) > 2 else path


def night_tasks(night: NightView) -> TaskList:
    """The tasks a night replayed, with the splits it froze for them."""
    frozen = _read_json(night.folder / "tasks.json").get("skills")
    out = TaskList(f"night {night.night_id}")
    if not isinstance(frozen, dict):
        out.problem = f"night {night.night_id} mined no tasks (no tasks.json)"
        return out
    files = _session_files(night.folder)
    try:
        for splits in frozen.values():
            for split in SPLITS:
                for data in splits.get(split, []):
                    task = MinedTask.from_dict(data)
                    out.rows.append(TaskRow(task, split, _sources(task, files)))
    except (TypeError, AttributeError) as exc:
        out.problem = f"{night.folder / 'tasks.json'}: unreadable ({exc})"
    return out


def archive_tasks(ctx: SleepContext) -> TaskList:
    """Every task mined so far; the split is the one a night gives it (a stable hash of
    its id with the recorded fractions)."""
    out = TaskList("archive")
    try:
        tasks = TaskArchive(ctx.state_dir / "tasks.json").load()
    except UserError as exc:
        out.problem = str(exc)
        return out
    s = ctx.settings
    for task in sorted(tasks.values(), key=lambda t: (t.skill or "", -t.occurrences, t.id)):
        split = task_split(task, val_fraction=s.val_fraction, test_fraction=s.test_fraction)
        out.rows.append(TaskRow(task, split, list(task.source_sessions)))
    return out


def adoption_lines(ctx: SleepContext) -> list[str]:
    """What the sessions since each adopted Sleep edit say of its preference (one line
    each, a preference corrected again flagged with the rollback command)."""
    from sleep.night.adoption_effect import adoption_effects

    return [
        f"{e.skill}: {e.line()}" for e in adoption_effects(ctx.state_dir, ctx.settings.skills_repo)
    ]


def preference_lines(ctx: SleepContext) -> list[str]:
    """What the person keeps correcting, from the task archive (one line each, most said
    first): readable after the night, whatever tonight's sessions were."""
    from sleep.night.known_preferences import preference_line, preferences_of_projects

    try:
        found = preferences_of_projects(ctx.state_dir, ctx.settings.projects or [])
    except UserError as exc:
        return [str(exc)]
    return [preference_line(p) for p in found]
