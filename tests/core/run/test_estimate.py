"""The pre-run estimate counts calls from the loop's shape and prices them."""

import pytest

from core.config import config_from_dict
from core.run.estimate import describe, estimate_run, plan_calls


def small_config(**train):
    return config_from_dict(
        {
            "train": {
                "epochs": 2,
                "steps_per_epoch": 3,
                "batch_size": 10,
                "minibatch_size": 4,
                "merge_batch_size": 2,
                "val_limit": 5,
                "test_limit": 7,
                "slow_update": {"sample_size": 4, "gated": True},
                **train,
            },
            "models": {"prices": {"m-opt": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}},
        }
    )


def test_target_and_optimizer_calls_follow_the_loop_shape():
    plan = plan_calls(small_config(), train_items=100, val_items=50, test_items=50, uses_llm=True)
    # baseline 5 + 6 steps x (10 train + 5 gate) + 3 x 7 test + 5 final val
    # + 2 epoch ends (the last included) x (2 x 4 slow-update rollouts + 5 gate)
    assert plan.target_calls == 5 + 6 * 15 + 21 + 5 + 2 * (8 + 5)
    # per step: ceil(10/4)+1 = 4 analyst groups, ceil(3/1) = 3 merges, 1 rank
    # + 2 slow updates (every epoch end) + 1 meta notes (only before a next epoch)
    assert plan.optimizer_calls == 6 * (4 + 3 + 1) + 2 + 1
    assert plan.total_steps == 6


def test_fewshot_makes_no_optimizer_calls_and_limits_shrink_the_plan():
    cfg = small_config(final_test=False, slow_update={"enabled": False})
    plan = plan_calls(cfg, train_items=100, val_items=3, test_items=50, uses_llm=False)
    assert plan.optimizer_calls == 0
    # + the meta notes' own pairs at the one epoch boundary (2 x the default 20 items)
    assert plan.target_calls == 3 + 6 * 13 + 3 + 40


def test_cost_uses_the_price_table_and_free_models_cost_nothing():
    cfg = small_config()
    kwargs = dict(train_items=100, val_items=50, test_items=50, uses_llm=True)
    plan, est = estimate_run(
        cfg,
        models={"target": "m-free", "optimizer": "m-opt"},
        free_models=frozenset({"m-free"}),
        **kwargs,
    )
    opt = est.per_role["optimizer"]
    assert est.cost_usd == pytest.approx(opt["input_tokens"] * 1e-6 + opt["output_tokens"] * 2e-6)
    assert est.cost_usd > 0
    assert est.unpriced == []
    assert "$" in describe(plan, est)
    _, unpriced = estimate_run(cfg, models={"target": "m-x", "optimizer": "m-opt"}, **kwargs)
    assert unpriced.unpriced == ["m-x"]
    assert "cost unknown" in describe(plan, unpriced)


def test_an_agent_target_is_counted_in_runs_and_left_out_of_tokens_and_cost():
    """A coding agent's run takes the turns it needs: no loop shape prices it, so the
    estimate says so instead of pricing one chat call per run."""
    cfg = small_config()
    kwargs = dict(train_items=100, val_items=50, test_items=50, uses_llm=True)
    models = {"target": "claude-sonnet-4-5", "optimizer": "m-opt"}
    chat_plan, chat = estimate_run(cfg, models=models, **kwargs)
    plan, est = estimate_run(cfg, models=models, agent_target=True, **kwargs)
    assert plan.target_calls == chat_plan.target_calls and plan.target_is_agent
    assert "target" not in est.per_role and est.per_role["optimizer"] == chat.per_role["optimizer"]
    assert est.unpriced == [] and est.cost_usd == chat.per_role["optimizer"]["cost_usd"]
    line = describe(plan, est)
    assert f"{plan.target_calls} target agent runs" in line
    assert "budget.max_calls" in line and "target calls" not in line


def test_accumulation_rolls_out_more_batches_in_fewer_steps():
    """train.accumulation (published gradient accumulation): ceil(100 / (10 x 2)) = 5 steps
    an epoch, each rolling out 2 batches and analysing both."""
    cfg = small_config(steps_per_epoch=None, accumulation=2, final_test=False)
    plan = plan_calls(cfg, train_items=100, val_items=5, test_items=0, uses_llm=True)
    assert plan.total_steps == 2 * 5
    one = plan_calls(
        small_config(steps_per_epoch=None, final_test=False),
        train_items=100,
        val_items=5,
        test_items=0,
        uses_llm=True,
    )
    assert one.total_steps == 2 * 10
    # baseline 5 + 10 steps x (20 train + 5 gate) + 5 final val + 2 epoch ends x (8 + 5)
    assert plan.target_calls == 5 + 10 * 25 + 5 + 2 * 13


def test_free_and_handoff_roles_are_named_instead_of_an_unknown_cost():
    """The embedded model costs $0 and a handoff call no API money: the old line said
    "cost unknown (no price)" for handoff, and a bare $0.00 for the embedded model."""
    cfg = small_config()
    kwargs = dict(train_items=100, val_items=50, test_items=50, uses_llm=True)
    models = {"target": "smollm", "optimizer": "handoff"}
    free = frozenset(models.values())
    plan, est = estimate_run(cfg, models=models, free_models=free, **kwargs)
    line = describe(plan, est, {"target": "local", "optimizer": "handoff"})
    assert "cost unknown" not in line
    assert line.endswith(
        "no API cost: target on the embedded model (free), optimizer on handoff "
        "(you answer the prompts)"
    )
    both = describe(plan, est, {"target": "local", "optimizer": "local"})
    assert both.endswith("$0: target and optimizer on the embedded model (free)")


def test_a_paid_role_keeps_its_price_and_an_unused_free_role_goes_unnamed():
    cfg = small_config()
    kwargs = dict(train_items=100, val_items=50, test_items=50, uses_llm=True)
    models = {"target": "handoff", "optimizer": "m-opt"}
    plan, est = estimate_run(cfg, models=models, free_models=frozenset({"handoff"}), **kwargs)
    line = describe(plan, est, {"target": "handoff", "optimizer": "openai"})
    assert f"${est.cost_usd:.2f}; no cost for target on handoff" in line
    plan, est = estimate_run(
        cfg,
        models={"target": "m-x", "optimizer": "smollm"},
        free_models=frozenset({"smollm"}),
        train_items=100,
        val_items=50,
        test_items=50,
        uses_llm=False,
    )
    line = describe(plan, est, {"target": "openai", "optimizer": "local"})
    assert line.endswith("cost unknown (no price for m-x)")  # fewshot: no optimizer calls


def test_the_estimate_shows_both_prices_for_a_target_with_a_batch_api():
    """Interactive, and with the baseline val and the three tests at the batch price."""
    from core.models.ledger import BATCH_PRICE_FACTOR
    from core.run.estimate import batch_price_words

    tree = small_config().model_dump()
    tree["models"]["prices"]["m-target"] = {"input_per_mtok": 2.0, "output_per_mtok": 8.0}
    cfg = config_from_dict(tree)
    models = {"target": "m-target", "optimizer": "m-opt"}
    plan, estimate = estimate_run(
        cfg, train_items=100, val_items=50, test_items=50, uses_llm=True, models=models
    )
    assert plan.batchable_calls == 5 + 3 * 7  # the baseline val, initial / best / final test
    words = batch_price_words(plan, estimate, "anthropic")
    target = estimate.per_role["target"]
    waiting_cost = target["cost_usd"] * plan.batchable_calls / target["calls"]
    cheaper = estimate.cost_usd - waiting_cost * (1 - BATCH_PRICE_FACTOR)
    assert f"${cheaper:.2f} with run.batch ({plan.batchable_calls} target calls" in words
    assert cheaper < estimate.cost_usd
    assert batch_price_words(plan, estimate, "local") == ""  # no batch API: one price
