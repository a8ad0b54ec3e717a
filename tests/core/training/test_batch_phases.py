"""The calls that can wait (the baseline val, the initial skill's test, the final tests)
go through the providers' batch APIs with `run.batch` (issue 42), against loopback
servers that speak OpenAI's Batch API and Anthropic's Message Batches. The target is the
skill-sensitive TEST DOUBLE behind those real HTTP servers, so a batched run and an
interactive one must reach the same scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.ledger import BATCH_PRICE_FACTOR, cost_of
from core.run.directory import RunDirectory
from core.run.events import EventBus, Notice
from core.training.trainer import run_training
from envs import get_environment
from tests.core.models.helpers import ENV, TEST_KEY_VAR
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.loopback_batches import LoopbackAnthropicBatches, LoopbackOpenAIBatches
from tests.support.loopback_openai import RecordedRequest, Reply
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

SERVERS = {"openai": LoopbackOpenAIBatches, "anthropic": LoopbackAnthropicBatches}
PRICES = {"loopback-target": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}
BATCHED_STAGES = ("baseline", "test")


def double_handler(double: SkillSensitiveTarget):
    """The double's answer to a request as either server received it (Anthropic carries
    the system prompt, where the skill is, beside the messages)."""

    def handle(record: RecordedRequest) -> Reply:
        messages = list(record.messages)
        system = record.body.get("system") if isinstance(record.body, dict) else None
        if system:
            messages.insert(0, {"role": "system", "content": system})
        return Reply(double.reply(messages))

    return handle


def batch_tree(root: Path, server, backend: str, batch: str = "on") -> dict[str, Any]:
    tree = scenario_config(root, epochs=1)
    tree["run"].update(batch=batch, batch_poll_s=0.01)
    tree["models"]["target"] = {
        "backend": backend,
        "base_url": server.base_url,
        "model": "loopback-target",
        "api_key_env": TEST_KEY_VAR,
        "concurrency": 2,
    }
    tree["models"]["prices"] = PRICES
    return tree


async def train(root: Path, tree: dict[str, Any], out: str, *, wait: bool = True, notes=None):
    config = config_from_dict(tree)
    client = build_model_client(config, cache_path=root / f"{out}.sqlite", environ=ENV)
    bus = EventBus()
    if notes is not None:
        bus.subscribe(lambda e: notes.append(e.text) if isinstance(e, Notice) else None)
    try:
        return await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(root / out),
            bus=bus,
            client=client,
            initial_skill=INITIAL_SKILL,
            batch_wait=wait,
        )
    finally:
        await client.aclose()


def journal(root: Path, out: str) -> list[dict[str, Any]]:
    lines = (root / out / "spend.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def scores(summary) -> dict[str, Any]:
    data = summary.to_dict()
    return {k: data[k] for k in ("baseline_val", "best_val", "test") if k in data}


@pytest.mark.parametrize("backend", sorted(SERVERS))
async def test_waiting_phases_go_through_batches_at_half_price(tmp_path, backend):
    double = SkillSensitiveTarget()
    with SERVERS[backend](double_handler(double)) as server:
        batched = await train(tmp_path, batch_tree(tmp_path, server, backend), "batched")
        interactive = [r for r in server.requests if r.route == server.endpoint_path]
        submitted = [cid for batch in server.submissions for cid in batch]
        plain = await train(tmp_path, batch_tree(tmp_path, server, backend, "off"), "plain")
    assert batched.status == plain.status == "finished"
    assert scores(batched) == scores(plain)  # the same answers, whichever way they came
    # the baseline (5 val items) and the tests (3 items a skill), no request twice
    assert len(submitted) == len(set(submitted)) >= 5 + 3
    entries = [e for e in journal(tmp_path, "batched") if not e["cached"]]
    waiting = [e for e in entries if e["stage"] in BATCHED_STAGES]
    assert waiting and all(e.get("batch") for e in waiting)
    assert len(waiting) == len(submitted)
    # the critical path stayed interactive
    assert all(not e.get("batch") for e in entries if e["stage"] not in BATCHED_STAGES)
    assert len(interactive) == len(entries) - len(waiting)
    for e in waiting:  # the ledger at the batch price
        full = cost_of(PRICES, "loopback-target", e["input_tokens"], e["output_tokens"])
        assert e["cost_usd"] == pytest.approx(full * BATCH_PRICE_FACTOR) and full > 0
