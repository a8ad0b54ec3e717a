"""The autonomous learning rate (`train.optimizer.lr_control: autonomous`): instead of the
schedule, one optimizer call per step looks at the skill, the ranked pool (merged edits in
`patch` mode, merged suggestions in `rewrite` mode), the step's rollout statistics, the
rejected-edit buffer and the meta notes, and says how many of the pool to apply. The
answer is clamped to [0, pool]; an unusable reply means 0 (a step that applies nothing
costs a step, a wrong guess could cost the skill). The decision, with the model's
reasoning, confidence and risks, is recorded per step (proposal.json "lr", and a
LearningRateDecided event for the Run screen).

`full_rewrite` has no ranked pool, only one merged candidate, so the combination is
refused when the config is loaded (core.train_config) rather than given a meaning
the published method does not define.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from core.environment.contract import RolloutResult
from core.optimizer import reply_schemas as schemas
from core.optimizer.edit_lists import NONE, render_edits
from core.optimizer.json_reply import JsonReply, OptimizerOutputError, Shape, need_str
from core.optimizer.prompt_templates import render_prompt
from core.optimizer.strategy import ProposalContext
from core.optimizer.suggestions import Suggestion, render_suggestions
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
    schemas.LEARNING_RATE,
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
    """How many of `pool` (edits, best first) this step applies. No call for an empty pool."""
    if not pool:
        return LrDecision(count=0, asked=None, pool=0, reasoning="no candidate edits")
    edits = render_edits(pool, numbered=True, max_chars=600)
    return await _decide(ask, ctx, "autonomous_lr", len(pool), edits=edits)


async def decide_suggestion_count(
    ask: Callable[[str, Shape, str], Awaitable[JsonReply]],
    ctx: ProposalContext,
    pool: list[Suggestion],
) -> LrDecision:
    """How many of `pool` (suggestions, best first) go into this step's rewrite; 0 means
    no rewrite and no candidate. No call for an empty pool."""
    if not pool:
        return LrDecision(count=0, asked=None, pool=0, reasoning="no candidate suggestions")
    suggestions = render_suggestions(pool, numbered=True, max_chars=600)
    return await _decide(ask, ctx, "autonomous_lr_suggestions", len(pool), suggestions=suggestions)


async def _decide(
    ask: Callable[[str, Shape, str], Awaitable[JsonReply]],
    ctx: ProposalContext,
    template: str,
    size: int,
    **pool: str,
) -> LrDecision:
    prompt = render_prompt(
        template,
        skill=ctx.skill_text,
        stats=rollout_stats(ctx.results),
        pool_size=size,
        rejected_buffer=ctx.rejected_buffer.strip() or NONE,
        meta_notes=ctx.meta_notes.strip() or NONE,
        **pool,
    )
    reply = await ask(prompt, LR_SHAPE, ctx.skill_text)
    if not reply.ok:
        return LrDecision(count=0, asked=None, pool=size, error=reply.error or "unusable")
    value = reply.value or {}
    asked = value["count"]
    return LrDecision(
        count=min(max(asked, 0), size),
        asked=asked,
        pool=size,
        reasoning=value["reasoning"],
        confidence=value["confidence"],
        risks=value["risks"],
    )


def decision_text(decision: LrDecision) -> str:
    """The decision as one reflection line (reflections.json and the Reflection tab)."""
    why = decision.reasoning or decision.error or "no reason given"
    return f"apply {decision.count} of {decision.pool}: {why}"
