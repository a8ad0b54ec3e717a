"""`fewshot`: a deterministic, non-LLM optimizer strategy for the embedded demonstration
model (EMBEDDED.md: a 135M model follows format rules and worked examples, but cannot
write sensible edits itself).

What it proposes, in this order, as ordinary edits that go through the same budget,
validation, gate and staging as an LLM's:

1. **Format rules** derived from the evaluator's explanations of this step's failing train
   rollouts. Explanations state a verdict (`— verdict: <phrase>`, see envs/scoring.py); a
   rule fires when its verdict is the verdict of at least a quarter of the failures (and
   of at least one), and its line is not yet in the skill:

   | verdict phrase                              | rule line added under `## Answer format` |
   |---------------------------------------------|------------------------------------------|
   | `contains the reference with extra words`   | `Answer with the answer only: no sentence, no punctuation.` |
   | `empty answer`                              | `Always give an answer; never leave it empty.` |

   Other verdicts (`wrong answer`, `model error`) have no rule: a worked example is the
   fix for a wrong fact, and a model error is not the skill's fault.

2. **Worked examples**: failing items (hard score 0, no model error) with their reference
   answers, as `Q: <question>` / `A: <answer>` lines under an `## Examples` heading (after
   the heading's last example, or a new heading at the end of the skill with the first).
   Failures are taken in an order shuffled with the step's seed; an item whose `Q:` line is
   already in the skill is skipped.

One edit per rule and per example; rules first; the list is clipped to the step's budget
(0 = no edits). It never writes the protected slow-update block (`slow_update` returns
None); its meta notes are a count of the epoch's paired outcomes.

Its merge (train.pareto's merge step) needs no model either: a fewshot skill is the
starting skill plus rule lines and worked examples, so two frontier members are merged by
giving the first the rules and examples only the second holds (the gate judges it).
"""

from __future__ import annotations

import math
import random

from core.environment.contract import RolloutResult
from core.environment.verdicts import VERDICT_EMPTY, VERDICT_EXTRA_WORDS, verdict_of
from core.optimizer.strategy import EpochContext, Proposal, ProposalContext
from core.run.events import ReflectionText
from core.skill.edits import Edit, apply_edits

EXAMPLES_HEADING = "## Examples"
FORMAT_HEADING = "## Answer format"
RULE_MIN_SHARE = 0.25

# verdict phrase -> rule line. The phrases are the explanation vocabulary every
# environment shares (core/environment/verdicts.py), not a concrete environment's.
RULES: dict[str, str] = {
    VERDICT_EXTRA_WORDS: "Answer with the answer only: no sentence, no punctuation.",
    VERDICT_EMPTY: "Always give an answer; never leave it empty.",
}


def one_line(text: str) -> str:
    return " ".join(text.split())


def fired_rules(failures: list[RolloutResult], skill_text: str) -> list[tuple[str, int]]:
    """(rule line, votes) of the rules this step's failures call for, in table order."""
    if not failures:
        return []
    counts: dict[str, int] = {}
    for r in failures:
        v = verdict_of(r.explanation)
        if v in RULES:
            counts[v] = counts.get(v, 0) + 1
    needed = max(1, math.ceil(RULE_MIN_SHARE * len(failures)))
    return [
        (RULES[v], counts[v])
        for v in RULES
        if counts.get(v, 0) >= needed and RULES[v] not in skill_text
    ]


def _section_end_target(text: str, heading: str) -> str | None:
    """Exact text to insert after, to append to the end of `heading`'s section: the
    heading line itself plus the section's non-blank lines up to the next heading (unique
    because the heading is)."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        return None
    end = start
    for i in range(start + 1, len(lines)):
        if lines[i].startswith(("#", "<!--")):
            break
        if lines[i].strip():
            end = i
    return "\n".join(lines[start : end + 1])


def _gap(text: str) -> str:
    """A blank line before a new section, unless the skill is empty."""
    return "\n" if text.strip() else ""


def _rule_edit(text: str, rule: str, why: str) -> Edit:
    target = _section_end_target(text, FORMAT_HEADING)
    if target is None:
        return Edit(op="append", content=f"{_gap(text)}{FORMAT_HEADING}\n\n{rule}\n", rationale=why)
    return Edit(op="insert_after", target=target, content=rule, rationale=why)


def _example_edit(text: str, pair: str, why: str) -> Edit:
    target = _section_end_target(text, EXAMPLES_HEADING)
    if target is None:
        return Edit(
            op="append", content=f"{_gap(text)}{EXAMPLES_HEADING}\n\n{pair}\n", rationale=why
        )
    return Edit(op="insert_after", target=target, content=pair, rationale=why)


def worked_examples(text: str) -> list[str]:
    """The skill's `Q:`/`A:` pairs, each as its two lines."""
    lines = text.splitlines()
    return [
        f"{q}\n{a}"
        for q, a in zip(lines, lines[1:], strict=False)
        if q.startswith("Q: ") and a.startswith("A: ")
    ]


class FewshotStrategy:
    name = "fewshot"
    writes_guidance = False  # never a slow update: the loop skips its rollouts

    async def propose(self, ctx: ProposalContext) -> Proposal:
        failures = sorted(
            (r for r in ctx.results if r.hard == 0 and not r.error), key=lambda r: r.item_id
        )
        random.Random(ctx.seed).shuffle(failures)
        text = ctx.skill_text
        edits: list[Edit] = []
        notes: list[str] = []
        # Each edit is built against the text the previous ones produce, so their targets
        # exist when the trainer applies them in order.
        for rule, votes in fired_rules(failures, text):
            why = (
                f"{votes} of {len(failures)} failing answers: "
                "the reference plus extra words or no answer"
            )
            edit = _rule_edit(text, rule, why)
            edits.append(edit)
            text = apply_edits(text, [edit])[0]
            notes.append(f"rule {rule!r} ({votes}/{len(failures)} failures)")
        seen_questions: set[str] = set()
        for r in failures:
            q_line = f"Q: {one_line(r.question)}"
            if q_line in text or q_line in seen_questions or not r.reference.strip():
                continue
            seen_questions.add(q_line)
            pair = f"{q_line}\nA: {one_line(r.reference)}"
            why = f"failed item {r.item_id}: got {one_line(r.prediction)[:60]!r}"
            edit = _example_edit(text, pair, why)
            edits.append(edit)
            text = apply_edits(text, [edit])[0]
            notes.append(f"example {r.item_id}")
        chosen = edits[: max(0, ctx.budget)]
        summary = (
            f"fewshot: {len(failures)} failing of {len(ctx.results)} train items; "
            f"{len(edits)} possible edits, budget {ctx.budget}, chose {len(chosen)}: "
            + ("; ".join(notes[: len(chosen)]) if chosen else "nothing")
        )
        ctx.emit(ReflectionText(step=ctx.step, kind="fewshot", group=0, text=summary))
        return Proposal(
            edits=chosen,
            merged=edits,
            reflections=[{"kind": "fewshot", "group": 0, "text": summary}],
        )

    async def merge_skills(self, first: str, second: str) -> str:
        """train.pareto's merge: `first` with the rule lines and worked examples only
        `second` holds, added as this strategy's own edits would add them (in `second`'s
        order). Unchanged when `second` holds nothing new, which the merge step records as
        a merge that changed nothing."""
        text = first
        why = "merged from the other frontier skill"
        for rule in RULES.values():
            if rule in second and rule not in text:
                text = apply_edits(text, [_rule_edit(text, rule, why)])[0]
        for pair in worked_examples(second):
            if pair.split("\n")[0] not in text:
                text = apply_edits(text, [_example_edit(text, pair, why)])[0]
        return text

    async def slow_update(self, ctx: EpochContext) -> str | None:
        return None

    async def meta_notes(self, ctx: EpochContext) -> str:
        counts: dict[str, int] = {}
        for pair in ctx.pairs:
            counts[pair.outcome] = counts.get(pair.outcome, 0) + 1
        parts = [
            f"{counts.get(k, 0)} {k.replace('_', ' ')}"
            for k in ("improved", "regressed", "still_failing", "still_passing")
        ]
        return f"epoch {ctx.epoch + 1}: " + ", ".join(parts) + f" of {len(ctx.pairs)} sampled items"
