"""Update modes of the `llm` strategy (issue 15): `rewrite` (typed suggestions, merged and
ranked like edits, then one call rewrites the skill) and `full_rewrite` (each group writes
a whole candidate, the merge picks or combines, no ranking). Scripted TEST DOUBLE client
(tests/core/optimizer/test_llm.py)."""

from __future__ import annotations

import re

from core.optimizer.llm import LLMOptimizer
from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, write_block
from tests.core.optimizer.test_llm import SKILL, FakeOptimizer, ctx, first_id, results


def suggest(messages):
    fid = first_id(messages)
    return {
        "analysis": f"analysis of {fid}",
        "suggestions": [
            {
                "kind": "add",
                "title": f"rule-{fid}",
                "motivation": "seen failing",
                "instruction": f"Add a rule about {fid}.",
                "priority": "high",
            },
            {"kind": "shout", "title": "bad kind", "instruction": "x"},  # dropped
        ],
    }


def merge_suggestions(messages):
    titles = re.findall(r"title: (rule-q\d+)", messages[0]["content"])
    return {
        "analysis": "kept all",
        "suggestions": [
            {"kind": "add", "title": t, "instruction": f"Add {t}.", "priority": "medium"}
            for t in titles
        ],
    }


def rewrite(messages):
    chosen = re.findall(r"title: (rule-q\d+)", messages[0]["content"])
    return {"skill": SKILL + "".join(f"- {t}\n" for t in chosen), "summary": "added rules"}


async def test_rewrite_mode_ranks_suggestions_and_rewrites_from_the_selected():
    fake = FakeOptimizer(
        suggest=suggest,
        merge_suggestions=merge_suggestions,
        rank_suggestions=lambda m: {"order": [1, 0], "reason": "success rule first"},
        rewrite=rewrite,
    )
    opt = LLMOptimizer(fake.client, update_mode="rewrite")
    proposal = await opt.propose(ctx(results(2, 2), budget=1, minibatch_size=2))
    assert fake.kinds() == [
        "suggest",
        "suggest",
        "merge_suggestions",
        "rank_suggestions",
        "rewrite",
    ]
    [analyst, _] = fake.prompts("suggest")
    assert "FAILED" in analyst and SKILL.strip() in analyst
    assert proposal.edits == []
    assert [s["title"] for s in proposal.suggestions] == ["rule-q100"]  # ranked, budget 1
    assert proposal.candidate == SKILL + "- rule-q100\n"
    [prompt] = fake.prompts("rewrite")
    assert "rule-q0" not in prompt  # only the selected suggestions reach the rewrite
    merged = [r for r in proposal.reflections if r["kind"] == "merge"]
    assert merged and merged[0]["suggestions"]


async def test_rewrite_mode_within_budget_needs_no_rank_call():
    fake = FakeOptimizer(suggest=suggest, rewrite=rewrite)
    opt = LLMOptimizer(fake.client, update_mode="rewrite")
    proposal = await opt.propose(ctx(results(1, 0), budget=4))
    assert fake.kinds() == ["suggest", "rewrite"]
    assert proposal.candidate == SKILL + "- rule-q0\n"


async def test_unusable_rewrite_reply_gives_no_candidate():
    fake = FakeOptimizer(suggest=suggest, rewrite=lambda m: "not json")
    proposal = await LLMOptimizer(fake.client, update_mode="rewrite").propose(ctx(results(1, 0)))
    assert proposal.candidate is None
    assert any("no candidate" in r["text"] for r in proposal.reflections)


def whole_candidate(messages):
    fid = first_id(messages)
    return {"analysis": "a", "summary": f"summary-{fid}", "skill": SKILL + f"- whole-{fid}\n"}


async def test_full_rewrite_picks_a_candidate_without_ranking():
    fake = FakeOptimizer(
        full_rewrite=whole_candidate,
        merge_full=lambda m: {"pick": 1, "summary": "the success one is safer"},
    )
    opt = LLMOptimizer(fake.client, update_mode="full_rewrite")
    proposal = await opt.propose(ctx(results(1, 1), budget=1, minibatch_size=1))
    assert fake.kinds() == ["full_rewrite", "full_rewrite", "merge_full"]
    [merge] = fake.prompts("merge_full")
    assert "summary-q0" in merge and "summary-q100" in merge and "- whole-q0" in merge
    assert proposal.candidate == SKILL + "- whole-q100\n"
    assert proposal.suggestions[0]["summary"] == "the success one is safer"


async def test_full_rewrite_merge_can_combine():
    combined = SKILL + "- whole-q0\n- whole-q100\n"
    fake = FakeOptimizer(
        full_rewrite=whole_candidate,
        merge_full=lambda m: {"pick": None, "skill": combined, "summary": "both"},
    )
    opt = LLMOptimizer(fake.client, update_mode="full_rewrite")
    proposal = await opt.propose(ctx(results(1, 1), minibatch_size=1))
    assert proposal.candidate == combined


async def test_rewrite_prompt_asks_to_keep_protected_blocks():
    skill = write_block(SKILL, SLOW_UPDATE_BLOCK, "Guidance kept.")
    fake = FakeOptimizer(suggest=suggest, rewrite=rewrite)
    context = ctx(results(1, 0))
    context.skill_text = skill
    await LLMOptimizer(fake.client, update_mode="rewrite").propose(context)
    [prompt] = fake.prompts("rewrite")
    assert "skillopt:slow-update:start" in prompt and "byte for byte" in prompt
