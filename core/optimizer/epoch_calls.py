"""The `llm` strategy's epoch-boundary calls: the slow update (guidance for the protected
slow-update block) and the meta notes (for the optimizer's own next-epoch prompts). Both
see the paired before/after rollouts of a train sample; both keep what they had when the
reply is unusable, so a bad reply costs an update, never the guidance or the notes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.optimizer.edit_lists import NONE
from core.optimizer.json_reply import GUIDANCE_SHAPE, NOTES_SHAPE, JsonReply, Shape
from core.optimizer.prompt_templates import render_prompt
from core.optimizer.reflection_groups import clip, render_pairs
from core.optimizer.strategy import EpochContext
from core.run.events import ReflectionText

Ask = Callable[[str, Shape, str], Awaitable[JsonReply]]


def _reflect(ctx: EpochContext, kind: str, text: str) -> None:
    ctx.emit(ReflectionText(step=ctx.step, kind=kind, group=ctx.epoch, text=text))


async def slow_update(ask: Ask, ctx: EpochContext, *, per_outcome: int) -> str | None:
    """New guidance, or None when there is nothing to learn from, the reply is
    unusable, or the guidance would not change (an empty reply never wipes it)."""
    if not ctx.pairs:
        return None
    prompt = render_prompt(
        "slow_update",
        skill=ctx.current_skill,
        guidance=ctx.current_guidance.strip() or NONE,
        pairs=render_pairs(ctx.pairs, seed=ctx.seed, per_outcome=per_outcome),
        pair_count=len(ctx.pairs),
    )
    reply = await ask(prompt, GUIDANCE_SHAPE, ctx.current_guidance)
    if not reply.ok:
        _reflect(ctx, "slow_update", f"guidance unchanged: {reply.error}")
        return None
    guidance = (reply.value or {})["guidance"].strip()
    if not guidance or guidance == ctx.current_guidance.strip():
        _reflect(ctx, "slow_update", "guidance unchanged")
        return None
    _reflect(ctx, "slow_update", guidance)
    return guidance


async def meta_notes(ask: Ask, ctx: EpochContext, *, per_outcome: int) -> str:
    """Notes for the next epoch's optimizer prompts; the previous notes on failure."""
    if not ctx.pairs:
        return ctx.meta_notes
    prompt = render_prompt(
        "meta_skill",
        meta_notes=ctx.meta_notes.strip() or NONE,
        previous_skill=clip(ctx.previous_skill, 8000),
        skill=clip(ctx.current_skill, 8000),
        pairs=render_pairs(ctx.pairs, seed=ctx.seed, per_outcome=per_outcome),
        pair_count=len(ctx.pairs),
    )
    reply = await ask(prompt, NOTES_SHAPE, "")
    if not reply.ok:
        _reflect(ctx, "meta", f"notes unchanged: {reply.error}")
        return ctx.meta_notes
    notes = (reply.value or {})["notes"].strip()
    _reflect(ctx, "meta", notes or "(no notes)")
    return notes or ctx.meta_notes
