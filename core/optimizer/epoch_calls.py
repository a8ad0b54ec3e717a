"""The `llm` strategy's epoch-boundary calls: the slow update (guidance for the protected
slow-update block) and the meta notes (for the optimizer's own next-epoch prompts). Both
see the paired before/after rollouts of a train sample (as published: both skills, and
every pair with its trajectories, within the optimizer's context: `RenderPairs`); both
keep what they had when the reply is unusable, so a bad reply costs an update, never the
guidance or the notes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.optimizer.edit_lists import NONE
from core.optimizer.json_reply import GUIDANCE_SHAPE, NOTES_SHAPE, JsonReply, Shape
from core.optimizer.prompt_templates import render_prompt
from core.optimizer.strategy import EpochContext
from core.run.events import ReflectionText

Ask = Callable[[str, Shape, str], Awaitable[JsonReply]]
# (ctx, the prompt without its pairs) -> the pairs' text, sized to what the prompt leaves
RenderPairs = Callable[[EpochContext, str], str]


def _reflect(ctx: EpochContext, kind: str, text: str) -> None:
    ctx.emit(ReflectionText(step=ctx.step, kind=kind, group=ctx.epoch, text=text))


def _with_pairs(name: str, ctx: EpochContext, render: RenderPairs, **values: object) -> str:
    values["pair_count"] = len(ctx.pairs)
    without = render_prompt(name, pairs="", **values)
    return render_prompt(name, pairs=render(ctx, without), **values)


async def slow_update(ask: Ask, ctx: EpochContext, *, render: RenderPairs) -> str | None:
    """New guidance, or None when there is nothing to learn from, the reply is
    unusable, or the guidance would not change (an empty reply never wipes it)."""
    if not ctx.pairs:
        return None
    prompt = _with_pairs(
        "slow_update",
        ctx,
        render,
        previous_skill=ctx.previous_skill,
        skill=ctx.current_skill,
        guidance=ctx.current_guidance.strip() or NONE,
    )
    reply = await ask(prompt, GUIDANCE_SHAPE, ctx.current_guidance)
    if not reply.ok:
        _reflect(ctx, "slow_update", f"guidance unchanged: {reply.error}")
        return None
    guidance = (reply.value or {})["content"].strip()
    if not guidance or guidance == ctx.current_guidance.strip():
        _reflect(ctx, "slow_update", "guidance unchanged")
        return None
    _reflect(ctx, "slow_update", guidance)
    return guidance


async def meta_notes(ask: Ask, ctx: EpochContext, *, render: RenderPairs) -> str:
    """Notes for the next epoch's optimizer prompts; the previous notes on failure. The
    prompt's current skill is the one the next epoch starts from (after the slow update
    the gate just accepted), and it is told which candidates the gate rejected."""
    if not ctx.pairs:
        return ctx.meta_notes
    prompt = _with_pairs(
        "meta_skill",
        ctx,
        render,
        meta_notes=ctx.meta_notes.strip() or NONE,
        previous_skill=ctx.previous_skill,
        skill=ctx.next_skill or ctx.current_skill,
        rejected=ctx.rejected.strip() or NONE,
    )
    reply = await ask(prompt, NOTES_SHAPE, "")
    if not reply.ok:
        _reflect(ctx, "meta", f"notes unchanged: {reply.error}")
        return ctx.meta_notes
    notes = (reply.value or {})["content"].strip()
    _reflect(ctx, "meta", notes or "(no notes)")
    return notes or ctx.meta_notes
