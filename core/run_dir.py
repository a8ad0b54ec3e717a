"""The run directory (DESIGN §9): plain, documented files a user can read without the tool.

```
<run>/
  .owner.pid          pid of the process working on the run (the lock)
  config.yaml         the resolved config (no secrets: keys are named, never stored)
  events.jsonl        every event, one JSON object a line
  state.json          everything needed to resume (core.train_state)
  rollouts.sqlite     per-item rollout results (core.rollout_cache)
  skills/vNNNN.md     every skill version that became current (v0000 = initial)
  best_skill.md       the best skill so far
  steps/NNNN/         rollouts.jsonl, reflections.json, proposal.json, candidate.md,
                      apply_report.json, gate.json
  staged/             accepted candidates when no skills repository is used
  summary.json        the run's result (written when it finishes)
```

One process owns a run directory at a time: the owner lock is a pid file; a lock left by
a dead process (kill -9, power loss) is taken over, a live one is refused with the pid.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.atomic import write_json, write_text
from core.errors import UserError
from core.events import EventBus, JsonlEventLog, RunFailed, RunFinished, RunStarted
from core.train_state import TrainState

LOCK_NAME = ".owner.pid"
CONFIG_NAME = "config.yaml"
EVENTS_NAME = "events.jsonl"
STATE_NAME = "state.json"
SUMMARY_NAME = "summary.json"
ROLLOUT_CACHE_NAME = "rollouts.sqlite"

# Locks held by this process, so two RunDirectory objects in one process (the TUI could
# start two trainers) cannot share a directory either.
_HELD: set[str] = set()


class RunDirectoryInUse(UserError):
    """Another live process owns the run directory."""


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _read_lock(path: Path) -> tuple[int, str] | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, OSError):
        return None
    pid_text, _, host = text.partition(" ")
    try:
        return int(pid_text), host
    except ValueError:
        return None


def lock_owner(run_path: Path) -> int | None:
    """The pid of the live process owning the run directory, or None."""
    found = _read_lock(run_path / LOCK_NAME)
    if found is None:
        return None
    pid, host = found
    if host and host != socket.gethostname():
        return pid  # another machine's process: we cannot tell, assume alive
    if pid == os.getpid():
        return pid if str((run_path / LOCK_NAME).resolve()) in _HELD else None
    return pid if pid_alive(pid) else None


class RunDirectory:
    """Paths and atomic writers of one run directory, plus its owner lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._log: JsonlEventLog | None = None
        self._unsubscribe = None
        self._locked = False

    # ----------------------------------------------------------------- lifecycle
    @property
    def locked(self) -> bool:
        """Whether this object holds the owner lock."""
        return self._locked

    @property
    def run_id(self) -> str:
        return self.path.resolve().name

    def is_empty(self) -> bool:
        if not self.path.exists():
            return True
        return not any(p.name != LOCK_NAME for p in self.path.iterdir())

    def acquire(self) -> None:
        """Take the owner lock, or raise RunDirectoryInUse naming the live owner."""
        self.path.mkdir(parents=True, exist_ok=True)
        lock = self.path / LOCK_NAME
        key = str(lock.resolve())
        owner = lock_owner(self.path)
        if owner is not None:
            raise RunDirectoryInUse(
                f"run directory {self.path} is in use by process {owner}; wait for it to "
                f"finish or stop it, or use another --out"
            )
        # O_EXCL closes the race with another process taking a stale lock at the same time.
        lock.unlink(missing_ok=True)
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            found = _read_lock(lock)
            pid = found[0] if found else "unknown"
            raise RunDirectoryInUse(
                f"run directory {self.path} is in use by process {pid}; use another --out"
            ) from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {socket.gethostname()}\n")
        _HELD.add(key)
        self._locked = True

    def release(self) -> None:
        self.detach()
        if not self._locked:
            return
        lock = self.path / LOCK_NAME
        key = str(lock.resolve())
        found = _read_lock(lock)
        if found and found[0] == os.getpid():
            lock.unlink(missing_ok=True)
        _HELD.discard(key)
        self._locked = False

    def clear(self) -> None:
        """Delete everything but the lock (for --fresh --force)."""
        import shutil

        for p in self.path.iterdir():
            if p.name == LOCK_NAME:
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()

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
        write_text(self.config_path, yaml.safe_dump(public_config, sort_keys=False))

    def read_config(self) -> dict[str, Any] | None:
        try:
            data = yaml.safe_load(self.config_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, yaml.YAMLError):
            return None
        return data if isinstance(data, dict) else None

    # ----------------------------------------------------------------- state
    @property
    def state_path(self) -> Path:
        return self.path / STATE_NAME

    def read_state(self) -> TrainState | None:
        if not self.state_path.exists():
            return None
        return TrainState.load(self.state_path)

    def write_state(self, state: TrainState) -> None:
        state.save(self.state_path)

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
        write_json(self.step_dir(step) / name, data)

    def write_step_text(self, step: int, name: str, text: str) -> None:
        write_text(self.step_dir(step) / name, text)

    def write_step_rollouts(self, step: int, rows: Iterable[dict[str, Any]], name: str = "rollouts.jsonl") -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        write_text(self.step_dir(step) / name, lines)

    @property
    def staged_dir(self) -> Path:
        return self.path / "staged"

    @property
    def rollout_cache_path(self) -> Path:
        return self.path / ROLLOUT_CACHE_NAME

    # ----------------------------------------------------------------- summary
    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY_NAME

    def write_summary(self, data: dict[str, Any]) -> None:
        write_json(self.summary_path, data)

    def read_summary(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.summary_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None


# --------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    path: Path
    env: str
    status: str  # "live" | "finished" | "failed" | "stopped" | "interrupted"
    baseline_val: float | None
    best_val: float | None
    steps_done: int
    total_steps: int
    cost_usd: float
    started_at: float | None

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
        }


def _last_terminal_status(events_path: Path) -> str | None:
    """Status from the last terminal event after the last RunStarted (reads the tail)."""
    try:
        size = events_path.stat().st_size
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


def run_info(path: Path) -> RunInfo | None:
    """What `skillopt runs` shows for one directory, or None if it is not a run."""
    rd = RunDirectory(path)
    if not (rd.state_path.exists() or rd.events_path.exists()):
        return None
    try:
        state = rd.read_state()
    except (json.JSONDecodeError, TypeError, KeyError, OSError):
        state = None
    summary = rd.read_summary() or {}
    config = rd.read_config() or {}
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
    if summary.get("cost_usd") is not None:
        cost = float(summary["cost_usd"])
    return RunInfo(
        run_id=path.name,
        path=path,
        env=env or (state.env if state else ""),
        status=status,
        baseline_val=summary.get("baseline_val", state.baseline_score if state else None),
        best_val=summary.get("best_val", state.best_score if state else None),
        steps_done=state.next_step if state else 0,
        total_steps=state.total_steps if state else 0,
        cost_usd=cost,
        started_at=state.started_at if state else None,
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
