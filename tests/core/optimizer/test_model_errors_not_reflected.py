"""Issue 9, now the skip_model_errors overlay: a target rollout that failed with a model
error (a 500, a timeout) says nothing about the skill, so neither the analysts nor the
rejected-edit buffer's failure patterns see it as a failure of the skill. Issue 38: by
default, as published, it scored 0 and is a failure like any other."""

from __future__ import annotations

from core.optimizer.reflection_groups import make_groups, split_results
from core.training.step import failure_patterns
from tests.core.optimizer.test_reflection_groups import result


def _batch():
    wrong = [result(i, 0.0) for i in range(2)]
    errored = [
        result(10 + i, 0.0, prediction="", error="models.target: HTTP 500 after 4 retries")
        for i in range(4)
    ]
    right = [result(20 + i, 1.0) for i in range(2)]
    return wrong + errored + right


def test_model_errors_are_failures_by_default_as_published():
    """Fails on the old code (left out of every group)."""
    failures, _ = split_results(_batch())
    assert sorted(r.item_id for r in failures) == ["q0", "q1", "q10", "q11", "q12", "q13"]
    grouped = [r.item_id for g in make_groups(_batch(), seed=1, size=8) for r in g.results]
    assert len(grouped) == 8
    assert failure_patterns(_batch()).startswith("6 of 8 train items failed")


def test_model_errors_are_in_no_analyst_group():
    failures, successes = split_results(_batch(), model_errors_fail=False)
    assert sorted(r.item_id for r in failures) == ["q0", "q1"]
    assert sorted(r.item_id for r in successes) == ["q20", "q21"]
    grouped = [
        r.item_id
        for g in make_groups(_batch(), seed=1, size=8, model_errors_fail=False)
        for r in g.results
    ]
    assert sorted(grouped) == ["q0", "q1", "q20", "q21"]


def test_failure_patterns_count_only_the_skills_failures():
    text = failure_patterns(_batch(), model_errors_fail=False)
    assert text.startswith("2 of 4 train items failed")
    assert "HTTP 500" not in text and "q10" not in text
    assert "4 items with a model error left out" in text


def test_only_model_errors_give_no_failure_pattern():
    errored = [result(i, 0.0, error="models.target: timeout") for i in range(3)]
    assert failure_patterns(errored, model_errors_fail=False) == ""
    assert make_groups(errored, seed=0, size=8, model_errors_fail=False) == []
