"""One rollout in full: its scores and the trajectory the run directory kept for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from core.run.events import RolloutFinished
from skillopt_tui.run_words import activity


def find_record(run_dir: Path, rollout: RolloutFinished) -> dict[str, Any] | None:
    """The step's saved rollout record for this item and phase, if the run kept one."""
    step_dir = run_dir / "steps" / f"{rollout.step:04d}"
    files = sorted(step_dir.glob("*.jsonl")) if step_dir.is_dir() else []
    # a file named for the rollout's phase or split first (gate rollouts are in *val*)
    files.sort(key=lambda p: (rollout.phase not in p.name and rollout.split not in p.name, p.name))
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if (
                isinstance(record, dict)
                and record.get("item_id") == rollout.item_id
                and record.get("phase", rollout.phase) == rollout.phase
            ):
                return record
    return None


def trajectory_text(rollout: RolloutFinished, record: dict[str, Any] | None) -> Text:
    lines = [
        Text.assemble(
            ("item ", "dim"),
            (rollout.item_id, "bold"),
            ("  phase ", "dim"),
            rollout.phase,
            ("  split ", "dim"),
            rollout.split,
        ),
        Text.assemble(
            ("score ", "dim"),
            f"hard {rollout.hard:.2f} soft {rollout.soft:.2f}",
            ("  latency ", "dim"),
            f"{rollout.latency_s:.2f}s",
            ("  tokens ", "dim"),
            f"{rollout.input_tokens} in / {rollout.output_tokens} out",
            ("  cached" if rollout.cached else "", "yellow"),
        ),
        Text(""),
    ]
    for key in ("question", "reference", "explanation", "error"):
        if (record or {}).get(key):
            lines.append(Text.assemble((f"{key}: ", "dim"), str(record[key])))
    if record and any(record.get(k) for k in ("question", "reference", "explanation", "error")):
        lines.append(Text(""))
    messages = (record or {}).get("trajectory") or (record or {}).get("messages")
    if isinstance(messages, list):
        for msg in messages:
            if isinstance(msg, dict):
                lines.append(Text(f"{msg.get('role', '?')}:", style="bold cyan"))
                lines.append(Text(str(msg.get("content", ""))))
            else:
                lines.append(Text(str(msg)))
    else:
        lines.append(Text("prediction:", style="bold cyan"))
        lines.append(Text(rollout.prediction or "(empty)"))
        if record is None:
            lines.append(Text("(no trajectory saved for this rollout)", style="dim"))
    return Text("\n").join(lines)


class TrajectoryScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close")]

    def __init__(self, rollout: RolloutFinished, record: dict[str, Any] | None) -> None:
        super().__init__()
        self.rollout = rollout
        self.record = record

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide"):
            where = activity(self.rollout)
            yield Label(f"Trajectory · {where} · {self.rollout.item_id}", id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                yield Static(trajectory_text(self.rollout, self.record))
        yield Footer(compact=True, show_command_palette=False)  # hides the screen's keys
