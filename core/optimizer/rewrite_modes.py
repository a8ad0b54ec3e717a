"""The whole-skill update modes of the `llm` strategy (train.optimizer.update_mode).

`rewrite`: analysts propose typed suggestions (core.optimizer.suggestions) instead of
edits; the lists are merged level by level (failure lists first, as edits are) and, when
more remain than the step's budget, ranked; then one call rewrites the skill from the
selected ones; with the autonomous learning rate the whole pool is ranked and one call
decides how many of it go into the rewrite (0: no rewrite, no candidate). `full_rewrite`:
each group's analyst writes a whole candidate with a change summary; the merge tree picks
one of each batch or combines them; nothing is ranked, so there is no pool for the
autonomous learning rate to size (the config refuses the combination).

Either way the result is a candidate text, not edits: the trainer checks that its
protected blocks are byte-identical (else it is invalid and goes to the buffer), then
validates and gates it like any candidate. An unusable reply costs this step's candidate,
never the run (as in patch mode).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.optimizer.autonomous_lr import decide_suggestion_count, decision_text
from core.optimizer.edit_lists import NONE, rank_answer, rank_order, ranked_selection
from core.optimizer.json_reply import RANK_SHAPE, JsonReply, Shape
from core.optimizer.merge_tree import ORIGIN, PRIORITY, merge_levels, merge_trees, merged_kind
from core.optimizer.prompt_templates import render_prompt
from core.optimizer.reflection_groups import FAILURE, Group
from core.optimizer.strategy import Proposal, ProposalContext
from core.optimizer.suggestions import (
    CANDIDATE_SHAPE,
    PICK_SHAPE,
    REWRITE_SHAPE,
    SUGGESTIONS_SHAPE,
    Suggestion,
    by_priority,
    dedupe_suggestions,
    render_suggestions,
)


class LLMOptimizer(Protocol):
    """What these modes use of core.optimizer.llm.LLMOptimizer (a protocol: no cycle)."""

    merges: str  # "trees" | "capped" (core.optimizer.merge_tree)

    async def ask(self, prompt: str, shape: Shape, skill: str = "") -> JsonReply: ...

    def reflect(
        self,
        ctx: ProposalContext,
        reflections: list[dict],
        kind: str,
        group: int,
        text: str,
        **record: Any,
    ) -> None: ...

    def groups(self, ctx: ProposalContext) -> list[Group]: ...

    def lapse_rules(self, group: Group, change_word: str) -> str: ...

    def render_items(self, group: Group, skill_text: str, prompt_without_items: str) -> str: ...


OUTCOME = {FAILURE: "FAILED", "success": "got right"}


@dataclass
class SuggestionList:
    kind: str  # FAILURE, SUCCESS or MIXED (core.optimizer.merge_tree)
    suggestions: list[Suggestion]


@dataclass
class Candidate:
    kind: str
    text: str
    summary: str
    sources: list[str] = field(default_factory=list)  # "failure 0", ... behind it


def _analyst_prompt(opt: LLMOptimizer, name: str, ctx: ProposalContext, group: Group) -> str:
    values: dict[str, Any] = dict(
        outcome=OUTCOME.get(group.kind, group.kind),
        skill=ctx.skill_text,
        item_count=len(group.results),
        edit_budget=ctx.edit_budget,
        rejected_buffer=ctx.rejected_buffer.strip() or NONE,
        meta_notes=ctx.meta_notes.strip() or NONE,
        lapse_rules=opt.lapse_rules(group, "a suggestion"),
    )
    items = opt.render_items(group, ctx.skill_text, render_prompt(name, items="", **values))
    return render_prompt(name, items=items, **values)


# ------------------------------------------------------------------------ rewrite


async def propose_rewrite(opt: LLMOptimizer, ctx: ProposalContext) -> tuple[Proposal, list[str]]:
    """(the proposal with its candidate, the analysts' lapse notes)."""
    reflections: list[dict] = []
    lapses: list[str] = []
    lists = await asyncio.gather(
        *(_suggest(opt, ctx, g, reflections, lapses) for g in opt.groups(ctx))
    )
    merged = await _merge_suggestions(opt, ctx, list(lists), reflections)
    proposal = Proposal(edits=[], reflections=reflections)
    if ctx.lr_control == "autonomous":
        # Rank the whole pool first, so "carry out N" means the N best.
        pool = await _rank_suggestions(opt, ctx, merged, reflections, budget=len(merged))
        decision = await decide_suggestion_count(opt.ask, ctx, pool)
        proposal.lr = decision.to_dict()
        opt.reflect(ctx, reflections, "lr", 0, decision_text(decision))
        selected = pool[: decision.count]
    else:
        selected = await _rank_suggestions(opt, ctx, merged, reflections, budget=ctx.budget)
    proposal.suggestions = [s.to_dict() for s in selected]
    if not selected:
        return proposal, lapses
    prompt = render_prompt(
        "rewrite",
        skill=ctx.skill_text,
        suggestions=render_suggestions(selected, numbered=True),
        meta_notes=ctx.meta_notes.strip() or NONE,
    )
    reply = await opt.ask(prompt, REWRITE_SHAPE, ctx.skill_text)
    if not reply.ok:
        opt.reflect(ctx, reflections, "rewrite", 0, f"no candidate: {reply.error}")
        return proposal, lapses
    value = reply.value or {}
    proposal.candidate = value["skill"]
    opt.reflect(ctx, reflections, "rewrite", 0, value["summary"] or "rewritten")
    return proposal, lapses


async def _suggest(
    opt: LLMOptimizer,
    ctx: ProposalContext,
    group: Group,
    reflections: list[dict],
    lapses: list[str],
) -> SuggestionList:
    reply = await opt.ask(
        _analyst_prompt(opt, "analyst_suggestions", ctx, group), SUGGESTIONS_SHAPE, ctx.skill_text
    )
    if not reply.ok:
        text = f"no suggestions from this group: {reply.error}"
        opt.reflect(ctx, reflections, group.kind, group.index, text)
        return SuggestionList(group.kind, [])
    value = reply.value or {}
    found = value["suggestions"][: ctx.edit_budget]
    if group.kind == FAILURE:
        lapses.extend(value["lapses"])
    opt.reflect(
        ctx,
        reflections,
        group.kind,
        group.index,
        (value["analysis"] or "(no analysis given)")
        + (f"\n[ignored {value['dropped']} unusable entries]" if value["dropped"] else ""),
        items=[r.item_id for r in group.results],
        suggestions=[s.to_dict() for s in found],
        lapses=value["lapses"] if group.kind == FAILURE else [],
    )
    return SuggestionList(group.kind, found)


async def _merge_suggestions(
    opt: LLMOptimizer, ctx: ProposalContext, lists: list[SuggestionList], reflections: list[dict]
) -> list[Suggestion]:
    seen: set[tuple[str, str]] = set()
    level = []
    for item in sorted(lists, key=lambda p: PRIORITY[p.kind]):
        item.suggestions = dedupe_suggestions(item.suggestions, seen)
        if item.suggestions:
            level.append(item)
    if not level:
        return []
    most = max(ctx.edit_budget, ctx.budget) if opt.merges == "capped" else None
    shape = merge_levels if opt.merges == "capped" else merge_trees
    merged = await shape(
        level,
        max(ctx.merge_batch_size, 2),
        lambda batch, index: _merge_batch(opt, ctx, batch, index, most, reflections),
    )
    assert merged is not None  # level is not empty
    return merged.suggestions


async def _merge_batch(
    opt: LLMOptimizer,
    ctx: ProposalContext,
    batch: list[SuggestionList],
    index: int,
    most: int | None,
    reflections: list[dict],
) -> SuggestionList:
    kind = merged_kind(batch)  # type: ignore[arg-type]
    sections = [
        f"## List {i + 1} ({ORIGIN[p.kind]})\n{render_suggestions(p.suggestions)}"
        for i, p in enumerate(batch)
    ]
    prompt = render_prompt(
        "merge_suggestions",
        skill=ctx.skill_text,
        proposals="\n\n".join(sections),
        at_most="" if most is None else f" of at most {most}",
        meta_notes=ctx.meta_notes.strip() or NONE,
    )
    reply = await opt.ask(prompt, SUGGESTIONS_SHAPE, ctx.skill_text)
    inputs = [{"kind": p.kind, "suggestions": [s.to_dict() for s in p.suggestions]} for p in batch]
    if not reply.ok:
        kept = dedupe_suggestions([s for p in batch for s in p.suggestions])[:most]
        text = f"merge failed, kept the lists in priority order: {reply.error}"
    else:
        value = reply.value or {}
        kept = dedupe_suggestions(value["suggestions"])[:most]
        text = value["analysis"] or f"merged {len(batch)} lists"
    opt.reflect(
        ctx,
        reflections,
        "merge",
        index,
        text,
        inputs=inputs,
        output_kind=kind,
        suggestions=[s.to_dict() for s in kept],
    )
    return SuggestionList(kind, kept)


async def _rank_suggestions(
    opt: LLMOptimizer,
    ctx: ProposalContext,
    merged: list[Suggestion],
    reflections: list[dict],
    *,
    budget: int,
) -> list[Suggestion]:
    """The top `budget` of `merged`: one ranking call when more remain, applied as edits'
    ranking is (train.optimizer.ranking: `selected`, published, only the ranker's choice;
    `padded` fills the budget). With the autonomous learning rate, budget = the pool: the
    call orders all of it, best first, and the count decision then takes a prefix."""
    full_order = ctx.lr_control == "autonomous"
    ranking = "padded" if full_order else ctx.ranking
    if len(merged) <= 1 or (len(merged) <= budget and not full_order):
        return merged
    prompt = render_prompt(
        "rank_suggestions",
        skill=ctx.skill_text,
        suggestions=render_suggestions(merged, numbered=True, max_chars=600),
        budget=budget,
        meta_notes=ctx.meta_notes.strip() or NONE,
        answer_rule=rank_answer(ranking, budget, "suggestion"),
    )
    reply = await opt.ask(prompt, RANK_SHAPE, "")
    if not reply.ok:
        text = f"ranking failed, kept high priority first: {reply.error}"
        opt.reflect(ctx, reflections, "rank", 0, text)
        return by_priority(merged)[:budget]
    value = reply.value or {}
    order = rank_order(value["order"], len(merged))
    opt.reflect(
        ctx,
        reflections,
        "rank",
        0,
        value["reason"] or f"order {order}",
        order=order,
        ranked=[merged[i].to_dict() for i in order],
    )
    return [merged[i] for i in ranked_selection(value["order"], len(merged), budget, ranking)]


# ------------------------------------------------------------------- full rewrite


async def propose_full_rewrite(
    opt: LLMOptimizer, ctx: ProposalContext
) -> tuple[Proposal, list[str]]:
    if ctx.lr_control != "fixed":  # the config refuses it; never ignore it silently
        raise ValueError("update_mode full_rewrite has no ranked pool for lr_control autonomous")
    reflections: list[dict] = []
    lapses: list[str] = []
    found = await asyncio.gather(
        *(_write_candidate(opt, ctx, g, reflections, lapses) for g in opt.groups(ctx))
    )
    best = await merge_levels(
        [c for c in found if c is not None],
        max(ctx.merge_batch_size, 2),
        lambda batch, index: _pick(opt, ctx, batch, index, reflections),
    )
    proposal = Proposal(edits=[], reflections=reflections)
    if best is not None:
        proposal.candidate = best.text
        proposal.suggestions = [
            {"kind": "full_rewrite", "summary": best.summary, "sources": best.sources}
        ]
    return proposal, lapses


async def _write_candidate(
    opt: LLMOptimizer,
    ctx: ProposalContext,
    group: Group,
    reflections: list[dict],
    lapses: list[str],
) -> Candidate | None:
    prompt = _analyst_prompt(opt, "analyst_full_rewrite", ctx, group)
    reply = await opt.ask(prompt, CANDIDATE_SHAPE, ctx.skill_text)
    if not reply.ok:
        opt.reflect(ctx, reflections, group.kind, group.index, f"no candidate: {reply.error}")
        return None
    value = reply.value or {}
    if group.kind == FAILURE:
        lapses.extend(value["lapses"])
    opt.reflect(
        ctx,
        reflections,
        group.kind,
        group.index,
        value["analysis"] or "(no analysis given)",
        items=[r.item_id for r in group.results],
        summary=value["summary"],
    )
    return Candidate(group.kind, value["skill"], value["summary"], [f"{group.kind} {group.index}"])


async def _pick(
    opt: LLMOptimizer,
    ctx: ProposalContext,
    batch: list[Candidate],
    index: int,
    reflections: list[dict],
) -> Candidate:
    kind = merged_kind(batch)  # type: ignore[arg-type]
    sections = [
        f"## Candidate {i} ({ORIGIN[c.kind]})\nSummary: {c.summary or '(none)'}\n"
        f"<candidate>\n{c.text}\n</candidate>"
        for i, c in enumerate(batch)
    ]
    prompt = render_prompt(
        "merge_full_rewrite",
        skill=ctx.skill_text,
        candidates="\n\n".join(sections),
        meta_notes=ctx.meta_notes.strip() or NONE,
    )
    reply = await opt.ask(prompt, PICK_SHAPE, "".join(c.text for c in batch))
    sources = [s for c in batch for s in c.sources]
    value = reply.value or {}
    if not reply.ok or (value["pick"] is not None and not 0 <= value["pick"] < len(batch)):
        why = reply.error or f"pick {value.get('pick')} out of range"
        opt.reflect(ctx, reflections, "merge", index, f"merge failed, kept candidate 0: {why}")
        return batch[0]
    if value["pick"] is not None:
        chosen = batch[value["pick"]]
        text, summary = chosen.text, value["summary"] or chosen.summary
    else:
        text, summary = value["skill"], value["summary"]
    opt.reflect(
        ctx, reflections, "merge", index, summary or "merged", pick=value["pick"], sources=sources
    )
    return Candidate(kind, text, summary, sources)
