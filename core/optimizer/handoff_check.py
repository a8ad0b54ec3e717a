"""Check handoff answers already written, the way the run will read them, without running
it: the file rules (core/models/handoff_files.py), then the JSON shape the prompt asked for
(every Shape registers itself by name in core/optimizer/json_reply.SHAPES; a face imports
the modules defining the shapes it serves, e.g. Sleep's judge and miner)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.models.handoff_files import HandoffFolder, PromptStatus, read_answer
from core.optimizer import autonomous_lr, execution_notes, suggestions  # noqa: F401 - shapes
from core.optimizer.json_reply import SHAPES, OptimizerOutputError, parse_reply


@dataclass(frozen=True)
class CheckedPrompt:
    status: PromptStatus
    verdict: str  # waiting | ok | rejected
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = self.status.to_dict()
        data.update(
            check=self.verdict,
            why=self.why,
            expects=self.expects,
            how_to_check="run `skillopt sleep handoff` again after writing the answer",
        )
        return data

    @property
    def expects(self) -> str:
        info = self.status.info
        if info.shape:
            return f"one JSON object ({info.shape}), like {info.example}"
        if info.expects:
            return info.expects
        return "free text (the reply itself)"


def check_folder(folder: Path) -> list[CheckedPrompt]:
    """Every prompt of the folder that still matters: the waiting ones, and the written
    answers the next run has not used yet, each checked."""
    handoff = HandoffFolder(folder)
    out = []
    for status in handoff.statuses():
        if status.state != "answered":  # waiting, or rejected with its reason
            out.append(CheckedPrompt(status, status.state, status.reason))
            continue
        text = read_answer(status.answer).text
        if text is not None and handoff.is_new_answer(status.prompt.name, text):
            out.append(CheckedPrompt(status, *check_answer(text, status.info.shape)))
    return out


def check_answer(text: str, shape_name: str) -> tuple[str, str]:
    """("ok", "") or ("rejected", why) for an answer to a prompt that asked for `shape_name`
    (free text when no shape is registered under that name)."""
    shape = SHAPES.get(shape_name)
    if shape is None:
        return "ok", ""
    try:
        parse_reply(text, shape)
    except OptimizerOutputError as exc:
        return "rejected", f"{exc}; expected {shape.example}"
    return "ok", ""
