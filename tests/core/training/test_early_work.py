"""Early work (issue 24, README "What runs early"): the baseline val and the initial
skill's test evaluation run in the slots the critical path leaves idle, and nothing else
changes — same decisions, same files (modulo timestamps), same calls.

The scenario of tests/support/train_scenario.py with the llm strategy, target and optimizer
each a real loopback OpenAI server: the target answers with the skill-sensitive TEST
DOUBLE after a short pause, the optimizer with the ScriptedAnalyst TEST DOUBLE after a
longer one (an analyst call is long, as a real one is). Every call's span is recorded at
the client, with the loop stage it belongs to."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.ledger import STAGE
from core.models.types import ModelError
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.trainer import run_training
from envs import get_environment
from tests.core.models.helpers import ENV, TEST_KEY_VAR
from tests.core.optimizer.test_llm import ScriptedAnalyst
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

TARGET_PAUSE_S = 0.02
ANALYST_PAUSE_S = 0.25


def loopback_role(server: LoopbackOpenAI, model: str, concurrency: int) -> dict:
    return {
        "backend": "openai",
        "base_url": server.base_url,
        "model": model,
        "api_key_env": TEST_KEY_VAR,
        "concurrency": concurrency,
        "max_retries": 0,  # a refused call fails at once
    }


class Servers:
    """The two loopback servers (one pair for the runs a test compares: the endpoints are
    part of the config and of every cache key)."""

    def __enter__(self) -> Servers:
        target, analyst = SkillSensitiveTarget(), ScriptedAnalyst()
        self.target, self.optimizer = LoopbackOpenAI().start(), LoopbackOpenAI().start()
        self.target.handler = lambda r: Reply(
            target.reply(r.messages), chunk_interval_s=TARGET_PAUSE_S
        )
        self.optimizer.handler = lambda r: Reply(analyst(r), chunk_interval_s=ANALYST_PAUSE_S)
        return self

    def __exit__(self, *exc: object) -> None:
        self.target.stop()
        self.optimizer.stop()

    def sent(self) -> tuple[int, int]:
        return len(self.target.requests), len(self.optimizer.requests)


async def scenario_run(tmp_path: Path, servers: Servers, out: str, *, sequential=False):
    """One run; returns (summary, call spans, requests each server received)."""
    before = servers.sent()
    # One step of six train items, one analyst group: a long optimizer call while the
    # target's four slots would sit idle; its edits then go to the gate.
    tree = scenario_config(
        tmp_path, strategy="llm", epochs=1, steps_per_epoch=1, batch_size=6, minibatch_size=6
    )
    tree["models"] = {
        "target": loopback_role(servers.target, "loopback-target", 4),
        "optimizer": loopback_role(servers.optimizer, "loopback-optimizer", 4),
    }
    tree["cache"] = {"enabled": False}  # every call reaches a server
    config = config_from_dict(tree)
    client = build_model_client(config, environ=ENV)
    spans: list[tuple[str, float, float]] = []
    inner = client.complete

    async def recorded(messages, *, role, **settings):
        started = time.monotonic()
        try:
            return await inner(messages, role=role, **settings)
        finally:
            spans.append((STAGE.get(), started, time.monotonic()))

    client.complete = recorded
    try:
        summary = await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / out),
            bus=EventBus(),
            client=client,
            initial_skill=INITIAL_SKILL,
            sequential=sequential,
        )
    finally:
        await client.aclose()
    after = servers.sent()
    assert summary.status == "finished"
    return summary, spans, (after[0] - before[0], after[1] - before[1])


def overlap(spans, stage_a: str, stages_b: set[str]) -> bool:
    a = [(s, e) for st, s, e in spans if st == stage_a]
    b = [(s, e) for st, s, e in spans if st in stages_b]
    return any(s1 < e2 and s2 < e1 for s1, e1 in a for s2, e2 in b)


async def test_the_baseline_and_the_initial_test_run_beside_the_step(tmp_path):
    with Servers() as servers:
        _, spans, _ = await scenario_run(tmp_path, servers, "early")
    stages = Counter(stage for stage, _, _ in spans)
    assert stages["baseline"] == 5 and stages["rollout"] == 6 and stages["analyst"] == 1
    # Fails on the old code: the baseline ended before step 0's first call.
    assert overlap(spans, "baseline", {"rollout", "analyst"})
    assert overlap(spans, "test", {"analyst"})  # the initial skill's test, in idle slots
    first_rollout = min(s for st, s, _ in spans if st == "rollout")
    first_baseline = min(s for st, s, _ in spans if st == "baseline")
    assert first_rollout <= first_baseline  # the critical path is served first


async def test_the_sequential_order_runs_each_phase_in_turn(tmp_path):
    with Servers() as servers:
        _, spans, _ = await scenario_run(tmp_path, servers, "seq", sequential=True)
    assert not overlap(spans, "baseline", {"rollout", "analyst"})
    assert not overlap(spans, "test", {"analyst", "rollout", "gate"})


# What differs between two runs whatever their order: clocks, and the run's own name.
TIMES = {"started_at", "wall_time_s", "seconds", "latency_s", "ts", "time", "created_at", "run_id"}


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def run_files(run: Path) -> dict[str, object]:
    """Every file of a run directory, JSON without timestamps; the event log and the spend
    journal as multisets (independent events may come in another order); the SQLite
    caches by their rows; the run's own path as <run>."""
    out: dict[str, object] = {}
    for path in sorted(run.rglob("*")):
        if not path.is_file() or path.name.endswith(("-wal", "-shm", ".lock")):
            continue
        name = str(path.relative_to(run))
        if path.suffix == ".sqlite":
            out[name] = sqlite_rows(path)
            continue
        text = path.read_text().replace(str(run), "<run>")  # staged refs name their run
        if path.suffix == ".jsonl":
            rows = [untimed(json.loads(line)) for line in text.splitlines()]
            rows = [r for r in rows if r.get("type") != "BudgetUpdated"]  # running totals
            out[name] = Counter(json.dumps(r, sort_keys=True) for r in rows)
        elif path.suffix == ".json":
            out[name] = untimed(json.loads(text))
        else:
            out[name] = text
    return out


def sqlite_rows(path: Path) -> list:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = []
        for table in sorted(tables):
            for row in db.execute(f"SELECT * FROM {table}"):  # noqa: S608 - our own tables
                cells = [
                    untimed(json.loads(c)) if isinstance(c, str) and c[:1] == "{" else c
                    for c in row
                ]
                rows.append(json.dumps([table, cells], sort_keys=True))
        return sorted(rows)
    finally:
        db.close()


async def test_early_work_changes_no_decision_file_or_call(tmp_path):
    """The same run in the new order and in the old, phase after phase: the same best
    skill, gate decisions, skill texts, step files and summary, and the same calls."""
    with Servers() as servers:
        early, _, early_sent = await scenario_run(tmp_path, servers, "early")
        seq, _, seq_sent = await scenario_run(tmp_path, servers, "seq", sequential=True)
    assert early_sent == seq_sent
    keep = ("baseline_val", "best_val", "final_val", "best_version", "accepted_steps", "test")
    assert {k: getattr(early, k) for k in keep} == {k: getattr(seq, k) for k in keep}
    assert early.usage == seq.usage
    a, b = run_files(tmp_path / "early"), run_files(tmp_path / "seq")
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], name
    assert len(a) >= 15  # state, summary, history, steps, skills, caches, events
    gate = json.loads((tmp_path / "early" / "steps" / "0000" / "gate.json").read_text())
    assert gate["accepted"] is True  # a gate decision, compared above


async def test_a_run_failing_mid_step_resumes_without_paying_twice(tmp_path):
    """The optimizer fails step 0's analyst call while the baseline and the initial test
    are in flight beside it: they end before the run reports the failure, their results
    are in the rollout cache (the response cache is off), and the resumed run pays for no
    target call twice and decides as an uninterrupted run."""
    with Servers() as servers:
        reference, _, (ref_target, _) = await scenario_run(tmp_path, servers, "reference")
        answer, down = servers.optimizer.handler, [True]
        servers.optimizer.handler = lambda r: Fault.error(500) if down[0] else answer(r)
        before = servers.sent()
        with pytest.raises(ModelError, match="optimizer"):
            await scenario_run(tmp_path, servers, "failed")
        failed_target = servers.sent()[0] - before[0]
        state = json.loads((tmp_path / "failed" / "state.json").read_text())
        assert (state["status"], state["next_step"]) == ("failed", 0)
        down[0] = False
        resumed, _, (resumed_target, _) = await scenario_run(tmp_path, servers, "failed")
    assert failed_target + resumed_target == ref_target
    keep = ("baseline_val", "best_val", "final_val", "best_version", "accepted_steps", "test")
    assert {k: getattr(resumed, k) for k in keep} == {k: getattr(reference, k) for k in keep}
