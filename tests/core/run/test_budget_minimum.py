"""The warning before a run whose budget cannot buy the baseline and one candidate."""

from __future__ import annotations

import pytest

from core.config import config_from_dict
from core.run.budget_minimum import budget_warning, run_minimum

PRICE = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}


def config(**budget):
    return config_from_dict(
        {
            "train": {
                "batch_size": 10,
                "minibatch_size": 4,
                "merge_batch_size": 2,
                "val_limit": 5,
                "max_skill_chars": 800,
            },
            "models": {
                "target": {"model": "m-t", "max_tokens": 100},
                "optimizer": {"model": "m-opt", "max_tokens": 100},
                "prices": {"m-t": PRICE, "m-opt": PRICE},
            },
            "budget": budget,
        }
    )


def minimum(cfg):
    return run_minimum(
        cfg,
        train_items=100,
        val_items=50,
        uses_llm=True,
        models={"target": "m-t", "optimizer": "m-opt"},
    )


def test_the_minimum_is_the_baseline_and_one_step():
    m = minimum(config())
    # baseline: 5 val calls; a candidate: 10 rollouts + 5 gate calls, and
    # ceil(10/4)+1 = 4 analyst groups + 3 merges + 1 rank optimizer calls
    assert (m.baseline["calls"], m.candidate["calls"]) == (5, 23)
    # a target call: (800/2/4 = 100 skill + 60 question) in, 100 out; an optimizer call:
    # (100 + 4 x 300) in, 100 out; $1 and $2 per million
    assert m.baseline["cost_usd"] == pytest.approx(5 * 360e-6)
    assert m.candidate["cost_usd"] == pytest.approx(15 * 360e-6 + 8 * 1500e-6)


def test_a_cap_that_buys_the_baseline_but_no_candidate_warns_in_one_line():
    warning = budget_warning(config(max_cost_usd=0.01), minimum(config()))
    assert warning is not None and "\n" not in warning
    assert "budget.max_cost_usd $0.01 buys the baseline and 0 candidates" in warning
    assert "set budget.max_cost_usd to at least $0.02" in warning


def test_a_cap_below_the_baseline_says_so():
    warning = budget_warning(config(max_calls=4), minimum(config()))
    assert warning is not None
    assert "budget.max_calls 4 calls does not buy even the baseline" in warning
    assert "at least 28 calls" in warning


def test_a_cap_that_buys_one_candidate_is_quiet():
    assert budget_warning(config(max_calls=28, max_cost_usd=1.0), minimum(config())) is None
    assert budget_warning(config(), minimum(config())) is None
