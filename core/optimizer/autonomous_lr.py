"""The autonomous learning rate (`train.optimizer.lr_control: autonomous`): instead of the
schedule, one optimizer call per step looks at the skill, the ordered pool of merged edits,
the step's rollout statistics, the rejected-edit buffer and the meta notes, and says how
many edits to apply. The answer is clamped to [0, pool]; an unusable reply means 0 (a step
that applies nothing costs a step, a wrong guess could cost the skill). The decision, with
the model's reasoning, confidence and risks, is recorded per step (proposal.json "lr").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from core.environment.contract import RolloutResult
from core.optimizer.edit_lists import NONE, render_edits
from core.optimizer.json_reply import JsonReply, OptimizerOutputError, Shape, need_str
from core.optimizer.prompt_templates import render_prompt
from core.optimizer.strategy import ProposalContext
from core.skill.edits import Edit


def _check_count(obj: dict[str, Any]) -> dict[str, Any]:
    count = obj.get("count")
    if isinstance(count, bool) or not isinstance(count, int | float):
        raise OptimizerOutputError('"count" must be an integer')
    if isinstance(count, float) and not count.is_integer():
        raise OptimizerOutputError('"count" must be a whole number')
    confidence = obj.get("confidence", "")
    return {
        "count": int(count),
        "reasoning": need_str(obj, "reasoning", optional=True),
        "confidence": str(confidence) if confidence is not None else "",
        "risks": need_str(obj, "risks", optional=True),
    }


LR_SHAPE = Shape(
    "autonomous_lr",
    '{"count": 2, "reasoning": "...", "confidence": "medium", "risks": "..."}',
    _check_count,
)


@dataclass(frozen=True)
class LrDecision:
    count: int  # edits to apply, within [0, pool]
    asked: int | None  # what the model said before clamping (None: unusable reply)
    pool: int
    reasoning: str = ""
    confidence: str = ""
    risks: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"control": "autonomous", **asdict(self)}


def rollout_stats(results: list[RolloutResult]) -> str:
    n = len(results)
    failed = sum(1 for r in results if r.hard == 0)
    hard = sum(r.hard for r in results) / n if n else 0.0
    soft = sum(r.soft for r in results) / n if n else 0.0
    return f"{n} items: {failed} failed, {n - failed} passed; mean hard {hard:.3f}, soft {soft:.3f}"


async def decide_edit_count(
    ask: Callable[[str, Shape, str], Awaitable[JsonReply]],
    ctx: ProposalContext,
    pool: list[Edit],
) -> LrDecision:
    """How many of `pool` (best first) this step applies. No call for an empty pool."""
    if not pool:
        return LrDecision(count=0, asked=None, pool=0, reasoning="no candidate edits")
    prompt = render_prompt(
        "autonomous_lr",
        skill=ctx.skill_text,
        stats=rollout_stats(ctx.results),
        edits=render_edits(pool, numbered=True, max_chars=600),
        pool_size=len(pool),
        rejected_buffer=ctx.rejected_buffer.strip() or NONE,
        meta_notes=ctx.meta_notes.strip() or NONE,
    )
    reply = await ask(prompt, LR_SHAPE, ctx.skill_text)
    if not reply.ok:
        return LrDecision(count=0, asked=None, pool=len(pool), error=reply.error or "unusable")
    value = reply.value or {}
    asked = value["count"]
    return LrDecision(
        count=min(max(asked, 0), len(pool)),
        asked=asked,
        pool=len(pool),
        reasoning=value["reasoning"],
        confidence=value["confidence"],
        risks=value["risks"],
    )
