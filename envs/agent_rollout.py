"""What the environments whose target is a coding agent share (repo_tasks; officeqa and
spreadsheetbench with backend claude_code or codex): a staging folder holding only an
item's own files (the agent's fresh workspace is copied from it), and the rollout result of
one agent run, whose events are the trajectory the optimizer reads."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from core.environment.contract import RolloutResult, Score, TaskItem
from core.models.agents.events import summarize_events
from core.models.types import AgentOutcome, Message
from core.tree_extract import left_out_note

PREDICTION_CHARS = 4000


@contextlib.contextmanager
def staged_files(files: Mapping[str, Path]) -> Iterator[Path]:
    """A temporary folder holding a copy of each `files[name]` under `name` (a relative
    path), removed on exit. Copies, never links: a link would lead out of the workspace."""
    with tempfile.TemporaryDirectory(prefix="skillopt-agent-files-") as tmp:
        root = Path(tmp)
        for name, source in files.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        yield root


def exit_note(status: int, workspace: str | None, unconfined: str = "") -> str:
    kept = f" (workspace kept at {workspace})" if workspace else ""
    reach = f"; unconfined: {unconfined}" if unconfined else ""
    return f"exit status {status}{kept}{reach}"


def agent_trajectory(prompt: str, outcome: AgentOutcome) -> list[Message]:
    """The prompt, the agent's messages and tool calls, what it changed, how it ended."""
    return [
        {"role": "user", "content": prompt},
        *summarize_events(outcome.events),
        {"role": "diff", "content": outcome.diff or "(no changes)"},
        {
            "role": "exit",
            "content": exit_note(outcome.exit_status, outcome.workspace, outcome.unconfined),
        },
        *_left_out(outcome),
    ]


def _left_out(outcome: AgentOutcome) -> list[Message]:
    note = left_out_note(outcome.left_out)
    return [{"role": "workspace", "content": note}] if note else []


def changes_and_text(outcome: AgentOutcome) -> str:
    """A prediction for a task done by changing files: the diff, then the final message."""
    text = (outcome.diff or "(no changes)") + (f"\n{outcome.text}" if outcome.text else "")
    return text[:PREDICTION_CHARS]


def agent_result(
    item: TaskItem, prediction: str, score: Score, prompt: str, outcome: AgentOutcome
) -> RolloutResult:
    """A scored agent run; usage and latency are the run's."""
    return RolloutResult.scored(
        item,
        prediction,
        score,
        agent_trajectory(prompt, outcome),
        input_tokens=outcome.usage.input_tokens,
        output_tokens=outcome.usage.output_tokens,
        latency_s=outcome.latency_s,
    )
