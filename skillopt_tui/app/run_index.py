"""The runs directory as the home screen's table.

Uses `core.run_dir.list_runs` when the trainer provides it (it knows whether a run's
process is still alive); otherwise folds each run's own `events.jsonl`, which is the same
source the Run screen follows. Blocking file reads: call from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.events import read_events
from skillopt_tui.app.run_feed import EVENTS_FILE, RunFeed


@dataclass(frozen=True)
class RunRow:
    run_id: str
    path: Path
    env: str
    status: str
    baseline_val: float | None
    best_val: float | None
    steps_done: int
    total_steps: int
    cost_usd: float
    started_at: float | None  # event timestamp (seconds), for ordering


def list_run_rows(runs_dir: Path) -> list[RunRow]:
    """Newest first. A missing runs directory is an empty list (nothing has run yet)."""
    try:
        from core.run_dir import list_runs  # the trainer's index, when present
    except ImportError:
        list_runs = None
    if list_runs is not None:
        return [_from_info(info) for info in list_runs(runs_dir)]
    if not runs_dir.is_dir():
        return []
    rows = [_from_events(d) for d in runs_dir.iterdir() if (d / EVENTS_FILE).is_file()]
    return sorted(rows, key=lambda r: (r.started_at or 0.0, r.run_id), reverse=True)


def _from_info(info: object) -> RunRow:
    started = getattr(info, "started_at", None)
    if started is not None and not isinstance(started, int | float):
        started = getattr(started, "timestamp", lambda: None)()
    return RunRow(
        run_id=info.run_id, path=Path(info.path), env=info.env, status=info.status,
        baseline_val=info.baseline_val, best_val=info.best_val, steps_done=info.steps_done,
        total_steps=info.total_steps, cost_usd=info.cost_usd or 0.0, started_at=started)


def _from_events(run_dir: Path) -> RunRow:
    feed = RunFeed()
    events = list(read_events(run_dir / EVENTS_FILE))
    first_ts = events[0].ts if events else None
    feed.apply(events)
    steps_done = max((p.step for p in feed.steps), default=0)
    return RunRow(
        run_id=feed.header.run_id or run_dir.name, path=run_dir, env=feed.header.env,
        status=feed.status.status, baseline_val=feed.status.baseline_val,
        best_val=feed.status.best_val, steps_done=steps_done,
        total_steps=feed.header.total_steps,
        cost_usd=feed.budget.cost_usd if feed.budget else 0.0, started_at=first_ts)
