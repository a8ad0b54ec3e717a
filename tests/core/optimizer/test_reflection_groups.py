"""Grouping and rendering of rollouts for the analysts (core.optimizer.reflection_groups)."""

from __future__ import annotations

import pytest

from core.environment.contract import RolloutResult
from core.optimizer.reflection_groups import (
    FAILURE,
    PREVIOUS_SKILL_PLACEHOLDER,
    SKILL_PLACEHOLDER,
    SUCCESS,
    clip,
    make_groups,
    render_pairs,
    render_result,
    render_trajectory,
    split_results,
)
from core.optimizer.strategy import EpochPair


def result(i: int, hard: float, **kw) -> RolloutResult:
    data = dict(
        item_id=f"q{i}",
        task_type="capital",
        question=f"What is the capital of country {i}?",
        reference=f"City{i}",
        prediction=f"Guess{i}",
        hard=hard,
        soft=hard,
        explanation=f"expected City{i}, got Guess{i}",
        trajectory=[
            {"role": "system", "content": "SKILL TEXT"},
            {"role": "user", "content": f"What is the capital of country {i}?"},
            {"role": "assistant", "content": f"Guess{i}"},
        ],
    )
    data.update(kw)
    return RolloutResult(**data)


def batch(n_fail: int, n_ok: int) -> list[RolloutResult]:
    # interleave so the split must actually sort them
    out = [result(i, 0.0) for i in range(n_fail)] + [result(100 + i, 1.0) for i in range(n_ok)]
    return out[::2] + out[1::2]


def test_split_uses_hard_only():
    r = [result(0, 0.0, soft=0.9), result(1, 0.5), result(2, 1.0)]
    failures, successes = split_results(r)
    assert [x.item_id for x in failures] == ["q0"]
    assert [x.item_id for x in successes] == ["q1", "q2"]


def test_group_counts_and_sizes():
    groups = make_groups(batch(13, 7), seed=3, size=4)
    fail = [g for g in groups if g.kind == FAILURE]
    ok = [g for g in groups if g.kind == SUCCESS]
    assert [len(g.results) for g in fail] == [4, 4, 4, 1]
    assert [len(g.results) for g in ok] == [4, 3]
    assert [g.index for g in fail] == [0, 1, 2, 3] and [g.index for g in ok] == [0, 1]
    assert groups[: len(fail)] == fail  # failure groups come first
    assert all(r.hard == 0 for g in fail for r in g.results)
    assert all(r.hard != 0 for g in ok for r in g.results)
    ids = sorted(r.item_id for g in groups for r in g.results)
    assert ids == sorted(r.item_id for r in batch(13, 7))  # each item exactly once


def test_same_seed_same_groups_and_seed_matters():
    def ids(seed):
        return [
            [r.item_id for r in g.results] for g in make_groups(batch(12, 12), seed=seed, size=5)
        ]

    assert ids(7) == ids(7)
    assert ids(7) != ids(8)
    # shuffled, not just the input order
    unshuffled = [r.item_id for r in split_results(batch(12, 12))[0]]
    assert [i for g in ids(7)[:3] for i in g] != unshuffled


def test_empty_and_bad_size():
    assert make_groups([], seed=0, size=8) == []
    with pytest.raises(ValueError):
        make_groups(batch(1, 1), seed=0, size=0)


def test_clip_keeps_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    out = clip(text, 200)
    assert len(out) <= 200
    assert out.startswith("HEAD") and out.endswith("TAIL") and "chars clipped" in out
    assert clip("short", 200) == "short"


def test_render_result_shows_reference_and_hides_repeated_skill():
    r = result(
        5,
        0.0,
        trajectory=[
            {"role": "system", "content": "Preamble\nSKILL TEXT\nAnswer briefly."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "part one"},
                    {"type": "text", "text": "part two"},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"name": "lookup", "arguments": "{}"}],
            },
        ],
    )
    text = render_result(r, skill_text="SKILL TEXT", max_chars=2000)
    assert "reference answer: City5" in text
    assert "evaluator: expected City5, got Guess5" in text
    assert "prediction: Guess5" in text
    assert "SKILL TEXT" not in text and SKILL_PLACEHOLDER in text
    assert "part one\npart two" in text and "lookup" in text


def test_render_result_clips_long_trajectory_first():
    long_msgs = [{"role": "assistant", "content": "step " * 2000}]
    r = result(1, 0.0, trajectory=long_msgs, prediction="FINAL ANSWER")
    text = render_result(r, max_chars=800)
    assert len(text) <= 800
    assert "prediction: FINAL ANSWER" in text and "reference answer: City1" in text
    assert "chars clipped" in text


def test_render_trajectory_roles():
    text = render_trajectory(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    )
    assert text == "[user] hi\n[assistant] yo"


def test_render_pairs_counts_and_samples():
    pairs = [
        EpochPair("a", result(1, 0.0), result(1, 1.0), "improved"),
        EpochPair("b", result(2, 1.0), result(2, 0.0), "regressed"),
        EpochPair("c", result(3, 0.0), result(3, 0.0), "still_failing"),
    ]
    text = render_pairs(pairs, seed=1, per_outcome=2)
    assert "## improved (1 of 3 items)" in text and "## regressed (1 of 3 items)" in text
    assert "## still passing (0 of 3 items)\n(none)" in text
    assert "reference answer: City2" in text
    assert "previous skill: hard 1 | soft 1 | prediction: Guess2" in text
    assert render_pairs(pairs, seed=1) == render_pairs(pairs, seed=1)


def epoch_pair(i: int, outcome: str) -> EpochPair:
    before_hard, after_hard = {
        "improved": (0.0, 1.0),
        "regressed": (1.0, 0.0),
        "still_failing": (0.0, 0.0),
        "still_passing": (1.0, 1.0),
    }[outcome]
    prev = [{"role": "system", "content": "OLD SKILL"}, {"role": "assistant", "content": f"old{i}"}]
    now = [{"role": "system", "content": "NEW SKILL"}, {"role": "assistant", "content": f"new{i}"}]
    return EpochPair(
        f"q{i}",
        result(i, before_hard, trajectory=prev, prediction=f"before{i}"),
        result(i, after_hard, trajectory=now, prediction=f"after{i}"),
        outcome,
    )


def test_render_pairs_lists_every_pair_with_both_trajectories():
    """Issue 22 item 5 (published): every pair, not 4 per outcome, and each with both
    trajectories (the skills replaced by pointers); still-passing pairs without them.
    Fails on the old code: it sampled 4 per outcome and showed predictions only."""
    pairs = [epoch_pair(i, "improved") for i in range(6)] + [epoch_pair(9, "still_passing")]
    text = render_pairs(pairs, previous_skill="OLD SKILL", current_skill="NEW SKILL")
    assert "## improved (6 of 7 items)\n" in text and "sample" not in text
    for i in range(6):
        assert f"### q{i} " in text
        assert f"[assistant] old{i}" in text and f"[assistant] new{i}" in text
    assert "OLD SKILL" not in text and "NEW SKILL" not in text
    assert PREVIOUS_SKILL_PLACEHOLDER in text and SKILL_PLACEHOLDER in text
    passing = text[text.index("## still passing") :]
    assert "### q9 " in passing and "trajectory" not in passing


def test_render_pairs_sample_says_it_is_one():
    pairs = [epoch_pair(i, "regressed") for i in range(10)]
    text = render_pairs(pairs, per_outcome=4, seed=3)
    assert "## regressed (10 of 10 items; a seeded sample of 4 is shown)" in text
    assert text.count("### q") == 4


def test_render_pairs_fit_the_room_and_short_pairs_stay_whole():
    long = epoch_pair(1, "still_failing")
    long.after.trajectory.append({"role": "assistant", "content": "x" * 20_000})
    short = epoch_pair(2, "still_failing")
    whole = render_pairs([long, short])
    fitted = render_pairs([long, short], room_chars=4000)
    assert len(whole) > 20_000 and len(fitted) < 4400
    assert "chars clipped" in fitted and "[assistant] new2" in fitted
    assert render_pairs([short], room_chars=4000) == render_pairs([short])
    clipped = render_pairs([long], item_chars=1000)  # the clipped_items overlay
    assert len(clipped) < 1200


def test_an_item_shows_its_prediction_once_and_says_what_hard_and_soft_are():
    """Issue 38: the prediction was shown three times (its line, the evaluator's quote,
    the last reply) and `hard 0 | soft 0.571429` was explained nowhere. Fails on the old
    code."""
    from envs.scoring import score_answer

    prediction = "The capital is Lyon"
    score = score_answer(prediction, "Paris")
    r = result(1, 0.0, prediction=prediction)
    r = RolloutResult(
        **{
            **r.to_dict(),
            "soft": 4 / 7,
            "explanation": score.explanation,
            "trajectory": [
                {"role": "user", "content": "What is the capital of France?"},
                {"role": "assistant", "content": f"Thinking.\n<answer>{prediction}</answer>"},
            ],
        }
    )
    text = render_result(r, max_chars=None)
    assert text.count("Lyon") == 1
    assert "hard 0 (1 = passed, 0 = failed) | soft 0.57 (partial credit, 0 to 1)" in text
    assert "got (the prediction above)" in text and "verdict:" in text
    assert "<answer>(the prediction above)</answer>" in text
