"""A rollout whose reply was cut at the target's token limit is marked in the rollouts
table (tokens "cut") and in its trajectory (issue 22 item 2), so an unfinished reply is
not read as a wrong one; a complete reply is not marked."""

from __future__ import annotations

from core.run.events import RolloutFinished
from skillopt_tui.app.widgets.rollouts_table import _cells
from skillopt_tui.app.widgets.trajectory_screen import trajectory_text


def rollout(truncated: bool) -> RolloutFinished:
    return RolloutFinished(
        phase="train", step=0, split="train", skill_hash="h", item_id="i1", task_type="t",
        hard=0.0, soft=0.0, latency_s=1.0, input_tokens=40, output_tokens=512,
        truncated=truncated,
    )  # fmt: skip


def test_the_table_marks_a_cut_reply_in_its_tokens_cell():
    assert _cells(rollout(True))[-1] == "40+512 cut"
    assert _cells(rollout(False))[-1] == "40+512"


def test_the_trajectory_says_the_reply_was_cut():
    cut = trajectory_text(rollout(True), {"prediction": "The answer is"}).plain
    assert "cut at the target's token limit" in cut
    assert "token limit" not in trajectory_text(rollout(False), {"prediction": "Paris"}).plain
