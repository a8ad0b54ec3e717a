"""The `llm` optimizer strategy: an optimizer model reflects on trajectories (DESIGN §4).

One step: analysts read groups of failures and of successes (concurrently; the model
client bounds concurrency) and each proposes at most `edit_budget` edits; the proposal
lists are merged hierarchically, failure-driven lists first so they win conflicts; if more
edits remain than the step's budget, one ranking call orders them and the top `budget`
survive. Every call that returns unusable JSON gets one repair re-ask; a call that still
fails (or was truncated) contributes nothing, and its reflection says why, so a bad reply
costs edits, never the run. Model errors (budget cap, bad key, retries exhausted)
propagate: the trainer stops at a step boundary and the run stays resumable.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from core.models.call_label import labelled
from core.models.ledger import stage
from core.models.types import Completion, Message
from core.optimizer import epoch_calls
from core.optimizer.autonomous_lr import decide_edit_count, decision_text
from core.optimizer.call_budget import CHARS_PER_TOKEN, call_timeout, completion_budget
from core.optimizer.edit_lists import (
    NONE,
    dedupe,
    rank_answer,
    rank_order,
    ranked_selection,
    render_edits,
    render_unmatched,
)
from core.optimizer.execution_notes import update_notes
from core.optimizer.json_reply import (
    ANALYST_SHAPE,
    MERGE_SHAPE,
    RANK_SHAPE,
    JsonReply,
    Shape,
    ask_json,
)
from core.optimizer.merge_tree import (
    ORIGIN,
    Proposals,
    dedupe_lists,
    evidence_of,
    merge_levels,
    merge_trees,
    merged_kind,
    sources_of,
    tree_node,
)
from core.optimizer.prompt_templates import load_prompt, render_prompt
from core.optimizer.reflection_groups import (
    FAILURE,
    SUCCESS,
    Group,
    make_groups,
    render_pairs,
    render_results,
    render_results_within,
)
from core.optimizer.rewrite_modes import propose_full_rewrite, propose_rewrite
from core.optimizer.strategy import EpochContext, Proposal, ProposalContext
from core.optimizer.suggestions import REWRITE_SHAPE
from core.run.events import ReflectionText
from core.skill.edits import Edit

# The ledger's stage of each optimizer call, by the name of the reply shape it asks for
# (shapes of other kinds — rewrite, suggestions, notes — are their own stage).
_STAGES = {"meta_skill": "meta"}

UPDATE_MODES = ("patch", "rewrite", "full_rewrite")
MERGE_SHAPES = ("trees", "capped")  # core.optimizer.merge_tree


class OptimizerClient(Protocol):
    async def complete(
        self, messages: list[Message], *, role: str = ..., **settings: Any
    ) -> Completion: ...


def task_guide(ctx: ProposalContext, kind: str) -> str:
    """The environment's guide for this analyst kind as a prompt section ("" if none)."""
    guide = ctx.analyst_guides.get(kind, "").strip()
    title = "failures" if kind == FAILURE else "successes"
    return f"# What {title} look like in this task\n{guide}\n\n" if guide else ""


class LLMOptimizer:
    """`LLMOptimizer(client, role="optimizer", json_mode=False, item_chars="auto",
    pairs_per_outcome=None, max_tokens_floor=None, ..., **settings)`: `settings` are passed
    to every `complete` call on top of the role's config. Each call carries its reply
    shape's JSON schema, of which the role's `structured` mode decides what is sent
    (core/models/structured.py); `json_mode` sends `response_format={"type":
    "json_object"}` instead, whatever that mode (a caller's own format is kept). With `max_tokens_floor` (the role's max_tokens) each call's
    max_tokens and timeout are sized from its prompt and the skill (core.optimizer.
    call_budget), up to `max_tokens_ceiling`; without it the role's max_tokens is used."""

    name = "llm"

    def __init__(
        self,
        client: OptimizerClient,
        *,
        role: str = "optimizer",
        json_mode: bool = False,
        item_chars: int | str | None = "auto",
        context_tokens: int = 128_000,
        pairs_per_outcome: int | None = None,
        max_tokens_floor: int | None = None,
        max_tokens_ceiling: int = 32_768,
        timeout_floor_s: float = 120.0,
        failures_only: bool = False,
        merge_context: str = "analyses",
        merges: str = "trees",
        dedupe_before_merge: bool = False,
        update_mode: str = "patch",
        skill_aware: bool = False,
        notes_max_chars: int = 1500,
        retry_truncated: bool = False,
        **settings: Any,
    ):
        if merge_context not in ("edits", "analyses"):
            raise ValueError(f"unknown merge_context {merge_context!r}")
        if merges not in MERGE_SHAPES:
            raise ValueError(f"unknown merges {merges!r}")
        self._merges = merges
        self._dedupe_before_merge = dedupe_before_merge
        if update_mode not in UPDATE_MODES:
            raise ValueError(f"unknown update_mode {update_mode!r}")
        self._update_mode = update_mode
        self._skill_aware = skill_aware
        self._notes_max_chars = notes_max_chars
        self._retry_truncated = retry_truncated
        self._failures_only = failures_only
        self._merge_context = merge_context
        self._client = client
        self._role = role
        self._item_chars = item_chars
        self._context_tokens = context_tokens
        self._floor = max_tokens_floor
        self._ceiling = max_tokens_ceiling
        self._timeout_floor_s = timeout_floor_s
        self._pairs_per_outcome = pairs_per_outcome
        self._settings = dict(settings)
        if json_mode:
            self._settings["response_format"] = {"type": "json_object"}

    async def _complete(self, messages: list[Message], **settings: Any) -> Completion:
        return await self._client.complete(messages, role=self._role, **settings)

    def render_items(self, group: Group, skill_text: str, prompt_without_items: str) -> str:
        """The group's items for an analyst prompt: with item_chars "auto" (published) whole,
        within the optimizer's context window less the rest of the prompt and a quarter of
        the window kept for the reply; else each clipped to item_chars (None: unlimited)."""
        if self._item_chars != "auto":
            limit = self._item_chars if isinstance(self._item_chars, int) else None
            return render_results(group.results, skill_text=skill_text, max_chars=limit)
        usable = self._context_tokens - min(self._ceiling, self._context_tokens // 4)
        room = usable * CHARS_PER_TOKEN - len(prompt_without_items)
        return render_results_within(group.results, skill_text=skill_text, room_chars=room)

    @property
    def merges(self) -> str:
        return self._merges

    def groups(self, ctx: ProposalContext) -> list[Group]:
        """The step's analyst groups (failures first; none of successes if failures_only)."""
        groups: list[Group] = []
        for a, batch in enumerate(ctx.batches or [ctx.results]):  # accumulation: per batch
            groups += make_groups(
                batch,
                seed=ctx.seed * 1000 + a if a else ctx.seed,
                size=ctx.minibatch_size,
                model_errors_fail=ctx.model_errors_fail,
            )
        # Failure groups first, each kind numbered across the batches.
        groups.sort(key=lambda g: g.kind != FAILURE)
        counts = {FAILURE: 0, SUCCESS: 0}
        for i, g in enumerate(groups):
            groups[i] = Group(g.kind, counts[g.kind], g.results)
            counts[g.kind] += 1
        if self._failures_only:  # the ablation without success analysts
            groups = [g for g in groups if g.kind == FAILURE]
        return groups

    def lapse_rules(self, group: Group, change_word: str) -> str:
        """The skill-aware section of a failure analyst's prompt ("" otherwise)."""
        if not self._skill_aware or group.kind != FAILURE:
            return ""
        return render_prompt("lapse_rules", change_word=change_word)

    async def ask(self, prompt: str, shape: Shape, skill: str = "") -> JsonReply:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        settings = dict(self._settings)
        if self._floor is not None:
            budget = completion_budget(
                len(prompt), len(skill), floor=self._floor, ceiling=self._ceiling
            )
            settings["max_tokens"] = budget
            settings["timeout_s"] = call_timeout(budget, floor_s=self._timeout_floor_s)
        with stage(_STAGES.get(shape.name, shape.name)):  # the ledger's per-stage usage
            # retry_truncated: a sized call's cut reply is retried once at twice its budget.
            return await ask_json(
                self._complete,
                messages,
                shape,
                grow_on_truncation=self._floor is not None and self._retry_truncated,
                max_tokens_ceiling=self._ceiling,
                **settings,
            )

    # ------------------------------------------------------------------------ propose

    async def propose(self, ctx: ProposalContext) -> Proposal:
        if ctx.budget <= 0 or ctx.edit_budget <= 0 or not ctx.results:
            return Proposal(edits=[])
        if self._update_mode != "patch":
            whole_skill = (
                propose_rewrite if self._update_mode == "rewrite" else propose_full_rewrite
            )
            proposal, lapses = await whole_skill(self, ctx)
            return await self._with_notes(ctx, proposal, lapses)
        reflections: list[dict] = []
        lapses: list[str] = []
        groups = self.groups(ctx)
        lists = await asyncio.gather(*(self._analyse(ctx, g, reflections, lapses) for g in groups))
        pool_lists = await self._aggregate(ctx, list(lists), reflections)
        merged = pool_lists.edits
        lr = None
        budget = ctx.budget
        if ctx.lr_control == "autonomous":
            # Rank the whole pool first, so "apply N" means the N best.
            pool = await self._select(ctx, pool_lists, reflections, budget=len(merged))
            decision = await decide_edit_count(self.ask, ctx, pool)
            lr = decision.to_dict()
            self.reflect(ctx, reflections, "lr", 0, decision_text(decision))
            edits = pool[: decision.count]
        else:
            edits = await self._select(ctx, pool_lists, reflections, budget=budget)
        proposal = Proposal(edits=edits, merged=merged, reflections=reflections, lr=lr)
        return await self._with_notes(ctx, proposal, lapses)

    async def _with_notes(
        self, ctx: ProposalContext, proposal: Proposal, lapses: list[str]
    ) -> Proposal:
        """Skill-aware: the lapses become the execution-notes block of the candidate."""
        if self._skill_aware:
            update = await update_notes(
                self.ask, ctx.skill_text, lapses, max_chars=self._notes_max_chars
            )
            proposal.execution_notes = update.content
            self.reflect(ctx, proposal.reflections, "notes", 0, update.text, lapses=lapses)
        order = {"failure": 0, "success": 1, "merge": 2, "rank": 3, "lr": 4, "rewrite": 5}
        proposal.reflections.sort(key=lambda r: (order.get(r["kind"], 9), r["group"]))
        return proposal

    def reflect(
        self,
        ctx: ProposalContext,
        reflections: list[dict],
        kind: str,
        group: int,
        text: str,
        **record: Any,
    ) -> None:
        """One reflection: an event for the live view, and an entry of reflections.json
        with `record` (the call's structured output: edit lists, merge inputs, order)."""
        reflections.append({"kind": kind, "group": group, "text": text, **record})
        ctx.emit(ReflectionText(step=ctx.step, kind=kind, group=group, text=text))

    async def _analyse(
        self, ctx: ProposalContext, group: Group, reflections: list[dict], lapses: list[str]
    ) -> Proposals:
        name = "analyst_failures" if group.kind == FAILURE else "analyst_successes"
        values: dict[str, Any] = dict(
            skill=ctx.skill_text,
            item_count=len(group.results),
            edit_budget=ctx.edit_budget,
            rejected_buffer=ctx.rejected_buffer.strip() or NONE,
            unmatched=render_unmatched(ctx),
            meta_notes=ctx.meta_notes.strip() or NONE,
            edit_rules=load_prompt("edit_rules").strip(),
            lapse_rules=self.lapse_rules(group, "an edit"),
            task_guide=task_guide(ctx, group.kind),
        )
        items = self.render_items(group, ctx.skill_text, render_prompt(name, items="", **values))
        prompt = render_prompt(name, items=items, **values)
        with labelled(f"analyst-{group.kind}-{group.index}"):
            reply = await self.ask(prompt, ANALYST_SHAPE, ctx.skill_text)
        if not reply.ok:
            self.reflect(
                ctx,
                reflections,
                group.kind,
                group.index,
                f"no edits from this group: {reply.error}",
            )
            return Proposals(group.kind, [], **evidence_of(group, ""))
        value = reply.value or {}
        edits = [Edit.from_dict(e) for e in value["edits"]]
        found_lapses = value["lapses"] if self.lapse_rules(group, "") else []
        lapses.extend(found_lapses)
        notes = []
        if len(edits) > ctx.edit_budget:
            notes.append(f"kept the first {ctx.edit_budget} of {len(edits)} proposed edits")
            edits = edits[: ctx.edit_budget]
        if value["dropped"]:
            notes.append(f"ignored {value['dropped']} entries that were not edit objects")
        if reply.repaired:
            notes.append("reply needed one repair re-ask")
        text = value["analysis"] or "(no analysis given)"
        if notes:
            text += "\n[" + "; ".join(notes) + "]"
        self.reflect(
            ctx,
            reflections,
            group.kind,
            group.index,
            text,
            items=[r.item_id for r in group.results],
            edits=[e.to_dict() for e in edits],
            **({"lapses": found_lapses} if found_lapses else {}),
        )
        groups = [frozenset({f"{group.kind} {group.index}"})] * len(edits)
        return Proposals(group.kind, edits, sources=groups, **evidence_of(group, value["analysis"]))

    async def _aggregate(
        self, ctx: ProposalContext, lists: list[Proposals], reflections: list[dict]
    ) -> Proposals:
        """Merge `merge_batch_size` lists per call until one is left, in the shape of
        `merges` (core.optimizer.merge_tree): `trees` uncapped (the ranking and the budget
        clip come after), `capped` each merge at most max(edit_budget, budget) edits. Every
        list with edits goes in, duplicates and all, as published (two lists of the same
        edits still cost a merge); `dedupe_before_merge` keeps each edit once, in the first
        list that proposed it, and drops the lists that leaves empty."""
        level = dedupe_lists(lists) if self._dedupe_before_merge else [p for p in lists if p.edits]
        if not level:
            return Proposals(FAILURE, [])
        size = max(ctx.merge_batch_size, 2)
        if self._merges == "capped":
            cap = max(ctx.edit_budget, ctx.budget)
            merged = await merge_levels(
                level, size, lambda batch, index: self._merge(ctx, batch, index, cap, reflections)
            )
        else:
            merged = await merge_trees(
                level, size, lambda batch, index: self._merge(ctx, batch, index, None, reflections)
            )
        assert merged is not None  # level is not empty
        return merged

    async def _merge(
        self,
        ctx: ProposalContext,
        batch: list[Proposals],
        index: int,
        max_edits: int | None,
        reflections: list[dict],
    ) -> Proposals:
        kind = merged_kind(batch)
        evidence = {
            "analyses": [a for p in batch for a in p.analyses],
            "failures": sum(p.failures for p in batch),
            "items": sum(p.items for p in batch),
        }
        fallback = dedupe([e for p in batch for e in p.edits])
        sections = [self._merge_section(i, p) for i, p in enumerate(batch)]
        prompt = render_prompt(
            "merge",
            skill=ctx.skill_text,
            proposals="\n\n".join(sections),
            at_most="" if max_edits is None else f" of at most {max_edits} edits",
            meta_notes=ctx.meta_notes.strip() or NONE,
            edit_rules=load_prompt("edit_rules").strip(),
        )
        with labelled(f"merge-{index}"):
            reply = await self.ask(prompt, MERGE_SHAPE, ctx.skill_text)
        if not reply.ok:
            # The lists are still good proposals: keep them in priority order rather than
            # lose a whole batch to one bad merge reply.
            text = f"merge failed, kept the lists in priority order: {reply.error}"
            out = fallback[:max_edits]
            self.reflect(ctx, reflections, "merge", index, text, **tree_node(batch, kind, out))
            return Proposals(kind, out, sources=sources_of(out, batch), **evidence)
        value = reply.value or {}
        edits = dedupe([Edit.from_dict(e) for e in value["edits"]])[:max_edits]
        self.reflect(
            ctx,
            reflections,
            "merge",
            index,
            value["analysis"] or f"merged {len(batch)} lists",
            **tree_node(batch, kind, edits),
        )
        return Proposals(kind, edits, sources=sources_of(edits, batch), **evidence)

    def _merge_section(self, i: int, p: Proposals) -> str:
        """One list for the merge prompt; with merge_context "analyses" also the analyses
        behind it and how many of its items failed (the published merge sees both)."""
        head = f"## List {i + 1} ({ORIGIN[p.kind]})"
        if self._merge_context == "analyses":
            head += f"\n{p.failures} of {p.items} items behind this list failed."
            if p.analyses:
                head += "\nAnalyses:\n" + "\n".join(f"- {a}" for a in p.analyses)
            head += "\nEdits:"
        return f"{head}\n{render_edits(p.edits)}"

    async def _select(
        self, ctx: ProposalContext, pool: Proposals, reflections: list[dict], *, budget: int
    ) -> list[Edit]:
        """The top `budget` of the merged pool: one ranking call, shown each edit's
        support, when more remain. With the autonomous learning rate, budget = the pool:
        the call orders all of it, best first, and the count decision takes a prefix."""
        merged, support = pool.edits, pool.support()
        full_order = ctx.lr_control == "autonomous"
        if len(merged) <= 1 or (len(merged) <= budget and not full_order):
            return list(merged)
        prompt = render_prompt(
            "rank",
            skill=ctx.skill_text,
            edits=render_edits(merged, numbered=True, max_chars=600, support=support),
            groups=len(self.groups(ctx)),
            budget=budget,
            meta_notes=ctx.meta_notes.strip() or NONE,
            answer_rule=rank_answer("padded" if full_order else ctx.ranking, budget),
        )
        reply = await self.ask(prompt, RANK_SHAPE)
        if not reply.ok:
            self.reflect(
                ctx, reflections, "rank", 0, f"ranking failed, kept the merged order: {reply.error}"
            )
            return merged[:budget]
        value = reply.value or {}
        ranked = rank_order(value["order"], len(merged))
        chosen = [
            merged[i]
            for i in ranked_selection(
                value["order"], len(merged), budget, "padded" if full_order else ctx.ranking
            )
        ]
        self.reflect(
            ctx,
            reflections,
            "rank",
            0,
            value["reason"] or f"order {ranked}",
            order=ranked,
            ranked=[merged[i].to_dict() for i in ranked],
            support=[support[i] for i in ranked],
        )
        return chosen

    # ------------------------------------------------------------------------- epoch

    def render_pairs(self, ctx: EpochContext, prompt_without_pairs: str) -> str:
        """The epoch prompts' pairs, budgeted as the analysts' items are: with item_chars
        "auto" (published) every pair whole within the optimizer's context window less the
        rest of the prompt and a quarter kept for the reply; an int clips each pair to it
        (clipped_items); None: no limit. pairs_per_outcome N shows a sample (said so)."""
        limit = self._item_chars if isinstance(self._item_chars, int) else None
        room = None
        if self._item_chars == "auto":
            usable = self._context_tokens - min(self._ceiling, self._context_tokens // 4)
            room = usable * CHARS_PER_TOKEN - len(prompt_without_pairs)
        return render_pairs(
            ctx.pairs,
            previous_skill=ctx.previous_skill,
            current_skill=ctx.current_skill,
            item_chars=limit,
            room_chars=room,
            per_outcome=self._pairs_per_outcome,
            seed=ctx.seed,
        )

    async def merge_skills(self, first: str, second: str) -> str:
        """train.pareto's merge step: one skill keeping what each of two frontier members
        gets right (the gate judges it). A failed reply gives `first` back unchanged,
        which the merge step records as a merge that changed nothing."""
        prompt = render_prompt("merge_skills", first=first, second=second)
        reply = await self.ask(prompt, REWRITE_SHAPE, first + second)
        return reply.value["skill"] if reply.ok and reply.value else first

    async def slow_update(self, ctx: EpochContext) -> str | None:
        return await epoch_calls.slow_update(self.ask, ctx, render=self.render_pairs)

    async def meta_notes(self, ctx: EpochContext) -> str:
        return await epoch_calls.meta_notes(self.ask, ctx, render=self.render_pairs)
