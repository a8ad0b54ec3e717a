"""The run directory (DESIGN §9): plain, documented files a user can read without the tool.

```
<run>/
  .owner.pid          pid of the process working on the run (the lock)
  config.yaml         the resolved config (no secrets: keys are named, never stored)
  events.jsonl        every event, one JSON object a line
  state.json          everything needed to resume (core.run.state)
  rollouts.sqlite     per-item rollout results (core.training.rollout_cache)
  spend.jsonl         every model call's tokens and cost as it happened (the budget's record)
  skills/vNNNN.md     every skill version that became current (v0000 = initial)
  best_skill.md       the best skill so far
  steps/NNNN/         rollouts.jsonl, reflections.json, proposal.json, candidate.md,
                      apply_report.json, gate.json
  staged/             accepted candidates when no skills repository is used
  summary.json        the run's result (written when it finishes)
```

One process owns a run directory at a time: the owner lock is an flock on `.owner.pid`
(core.file_lock), which also holds the owner's pid for messages. The kernel drops the lock
when its owner dies (kill -9, power loss), so a run is "live" exactly while some process
holds it; the file is removed when the owner releases it and left behind if it dies.
"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.atomic import write_text
from core.errors import UserError, unreadable
from core.file_lock import FileLock, holder_pid
from core.run.events import EventBus, JsonlEventLog, RunFailed, RunFinished, RunStarted
from core.run.state import TrainState
from core.secrets import redacted_json

LOCK_NAME = ".owner.pid"
CONFIG_NAME = "config.yaml"
EVENTS_NAME = "events.jsonl"
STATE_NAME = "state.json"
SUMMARY_NAME = "summary.json"
ROLLOUT_CACHE_NAME = "rollouts.sqlite"
SPEND_NAME = "spend.jsonl"
# The first line of config.yaml: what proves a directory holding only a config is ours.
CONFIG_HEADER = "# skillopt run: the resolved configuration (keys are named, never stored)\n"
# Every name a run directory may hold, with what it holds (the documentation's run-directory
# reference is generated from this); a directory with anything else is not a run (a test
# runs the scenario and checks that nothing it writes is missing here).
RUN_FILES: dict[str, str] = {
    LOCK_NAME: "the pid of the process working on the run; an flock on it is the owner lock, "
    "dropped by the kernel when the owner dies",
    CONFIG_NAME: "the resolved configuration (no secrets: keys are named by variable, never stored)",
    EVENTS_NAME: "every engine event, one JSON line each (see Events); a resumed run redoing a "
    "step logs the rollouts it serves again from the rollout cache with `replayed: true`",
    STATE_NAME: "everything a resume needs",
    SUMMARY_NAME: "the result, written when the run finishes: baseline, best and final scores, "
    "test scores with per-task-type buckets, accepted steps and slow updates, calls, tokens, "
    "cache hits, rollouts saved by the early gate, truncated rollouts per split. "
    "`accepted_slow_updates` went into the running skill; `final_check` says whether the "
    "final skill holding them was kept (outcome kept, rejected or invalid, its val against "
    "the best's): an ungated slow update the finish rejects stays out of `best_skill.md`",
    SPEND_NAME: "every model call's tokens and cost as it happened (fsync'd): the budget's "
    "record, replayed by a resumed run so a crash cannot spend past the cap",
    ROLLOUT_CACHE_NAME: "per-item rollout results, so a resumed run never repeats a rollout",
    f"{ROLLOUT_CACHE_NAME}-wal": "SQLite's write-ahead log of the rollout cache",
    f"{ROLLOUT_CACHE_NAME}-shm": "SQLite's shared memory of the rollout cache",
    f"{ROLLOUT_CACHE_NAME}-journal": "SQLite's rollback journal of the rollout cache",
    "best_skill.md": "the best skill so far",
    "card.json": "the run's card: config sources, seeds, split sizes and content hashes, "
    "the items each score averages over, models, accepted edits with their sign-test p, "
    "test scores and spend (`skillopt runs show`; rebuilt on demand for older runs)",
    "history.json": "one row per step: train score, budget or learning-rate decision, gate mode, "
    "candidate score, decision, per-stage timings and tokens summed over the step's attempts",
    "skills": "`vNNNN.md`: every skill version that became current (v0000 = initial)",
    "steps": "`NNNN/`: one folder of evidence per step (below)",
    "staged": "accepted candidates, when no skills repository is used",
    "batches": "with run.batch: `batches.json` (every provider batch the run submitted, with "
    "its requests' custom_ids, written before the run waits on it), `<batch id>.answers.jsonl` "
    "(each ended batch's answers) and `billed.txt` (the batches already in the ledger)",
}
RUN_FILE_NAMES = frozenset(RUN_FILES)
# What a step folder (`steps/NNNN/`) may hold: the documentation's reference of them.
STEP_FILES: dict[str, str] = {
    "rollouts.jsonl": "the train batch's rollouts with trajectories",
    "reflections.json": "every optimizer call of the step in order: each analyst's text, items "
    "and edit list; each merge-tree node's input lists (failure, success or mixed) and output; "
    "the ranked list; the learning-rate decision (`kind: lr`)",
    "proposal.json": "the budget, `lr` (fixed with the schedule's count, or autonomous with "
    "count, asked, pool, reasoning, confidence, risks), the merged pool and the edits to apply; "
    "`suggestions` in the rewrite modes, `execution_notes` when skill-aware",
    "candidate.md": "the candidate skill",
    "apply_report.json": "each edit's outcome (applied, target not found, ...); only applied "
    "edits reach the gate, the rejected-edit buffer and the staged evidence",
    "gate.json": "the decision (`mode`: strict or disabled), scores, items improved and "
    "regressed; `density` and `repeats` when those terms are on",
    "step_val_rollouts.jsonl": "the candidate's val rollouts",
    "stages.json": "wall seconds and per-role calls, cache hits and tokens of rollout, reflect "
    "and gate, summed over the step's attempts",
    "stages.attempts.json": "an abandoned attempt's stages, until the step finishes",
    "notes.json": "skill-aware runs: the execution notes written after the gate",
    "slow_update_pairs.json": "at an epoch's end (in its last step): every paired outcome "
    "(`shown`: kept by train.slow_update.longitudinal_pair_policy)",
    "slow_update_candidate.md": "the slow update's guidance candidate",
    "slow_update_gate.json": "the slow update's gate (`ungated` unless train.slow_update.gated)",
    "slow_update_val_rollouts.jsonl": "the slow update's val rollouts, when it is gated",
}

# How long `acquire` waits for a holder by default: `lock_owner` probes (the TUI, `skillopt
# runs`) hold the lock for an instant, and a start that collides with one must not fail.
PROBE_GRACE_S = 0.25


class RunDirectoryInUse(UserError):
    """Another live process owns the run directory."""


class NotARunDirectory(UserError):
    """The run directory's path names a file."""


class RunDirectoryCorrupt(UserError):
    """state.json, config.yaml or summary.json cannot be read back. All are written
    atomically, so this means something outside skillopt changed them. `reason` is the
    short "<file>: <why>" a listing shows."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def lock_owner(run_path: str | Path) -> int | None:
    """The pid of the process owning the run directory, or None when no process does
    (0: one does but has not written its pid yet). Asks the lock, never whether a pid is
    alive: pids are reused, and another host's cannot be checked. A lock path that is not
    a regular file (a FIFO would block the probe forever) is no owner."""
    path = Path(run_path) / LOCK_NAME
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
    except OSError:
        return None
    return holder_pid(path)


def _first_line(exc: Exception) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem} at line {exc.problem_mark.line + 1}"
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class RunDirectory:
    """Paths and atomic writers of one run directory, plus its owner lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._log: JsonlEventLog | None = None
        self._unsubscribe = None
        self._lock = FileLock(self.path / LOCK_NAME, remove_on_release=True)

    # ----------------------------------------------------------------- lifecycle
    @property
    def locked(self) -> bool:
        """Whether this object holds the owner lock."""
        return self._lock.held

    @property
    def run_id(self) -> str:
        return self.path.resolve().name

    def is_empty(self) -> bool:
        if not self.path.is_dir():
            return True
        return not any(p.name != LOCK_NAME for p in self.path.iterdir())

    def holds_a_run(self) -> bool:
        """Whether our own run files prove the directory is a run: nothing in it but run
        file names, and a state, an event log or a config.yaml that we wrote."""
        if not self.path.is_dir():
            return False
        names = {p.name for p in self.path.iterdir()}
        if not names <= RUN_FILE_NAMES:
            return False
        if self.state_path.is_file() or self.events_path.is_file():
            return True
        try:
            with self.config_path.open(encoding="utf-8") as fh:
                return fh.readline() == CONFIG_HEADER
        except (OSError, ValueError):
            return False

    def check_is_ours(self) -> None:
        """Refuse a directory that is neither empty nor a run: writing config.yaml and the
        rest into it (or --fresh clearing it) would destroy someone's files."""
        if self.path.is_dir() and not self.is_empty() and not self.holds_a_run():
            raise NotARunDirectory(
                f"--out {self.path} is not a run directory (it holds files skillopt did not "
                "write); choose an empty or new --out"
            )

    def acquire(self, wait: float = PROBE_GRACE_S) -> None:
        """Take the owner lock (waiting up to `wait` seconds for a holder to let go), or
        raise RunDirectoryInUse naming the owner. A directory that is not empty and not a
        run is refused first (NotARunDirectory)."""
        self._make_directory()
        self.check_is_ours()
        if self._lock.acquire(timeout=wait):
            return
        owner = self._lock.holder_pid() or "unknown"
        raise RunDirectoryInUse(
            f"run directory {self.path} is in use by process {owner}; wait for it to "
            f"finish or stop it, or use another --out"
        )

    def _make_directory(self) -> None:
        not_a_dir = NotARunDirectory(
            f"--out {self.path} is a file, not a run directory; choose another --out"
        )
        if self.path.exists() and not self.path.is_dir():
            raise not_a_dir
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):  # a file took its place, or a parent's
            chain = (self.path, *self.path.parents)
            file = next((p for p in chain if p.exists() and not p.is_dir()), self.path)
            if file != self.path:
                not_a_dir = NotARunDirectory(
                    f"--out {self.path} is inside {file}, which is a file, not a directory; "
                    "choose another --out"
                )
            raise not_a_dir from None

    def release(self) -> None:
        self.detach()
        self._lock.release()

    def archive(self) -> Path:
        """Move the run's files (everything but the lock) into a hidden sibling
        `.<name>.discarded-<time>` (for --fresh --force) and return its path. Archived, not
        deleted: a discarded run may hold results someone still wants. Only a directory our
        run files prove is a run is ever emptied."""
        if not self.holds_a_run():
            raise NotARunDirectory(f"{self.path} is not a run directory; nothing was moved")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        archive = self.path.parent / f".{self.path.name}.discarded-{stamp}"
        n = 1
        while archive.exists():
            n += 1
            archive = self.path.parent / f".{self.path.name}.discarded-{stamp}-{n}"
        archive.mkdir()
        for p in self.path.iterdir():
            if p.name != LOCK_NAME:
                p.rename(archive / p.name)
        return archive

    def __enter__(self) -> RunDirectory:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ----------------------------------------------------------------- events
    @property
    def events_path(self) -> Path:
        return self.path / EVENTS_NAME

    def attach(self, bus: EventBus) -> None:
        """Append every event of `bus` to events.jsonl."""
        if self._log is None:
            self._log = JsonlEventLog(self.events_path)
            self._unsubscribe = bus.subscribe(self._log)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._log is not None:
            self._log.close()
            self._log = None

    # ----------------------------------------------------------------- config
    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_NAME

    def write_config(self, public_config: dict[str, Any]) -> None:
        text = CONFIG_HEADER + yaml.safe_dump(public_config, sort_keys=False)
        write_text(self.config_path, text)

    def read_config(self) -> dict[str, Any] | None:
        """The config the run was started with; None before the first start."""
        try:
            self._check_regular(self.config_path)
            text = self.config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise self._corrupt(self.config_path, exc) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise self._corrupt(self.config_path, exc) from None
        if not isinstance(data, dict):
            raise self._corrupt(self.config_path, ValueError("not a mapping"))
        return data

    # ----------------------------------------------------------------- state
    @property
    def state_path(self) -> Path:
        return self.path / STATE_NAME

    def read_state(self) -> TrainState | None:
        """The saved state; None before the run first saved one."""
        try:
            self._check_regular(self.state_path)
            return TrainState.load(self.state_path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            # ValueError covers bad JSON and bad UTF-8; the others, JSON of the wrong shape.
            raise self._corrupt(self.state_path, exc) from None

    def write_state(self, state: TrainState) -> None:
        state.save(self.state_path)

    @staticmethod
    def _check_regular(path: Path) -> None:
        """A FIFO or device under a run file's name would block the read forever; a
        folder or one of those is reported as what it is (FileNotFoundError if absent)."""
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(f"{kind}, expected a file")

    def _corrupt(self, path: Path, exc: Exception) -> RunDirectoryCorrupt:
        why = unreadable(path.name, exc) if isinstance(exc, UnicodeDecodeError) else None
        return RunDirectoryCorrupt(
            f"{path} is unreadable ({_first_line(exc)}); skillopt writes it atomically, so "
            "something else changed it: restore it, or rerun with --fresh --force to start "
            "the run over",
            reason=why or f"{path.name} is unreadable ({_first_line(exc)})",
        )

    # ----------------------------------------------------------------- skills
    def skill_path(self, version: int) -> Path:
        return self.path / "skills" / f"v{version:04d}.md"

    def write_skill(self, version: int, text: str) -> Path:
        path = self.skill_path(version)
        write_text(path, text)
        return path

    def read_skill(self, version: int) -> str:
        return self.skill_path(version).read_bytes().decode("utf-8")

    @property
    def best_skill_path(self) -> Path:
        return self.path / "best_skill.md"

    def write_best_skill(self, text: str) -> None:
        write_text(self.best_skill_path, text)

    # ----------------------------------------------------------------- steps
    def step_dir(self, step: int) -> Path:
        return self.path / "steps" / f"{step:04d}"

    def write_step_json(self, step: int, name: str, data: Any) -> None:
        write_text(self.step_dir(step) / name, redacted_json(data))

    def write_step_text(self, step: int, name: str, text: str) -> None:
        write_text(self.step_dir(step) / name, text)

    def write_step_rollouts(
        self, step: int, rows: Iterable[dict[str, Any]], name: str = "rollouts.jsonl"
    ) -> None:
        lines = "".join(redacted_json(r, indent=None) + "\n" for r in rows)
        write_text(self.step_dir(step) / name, lines)

    @property
    def staged_dir(self) -> Path:
        return self.path / "staged"

    @property
    def spend_path(self) -> Path:
        """spend.jsonl: every model call as it happened (core.models.spend_journal)."""
        return self.path / SPEND_NAME

    @property
    def batches_dir(self) -> Path:
        """batches/: the provider batches of run.batch (core/models/batch_queue.py)."""
        return self.path / "batches"

    @property
    def rollout_cache_path(self) -> Path:
        return self.path / ROLLOUT_CACHE_NAME

    # ----------------------------------------------------------------- summary
    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY_NAME

    def write_summary(self, data: dict[str, Any]) -> None:
        write_text(self.summary_path, redacted_json(data))

    def read_summary(self) -> dict[str, Any] | None:
        """The summary of a finished run; None before it finished."""
        try:
            self._check_regular(self.summary_path)
            data = json.loads(self.summary_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, a folder
            raise self._corrupt(self.summary_path, exc) from None
        if not isinstance(data, dict):
            raise self._corrupt(self.summary_path, ValueError("not a JSON object"))
        return data


# --------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    path: Path
    env: str
    status: str  # "live" | "finished" | "failed" | "stopped" | "interrupted" | "unreadable"
    baseline_val: float | None
    best_val: float | None
    steps_done: int
    total_steps: int
    cost_usd: float
    started_at: float | None
    problem: str | None = None  # why the run is listed as "unreadable"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "env": self.env,
            "status": self.status,
            "baseline_val": self.baseline_val,
            "best_val": self.best_val,
            "steps_done": self.steps_done,
            "total_steps": self.total_steps,
            "cost_usd": self.cost_usd,
            "started_at": self.started_at,
            "problem": self.problem,
        }


def _last_terminal_status(events_path: Path) -> str | None:
    """Status from the last terminal event after the last RunStarted (reads the tail)."""
    try:
        info = events_path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read forever
            return None
        size = info.st_size
        with events_path.open("rb") as fh:
            fh.seek(max(0, size - 65536))
            tail = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    status = None
    for line in tail.splitlines():
        try:
            data = json.loads(line)
            kind = data.get("type")
        except (json.JSONDecodeError, AttributeError):
            continue
        if kind == RunStarted.type:
            status = None
        elif kind == RunFinished.type:
            status = data.get("status", "finished")
        elif kind == RunFailed.type:
            status = "failed"
    return status


def _number(data: dict[str, Any], key: str, problems: list[str]) -> float | None:
    """A score or cost from summary.json: a finite number, else None and a problem."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        problems.append(f"{SUMMARY_NAME}: {key} is not a number")
        return None
    return float(value)


def run_info(path: Path) -> RunInfo | None:
    """What `skillopt runs` shows for one directory, or None if it is not a run. A file
    that cannot be read lists the run as "unreadable" with the reason, never raises."""
    rd = RunDirectory(path)
    if not (rd.state_path.exists() or rd.events_path.exists()):
        return None
    problems: list[str] = []
    state: TrainState | None = None
    summary: dict[str, Any] = {}
    config: dict[str, Any] = {}
    try:
        state = rd.read_state()
    except RunDirectoryCorrupt as exc:
        problems.append(exc.reason)
    try:
        summary = rd.read_summary() or {}
    except RunDirectoryCorrupt as exc:
        problems.append(exc.reason)
    try:
        config = rd.read_config() or {}
    except RunDirectoryCorrupt as exc:
        problems.append(exc.reason)
    env = (config.get("env") or {}).get("name", "") if isinstance(config.get("env"), dict) else ""
    if lock_owner(path) is not None:
        status = "live"
    elif state is not None and state.status != "running":
        status = state.status
    else:
        status = _last_terminal_status(rd.events_path) or "interrupted"
        if state is not None and state.status == "running" and status == "finished":
            status = "interrupted"
    cost = 0.0
    if state is not None and state.ledger:
        cost = float(state.ledger.get("cost_usd", 0.0) or 0.0)
    summary_cost = _number(summary, "cost_usd", problems)
    if summary_cost is not None:
        cost = summary_cost
    baseline = state.baseline_score if state else None
    best = state.best_score if state else None
    if "baseline_val" in summary:
        baseline = _number(summary, "baseline_val", problems)
    if "best_val" in summary:
        best = _number(summary, "best_val", problems)
    return RunInfo(
        run_id=path.name,
        path=path,
        env=str(env or (state.env if state else "")),
        status="unreadable" if problems and status != "live" else status,
        baseline_val=baseline,
        best_val=best,
        steps_done=state.next_step if state else 0,
        total_steps=state.total_steps if state else 0,
        cost_usd=cost,
        started_at=state.started_at if state else None,
        problem="; ".join(problems) or None,
    )


def list_runs(runs_dir: str | Path) -> list[RunInfo]:
    """Runs under `runs_dir`, newest first."""
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    infos = []
    for child in root.iterdir():
        if child.is_dir() and not child.name.startswith("."):
            info = run_info(child)
            if info is not None:
                infos.append(info)
    infos.sort(key=lambda i: (i.started_at or 0.0, i.run_id), reverse=True)
    return infos
