"""The calls that can wait (the baseline val, the initial skill's test, the final tests)
go through the providers' batch APIs with `run.batch` (issue 42), against loopback
servers that speak OpenAI's Batch API and Anthropic's Message Batches. The target is the
skill-sensitive TEST DOUBLE behind those real HTTP servers, so a batched run and an
interactive one must reach the same scores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

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


def asked(body: dict[str, Any]) -> tuple[Any, Any]:
    """What a request asks, however it was sent (Anthropic's system prompt apart)."""
    return body.get("system"), body["messages"]


def asks_norway(body: dict[str, Any]) -> bool:
    return "Norway" in json.dumps(body.get("messages"))


@pytest.mark.parametrize("backend", sorted(SERVERS))
async def test_a_request_that_fails_inside_a_batch_is_asked_again_interactively(tmp_path, backend):
    """Not scored as a model error: that would lower the baseline for a reason that has
    nothing to do with the skill. Asked again at the full price, it gets its answer."""
    double = SkillSensitiveTarget()
    with SERVERS[backend](double_handler(double)) as server:
        server.fail_when = asks_norway
        batched = await train(tmp_path, batch_tree(tmp_path, server, backend), "batched")
        failed = [
            asked(body)
            for batch in server.batches.values()
            for custom_id, body in batch.requests
            if "error" in batch.results[custom_id]
        ]
        again = [
            r
            for r in server.requests
            if r.route == server.endpoint_path and asked(r.body) in failed
        ]
        plain = await train(tmp_path, batch_tree(tmp_path, server, backend, "off"), "plain")
    assert scores(batched) == scores(plain)
    assert len(again) == 1  # once, interactively, after the batch said it failed
    paid = [e for e in journal(tmp_path, "batched") if e["stage"] == "baseline" and not e["cached"]]
    assert sum(1 for e in paid if not e.get("batch")) == 1  # that one at the full price
    assert sum(1 for e in paid if e.get("batch")) >= 3


@pytest.mark.parametrize("backend", sorted(SERVERS))
async def test_an_expired_batch_answers_what_it_reached_and_the_rest_is_asked_interactively(
    tmp_path, backend
):
    double = SkillSensitiveTarget()
    with SERVERS[backend](double_handler(double)) as server:
        server.expire, server.answer_before_expiry = True, 2
        notes: list[str] = []
        batched = await train(
            tmp_path, batch_tree(tmp_path, server, backend), "batched", notes=notes
        )
        plain = await train(tmp_path, batch_tree(tmp_path, server, backend, "off"), "plain")
    assert scores(batched) == scores(plain)
    assert any(("expired" in n or "ended" in n) and "asked interactively" in n for n in notes)
    entries = [e for e in journal(tmp_path, "batched") if e["stage"] in BATCHED_STAGES]
    answered_in_batches = sum(min(2, len(batch)) for batch in server.submissions)
    assert sum(1 for e in entries if e.get("batch")) == answered_in_batches


async def test_told_not_to_wait_the_run_stops_with_the_batch_id_and_resumes_without_resubmitting(
    tmp_path,
):
    double = SkillSensitiveTarget()
    with SERVERS["openai"](double_handler(double)) as server:
        server.hold = True
        tree = batch_tree(tmp_path, server, "openai")
        stopped = await train(tmp_path, tree, "run", wait=False)
        assert stopped.status == "stopped"
        assert server.submissions and server.batches  # submitted before it stopped
        first = next(iter(server.batches))
        assert f"batch {first} in_progress: 0/" in stopped.reason
        assert "ready within" in stopped.reason and "re-run the same command" in stopped.reason
        again = await train(tmp_path, tree, "run", wait=False)  # still pending: still stopped
        assert again.status == "stopped" and len(server.submissions) == 1
        server.release()
        server.hold = False
        done = await train(tmp_path, tree, "run", wait=False)
        submitted = [cid for batch in server.submissions for cid in batch]
    assert done.status == "finished"
    assert len(submitted) == len(set(submitted))  # nothing asked twice


SKILLOPT = Path(sys.executable).parent / "skillopt"
REPO = Path(__file__).resolve().parents[3]


def cli(config: Path, out: Path, *extra: str) -> list[str]:
    return [str(SKILLOPT), "train", "--config", str(config), "--out", str(out), *extra]


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return {**env, **ENV, "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("backend", sorted(SERVERS))
def test_kill_9_while_a_batch_is_pending_resumes_without_submitting_it_again(tmp_path, backend):
    double = SkillSensitiveTarget()
    with SERVERS[backend](double_handler(double)) as server:
        server.hold = True
        config = tmp_path / "batch.yaml"
        config.write_text(yaml.safe_dump(batch_tree(tmp_path, server, backend)))
        out = tmp_path / "run"
        # Told not to wait: exit 3, the batch id and when it should be ready.
        first = subprocess.run(
            cli(config, out, "--no-wait"),
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert first.returncode == 3, first.stderr
        pending = list(server.batches)
        assert len(pending) == 1 and f"batch {pending[0]} in_progress" in first.stderr
        assert "ready within" in first.stderr
        # Waiting this time; killed while it polls the pending batch.
        proc = subprocess.Popen(
            cli(config, out), env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            polls = len(server.requests)
            deadline = time.monotonic() + 60
            while len(server.requests) < polls + 3:  # it is polling, not submitting
                assert proc.poll() is None, "the run ended while its batch was pending"
                assert time.monotonic() < deadline, "the run never polled its batch"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert list(server.batches) == pending  # nothing submitted again
        saved = json.loads((out / "batches" / "batches.json").read_text())["batches"]
        assert [b["batch_id"] for b in saved] == pending
        server.release()
        server.hold = False
        last = subprocess.run(
            cli(config, out), env=cli_env(), capture_output=True, text=True, timeout=120
        )
    assert last.returncode == 0, last.stderr
    submitted = [cid for batch in server.submissions for cid in batch]
    assert len(submitted) == len(set(submitted))  # no request was ever submitted twice
    assert server.submissions[0] == list(saved[0]["requests"])
    entries = [e for e in journal(tmp_path, "run") if e.get("batch")]
    assert len(entries) == len(submitted)  # each batch answer billed once, across processes


def test_auto_batches_only_the_providers_own_api_and_on_refuses_a_target_without_one(tmp_path):
    from core.config import ConfigError
    from core.training.batch_phase import open_batch_queue

    with SERVERS["openai"]() as server:
        tree = batch_tree(tmp_path, server, "openai", "auto")
        config = config_from_dict(tree)
        client = build_model_client(config, environ=ENV)
        assert open_batch_queue(config, client, tmp_path / "b") is None  # a base_url server
        assert client.batches is None
        official = {**tree["models"]["target"]}
        del official["base_url"]
        tree["models"]["target"] = official
        config = config_from_dict(tree)
        client = build_model_client(config, environ=ENV)
        assert open_batch_queue(config, client, tmp_path / "b") is client.batches is not None
    tree = scenario_config(tmp_path)  # the scripted TEST DOUBLE target: no batch API
    tree["run"]["batch"] = "on"
    config = config_from_dict(tree)
    with pytest.raises(ConfigError, match="has no batch API .*set run.batch to auto or off"):
        open_batch_queue(config, build_model_client(config), tmp_path / "b")


def test_batch_on_for_a_target_without_a_batch_api_is_refused_before_the_run_exists(tmp_path):
    from tests.support.cli_in_process import run_main

    tree = scenario_config(tmp_path)  # the scripted TEST DOUBLE target
    tree["run"]["batch"] = "on"
    config = tmp_path / "on.yaml"
    config.write_text(yaml.safe_dump(tree))
    out = tmp_path / "run"
    done = run_main(
        ["train", "--config", str(config), "--out", str(out)],
        env=cli_env(),
        cwd=tmp_path,
        argv0="skillopt",
    )
    assert done.returncode == 2
    problem = [line for line in done.stderr.splitlines() if "run.batch" in line]
    assert len(problem) == 1 and "set run.batch to auto or off" in problem[0]
    assert not out.exists()


async def test_a_key_echoed_in_a_batch_answer_never_reaches_the_run_directory(tmp_path):
    from tests.core.models.helpers import TEST_KEY

    double = SkillSensitiveTarget()
    answer = double_handler(double)

    def echoing(record: RecordedRequest) -> Reply:
        reply = answer(record)
        return Reply(f"{reply.text} {TEST_KEY}") if asks_norway(record.body) else reply

    with SERVERS["openai"](echoing) as server:
        done = await train(tmp_path, batch_tree(tmp_path, server, "openai"), "run")
    assert done.status == "finished"
    assert (tmp_path / "run" / "batches" / "batches.json").is_file()
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert TEST_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("backend", sorted(SERVERS))
async def test_a_batch_the_provider_refuses_stops_the_run_resumably_and_is_submitted_on_rerun(
    tmp_path, backend
):
    from core.models.types import ModelUnavailable

    double = SkillSensitiveTarget()
    with SERVERS[backend](double_handler(double)) as server:
        server.refuse_submissions = 1
        tree = batch_tree(tmp_path, server, backend)
        with pytest.raises(ModelUnavailable, match="could not be submitted .*rerun the same"):
            await train(tmp_path, tree, "run")
        # (a phase running beside may have submitted its own batch meanwhile)
        assert server.refuse_submissions == 0
        done = await train(tmp_path, tree, "run")
        submitted = [cid for batch in server.submissions for cid in batch]
    assert done.status == "finished"
    assert len(submitted) == len(set(submitted)) > 0
