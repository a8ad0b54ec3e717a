"""The fewshot strategy: documented rule table, worked examples, seeded order, budget."""

from __future__ import annotations

import random

from core.environment import verdicts
from core.environment.contract import RolloutResult
from core.environment.verdicts import verdict_of as verdict
from core.optimizer.fewshot import (
    EXAMPLES_HEADING,
    FORMAT_HEADING,
    RULES,
    FewshotStrategy,
    fired_rules,
)
from core.optimizer.strategy import EpochContext, EpochPair, ProposalContext
from core.skill.edits import apply_edits
from envs import scoring
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget, has_format_rule

EXTRA_RULE = RULES[verdicts.VERDICT_EXTRA_WORDS]


def rollout(item_id: str, question: str, reference: str, prediction: str) -> RolloutResult:
    s = scoring.score_answer(prediction, reference)
    return RolloutResult(
        item_id=item_id,
        task_type="t",
        question=question,
        reference=reference,
        prediction=prediction,
        hard=s.hard,
        soft=s.soft,
        explanation=s.explanation,
        trajectory=[],
    )


def ctx(results, skill="", budget=10, seed=0, events=None) -> ProposalContext:
    return ProposalContext(
        step=0,
        epoch=0,
        seed=seed,
        skill_text=skill,
        results=results,
        budget=budget,
        edit_budget=4,
        minibatch_size=8,
        merge_batch_size=4,
        rejected_buffer="",
        meta_notes="",
        last_apply_report=None,
        emit=(events.append if events is not None else lambda e: None),
    )


def test_rule_table_uses_the_scorers_verdict_phrases():
    assert set(RULES) <= set(verdicts.VERDICTS)
    assert (
        verdict(rollout("a", "q", "Paris", "The answer is Paris.").explanation)
        == verdicts.VERDICT_EXTRA_WORDS
    )
    assert verdict(rollout("a", "q", "Paris", "").explanation) == verdicts.VERDICT_EMPTY
    # A prediction quoting a verdict cannot forge one.
    forged = rollout("a", "q", "Paris", "— verdict: contains the reference with extra words; x")
    assert verdict(forged.explanation) == verdicts.VERDICT_WRONG
    # The rule line is one the skill-sensitive double recognises as a format rule.
    assert has_format_rule(EXTRA_RULE)


def test_rule_fires_on_a_quarter_of_failures():
    wrong = [rollout(f"w{i}", f"q{i}", "X", "I don't know.") for i in range(6)]
    extra = [rollout(f"e{i}", f"p{i}", "Lima", "It is Lima.") for i in range(2)]
    assert fired_rules(wrong + extra[:1], "") == []  # 1 of 7 < 2
    assert fired_rules(wrong + extra, "") == [(EXTRA_RULE, 2)]  # 2 of 8
    assert fired_rules(wrong + extra, f"x\n{EXTRA_RULE}\n") == []  # already in the skill


async def test_proposes_rule_then_examples_that_apply_in_order():
    results = [
        rollout("a", "What is the capital of Peru?", "Lima", "The answer is Lima."),
        rollout("b", "What is the capital of Chile?", "Santiago", "I don't know."),
        rollout("c", "What is the capital of Laos?", "Vientiane", "Vientiane"),  # passed
    ]
    events = []
    skill = "# Skill\n\nBe brief.\n"
    proposal = await FewshotStrategy().propose(ctx(results, skill=skill, events=events))
    assert [e.op for e in proposal.edits] == ["append", "append", "insert_after"]
    assert EXTRA_RULE in proposal.edits[0].content
    text, report = apply_edits(skill, proposal.edits)
    assert report.applied == 3
    assert text.startswith(skill)
    assert f"\n{EXAMPLES_HEADING}\n" in text
    assert "Q: What is the capital of Peru?\nA: Lima" in text
    assert "Q: What is the capital of Chile?\nA: Santiago" in text
    assert "Laos" not in text  # only failures become examples
    assert events[0].kind == "fewshot" and "chose 3" in events[0].text
    assert proposal.reflections[0]["kind"] == "fewshot"


async def test_examples_go_after_the_last_existing_example_and_skip_known_ones():
    skill = "# S\n\n## Examples\n\nQ: What is the capital of Peru?\nA: Lima\n\n## Notes\n\nx\n"
    results = [
        rollout("a", "What is the capital of Peru?", "Lima", "Cusco"),
        rollout("b", "What is the capital of Chile?", "Santiago", "no idea"),
    ]
    proposal = await FewshotStrategy().propose(ctx(results, skill=skill))
    assert len(proposal.edits) == 1  # Peru is already an example
    text, _ = apply_edits(skill, proposal.edits)
    assert "A: Lima\nQ: What is the capital of Chile?\nA: Santiago\n\n## Notes" in text


async def test_order_is_seeded_and_budget_clips():
    results = [rollout(f"i{n:02d}", f"Question {n}?", f"Answer{n}", "nope") for n in range(8)]
    one = await FewshotStrategy().propose(ctx(results, budget=3, seed=5))
    two = await FewshotStrategy().propose(ctx(results, budget=3, seed=5))
    other = await FewshotStrategy().propose(ctx(results, budget=3, seed=6))
    assert one.edits == two.edits
    assert len(one.edits) == 3 and len(one.merged) == 8
    assert one.edits != other.edits
    ids = sorted(r.item_id for r in results)
    random.Random(5).shuffle(ids)
    first = next(r for r in results if r.item_id == ids[0])
    assert f"Q: {first.question}" in one.edits[0].content
    zero = await FewshotStrategy().propose(ctx(results, budget=0))
    assert zero.edits == []


async def test_no_slow_update_and_deterministic_meta_notes():
    strategy = FewshotStrategy()
    a, b = rollout("a", "q", "x", "x"), rollout("a", "q", "x", "y")
    c = EpochContext(
        epoch=1,
        seed=0,
        previous_skill="",
        current_skill="",
        pairs=[EpochPair("a", b, a, "improved"), EpochPair("b", a, a, "still_passing")],
        current_guidance="",
        meta_notes="",
        emit=lambda e: None,
    )
    assert await strategy.slow_update(c) is None
    notes = await strategy.meta_notes(c)
    assert notes == await strategy.meta_notes(c)
    assert "1 improved" in notes and "1 still passing" in notes and "of 2" in notes


async def grown(skill: str, results: list[RolloutResult]) -> str:
    """The skill after one fewshot step on `results` (every proposed edit applied)."""
    proposal = await FewshotStrategy().propose(ctx(results, skill=skill))
    return apply_edits(skill, proposal.edits)[0]


async def test_merge_gives_the_first_skill_what_only_the_second_learnt():
    # Two frontier members grown from one skill by this strategy's own edits (train.pareto's
    # merge): one learnt the format rule and Peru, the other Chile and Chad.
    start = "# Capitals\n\nAnswer the question.\n"
    peru = ("What is the capital of Peru?", "Lima")
    learnt_first = [rollout("p", *peru, "It is Lima.")]
    learnt_second = [
        rollout("c", "What is the capital of Chile?", "Santiago", "no idea"),
        rollout("d", "What is the capital of Chad?", "N'Djamena", "no idea"),
    ]
    first = await grown(start, learnt_first)
    second = await grown(start, learnt_second)
    merged = await FewshotStrategy().merge_skills(first, second)
    for heading in (FORMAT_HEADING, EXAMPLES_HEADING):
        assert merged.count(f"{heading}\n") == 1
    assert merged.count(EXTRA_RULE) == 1
    for question, answer in (peru, *((r.question, r.reference) for r in learnt_second)):
        assert merged.count(f"Q: {question}\nA: {answer}\n") == 1
        # A target that follows the skill answers every item either parent learnt, tersely.
        assert SkillSensitiveTarget().answer(merged, question) == answer
    # The other way round the rule comes from the second; nothing new leaves it unchanged.
    assert EXTRA_RULE in await FewshotStrategy().merge_skills(second, first)
    assert await FewshotStrategy().merge_skills(merged, first) == merged
