"""Issue 9, money: every call is in the spend journal the moment its reply arrives, a call
cancelled in flight is counted, and prices ship for the default models."""

from __future__ import annotations

import asyncio

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import DEFAULT_MODELS, build_model_client
from core.models.ledger import stage
from core.models.spend_journal import SpendJournal
from core.training.setup import check_cost_cap_is_priced
from tests.core.models.helpers import ENV, USER, loopback_config
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply

PRICES = {"loopback-model": {"input_per_mtok": 1000.0, "output_per_mtok": 2000.0}}


async def test_each_reply_is_journaled_before_it_is_returned(tmp_path):
    journal = SpendJournal(tmp_path / "spend.jsonl")
    with LoopbackOpenAI() as server:
        server.queue(Reply("Paris", input_tokens=10, output_tokens=2))
        config = loopback_config(server.base_url, tmp_path, prices=PRICES)
        async with build_model_client(config, environ=ENV) as client:
            client.ledger.attach_journal(journal)
            with stage("gate"):
                await client.complete(USER, role="target")
            (entry,) = journal.read()  # already on disk when complete() returned
    assert entry["stage"] == "gate" and entry["role"] == "target"
    assert entry["cost_usd"] == pytest.approx((10 * 1000 + 2 * 2000) / 1e6)


async def test_a_new_ledger_replays_the_journal_of_a_killed_process(tmp_path):
    journal = SpendJournal(tmp_path / "spend.jsonl")
    journal.append(
        {
            "role": "target",
            "model": "m",
            "stage": "rollout",
            "cached": False,
            "input_tokens": 100,
            "output_tokens": 10,
            "cost_usd": 1.5,
        },
        durable=True,
    )
    journal.append(
        {
            "role": "optimizer",
            "model": "o",
            "stage": "analyst",
            "cached": False,
            "input_tokens": 50,
            "output_tokens": 5,
            "cost_usd": 1.0,
        },
        durable=True,
    )
    (tmp_path / "spend.jsonl").open("a").write('{"role": "target", "model"')  # torn by a kill
    config = config_from_dict({"budget": {"max_cost_usd": 2.0}, "cache": {"enabled": False}})
    client = build_model_client(config)
    client.ledger.attach_journal(SpendJournal(tmp_path / "spend.jsonl"))
    snap = client.ledger.snapshot()
    assert snap.cost_usd == pytest.approx(2.5) and snap.calls == 2
    assert set(snap.per_stage) == {"rollout", "analyst"}
    with pytest.raises(Exception, match="cost budget reached"):
        client.ledger.check_budget()  # fmt: skip


async def test_a_call_cancelled_in_flight_is_counted(tmp_path):
    with LoopbackOpenAI() as server:
        server.queue(Fault.hang(5.0))
        config = loopback_config(server.base_url, tmp_path, prices=PRICES, role={"max_tokens": 50})
        async with build_model_client(config, environ=ENV) as client:
            call = asyncio.create_task(client.complete(USER, role="target"))
            while not server.requests:
                await asyncio.sleep(0.01)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            snap = client.ledger.snapshot()
    assert snap.calls == 1 and snap.output_tokens == 50 and snap.cost_usd > 0


def test_default_models_have_prices_and_an_unpriced_cap_is_refused():
    config = config_from_dict({})
    assert set(DEFAULT_MODELS.values()) <= set(config.models.prices)
    capped = config_from_dict(
        {
            "models": {"target": {"backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                                  "model": "my-model"}},
            "train": {"strategy": "fewshot"},
            "budget": {"max_cost_usd": 2.0},
        }
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"models\.target uses 'my-model', which has no price"):
        check_cost_cap_is_priced(capped, build_model_client(capped))
    capped.models.prices = {
        **capped.models.prices,
        "my-model": {"input_per_mtok": 1, "output_per_mtok": 1},
    }
    check_cost_cap_is_priced(capped, build_model_client(capped))
    local = config_from_dict(
        {
            "models": {"target": {"backend": "local"}},
            "train": {"strategy": "fewshot"},
            "budget": {"max_cost_usd": 1.0},
        }
    )
    check_cost_cap_is_priced(local, build_model_client(local))  # fmt: skip


async def test_the_model_version_a_provider_reports_is_journaled(tmp_path):
    """A run card names the model version that answered (issue 42): the provider's `model`
    when it differs from the configured name, e.g. a dated snapshot behind an alias."""
    journal = SpendJournal(tmp_path / "spend.jsonl")
    with LoopbackOpenAI() as server:
        server.queue(Reply("Paris", served_model="loopback-model-2026-01-01"))
        server.queue(Reply("Lima"))
        config = loopback_config(server.base_url, tmp_path, prices=PRICES)
        async with build_model_client(config, environ=ENV) as client:
            client.ledger.attach_journal(journal)
            await client.complete(USER, role="target")
            await client.complete([{"role": "user", "content": "Peru?"}], role="target")
    first, second = journal.read()
    assert first["served_model"] == "loopback-model-2026-01-01"
    assert "served_model" not in second  # the same name as configured says nothing new


async def test_paid_calls_are_forced_to_disk_and_free_ones_are_not(tmp_path, monkeypatch):
    """Every uncached call was fsync'd, the embedded model's and test doubles' too (3,348
    fsyncs at 4 ms in 29 training tests): only a call that may cost money needs it."""
    import os

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    with LoopbackOpenAI() as server:
        server.queue(Reply("Paris", input_tokens=10, output_tokens=2))
        server.queue(Reply("Rome", input_tokens=10, output_tokens=2))
        for prices, fsyncs in (
            (PRICES, 1),
            ({"loopback-model": {"input_per_mtok": 0.0, "output_per_mtok": 0.0}}, 0),
        ):
            synced.clear()
            (tmp_path / str(fsyncs)).mkdir()
            config = loopback_config(server.base_url, tmp_path / str(fsyncs), prices=prices)
            async with build_model_client(config, environ=ENV) as client:
                client.ledger.attach_journal(SpendJournal(tmp_path / f"spend{fsyncs}.jsonl"))
                await client.complete(USER, role="target")
            assert len(synced) == fsyncs
            (entry,) = SpendJournal(tmp_path / f"spend{fsyncs}.jsonl").read()
            assert entry["cached"] is False  # sent, not a cache hit
