"""One rollout in full: what was asked, the prompt the target saw, its reply, the reference
and the evaluator's explanation, so a score of 0.00 can be understood.

The events keep only the first 200 characters of a prediction. The whole rollout is in
the run directory: the step files (steps/NNNN/rollouts.jsonl for train rollouts,
*_val_rollouts.jsonl for gate rollouts) and rollouts.sqlite, which holds every phase's —
baseline, slow update, final val and test rollouts have no step file of their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from core.run.directory import ROLLOUT_CACHE_NAME
from core.run.events import RolloutFinished
from core.training.rollout_cache import find_saved
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.run_words import activity, rollout_step

COLLAPSED_LINES = 3  # system and skill text shown by its first lines until `e`
LONG_MESSAGE = 6  # lines beyond which a prompt message is collapsed


def _step_file_record(run_dir: Path, rollout: RolloutFinished) -> dict[str, Any] | None:
    step = rollout_step(rollout)
    if step is None or rollout.phase == "slow_update":  # no step file holds these
        return None
    step_dir = run_dir / "steps" / f"{step:04d}"
    if not step_dir.is_dir():
        return None
    # train rollouts are in rollouts.jsonl, a candidate's val rollouts in *_val_rollouts
    files = sorted(step_dir.glob("*.jsonl"))
    files.sort(key=lambda p: ("val_rollouts" in p.name) != (rollout.split == "val"))
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


def find_record(run_dir: Path, rollout: RolloutFinished) -> dict[str, Any] | None:
    """The run directory's whole record of this rollout: the result stored for its skill,
    item and split in rollouts.sqlite (exact for every phase), else the step's file."""
    saved = find_saved(
        run_dir / ROLLOUT_CACHE_NAME, rollout.skill_hash, rollout.item_id, rollout.split
    )
    if saved is not None:
        return saved.to_dict()
    return _step_file_record(run_dir, rollout)


def _split_reply(messages: list) -> tuple[list, Any]:
    """(the prompt messages, the target's last reply) of a trajectory."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            return messages[:i] + messages[i + 1 :], msg.get("content", "")
    return messages, None


def _message_lines(msg: Any, expanded: bool) -> list[Text]:
    if not isinstance(msg, dict):
        return [Text(str(msg))]
    role = str(msg.get("role", "?"))
    body = str(msg.get("content", ""))
    lines = body.splitlines() or [""]
    collapse = not expanded and (role == "system" or len(lines) > LONG_MESSAGE)
    out = [Text(f"{role}:", style="bold cyan")]
    shown = lines[:COLLAPSED_LINES] if collapse else lines
    out += [Text(line) for line in shown]
    if collapse and len(lines) > len(shown):
        out.append(Text(f"… {len(lines) - len(shown)} more lines (e expands)", style="dim italic"))
    return out


def _field(name: str, value: Any, style: str = "") -> list[Text]:
    text = str(value)
    return [Text(f"{name}:", style="bold"), Text(text or "(empty)", style=style), Text("")]


def trajectory_text(
    rollout: RolloutFinished, record: dict[str, Any] | None, expanded: bool = False
) -> Text:
    record = record or {}
    lines = [
        Text.assemble(
            ("item ", "dim"),
            (rollout.item_id, "bold"),
            ("  ", ""),
            activity(rollout),
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
    ]
    if rollout.truncated or record.get("truncated"):
        lines.append(
            Text(
                "the reply was cut at the target's token limit: scored as given, unfinished",
                style="bold yellow",
            )
        )
    lines.append(Text(""))
    if record.get("question"):
        lines += _field("question", record["question"])
    messages = record.get("trajectory") or record.get("messages")
    prompt, reply = _split_reply(messages) if isinstance(messages, list) else ([], None)
    if reply is None:
        reply = record.get("prediction") or rollout.prediction
    lines += _field("reply", reply, "bold")
    if record.get("reference"):
        lines += _field("reference", record["reference"], "green")
    if record.get("explanation"):
        lines += _field("explanation", record["explanation"])
    if record.get("error"):
        lines += _field("error", record["error"], "bold red")
    if prompt:
        lines.append(Text("prompt the target saw:", style="bold"))
        for msg in prompt:
            lines += _message_lines(msg, expanded)
    elif not record:
        lines.append(
            Text(
                "(the run directory keeps no record of this rollout: only the start of its "
                "prediction, above, from the event log)",
                style="dim",
            )
        )
    return Text("\n").join(lines)


class TrajectoryScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,enter,q", "dismiss", "Close"),
        Binding("e", "expand", "Expand prompt", tooltip="Show the system and skill text in full"),
    ]

    def __init__(self, rollout: RolloutFinished, record: dict[str, Any] | None) -> None:
        super().__init__()
        self.rollout = rollout
        self.record = record
        self.expanded = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide"):
            where = activity(self.rollout)
            yield Label(f"Trajectory · {where} · {self.rollout.item_id}", id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                yield Static(trajectory_text(self.rollout, self.record), id="trajectory")
        yield FittingFooter(compact=True, show_command_palette=False)  # hides the screen's keys

    def action_expand(self) -> None:
        self.expanded = not self.expanded
        body = trajectory_text(self.rollout, self.record, self.expanded)
        self.query_one("#trajectory", Static).update(body)
