"""`run.executor: ray` on a real Ray cluster started by the test on loopback (a head with 2
worker CPUs, shared by the module's tests, stopped after): the scenario's run gives the
same decisions, skills and scores as local; a worker killed mid-run changes nothing and
pays no call twice; the call cap holds with tasks in flight on the workers.

The target is the skill-sensitive TEST DOUBLE behind the driver's client (scripted), or a
real loopback OpenAI server where calls must overlap in time.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip(
    "ray", reason="the `ray` extra is not installed here: pip install -e '.[ray]'"
)

from core.config import config_from_dict  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.run.directory import RunDirectory  # noqa: E402
from core.run.events import EventBus, RunStarted  # noqa: E402
from core.training.evaluate import evaluate_skill  # noqa: E402
from core.training.trainer import run_training  # noqa: E402
from envs import PROJECT_ROOT, get_environment  # noqa: E402
from tests.core.models.helpers import ENV, TEST_KEY, TEST_KEY_VAR  # noqa: E402
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget  # noqa: E402
from tests.support.loopback_openai import LoopbackOpenAI, Reply  # noqa: E402
from tests.support.ray_cluster import DiesOnce, Holds, Shipped, running_cluster  # noqa: E402
from tests.support.train_scenario import INITIAL_SKILL, scenario_config  # noqa: E402

SKILLOPT = Path(sys.executable).parent / "skillopt"

# One cluster for the module; under pytest-xdist (--dist loadgroup) its tests share a worker.
pytestmark = pytest.mark.xdist_group("ray-cluster")


@pytest.fixture(scope="module")
def cluster():
    with running_cluster() as started:
        yield started


def test_the_pre_run_check_knows_the_cluster_by_both_its_addresses(cluster):
    # The check that refuses a listener that is not Ray (test_executor_config.py) lets
    # a real head through, by its GCS address and by its Ray client server.
    from core.training.executor import check_reachable

    check_reachable(cluster.address)
    check_reachable(cluster.client_address)


def tree_for(tmp_path: Path, executor: str, address: str | None = None, **train):
    # The early gate stops a candidate's rollouts as soon as it has decided, so how many
    # it saves depends on which finish first: off, every run pays the same calls.
    tree = scenario_config(tmp_path, gate={"early_decide": False}, **train)
    tree["models"]["target"]["concurrency"] = 4  # more in flight than the cluster's 2 CPUs
    tree["run"]["executor"] = executor
    tree["run"]["ray"] = {"address": address}
    return tree


async def train(tmp_path: Path, tree, out: str, target, *, env=None, cache="responses.sqlite"):
    config = config_from_dict(tree)
    client = build_model_client(
        config,
        scripted={"target": target} if target else {},
        cache_path=tmp_path / cache,
        environ=ENV,
    )
    bus = EventBus()
    started: list[RunStarted] = []
    bus.subscribe(lambda e: started.append(e) if isinstance(e, RunStarted) else None)
    try:
        summary = await run_training(
            config,
            env=env or Shipped(get_environment(config.env)),
            run_dir=RunDirectory(tmp_path / out),
            bus=bus,
            client=client,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()
    return summary, started


DIFFER = ("run_id", "staged", "wall_time_s")  # the run's name, paths and time


def skills_of(run: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((run / "skills").glob("*.md"))}


def outcome(tmp_path: Path, out: str, summary) -> dict:
    """What a run decided: its summary without name, paths and time; every skill's text."""
    data = {k: v for k, v in summary.to_dict().items() if k not in DIFFER}
    return {"summary": data, "skills": skills_of(tmp_path / out)}


async def test_same_skill_and_scores_on_ray_as_local_and_a_lost_worker_changes_nothing(
    tmp_path, cluster
):
    local_target = SkillSensitiveTarget()
    local, _ = await train(
        tmp_path, tree_for(tmp_path, "local"), "local", local_target, cache="local.sqlite"
    )
    assert local.status == "finished"

    ray_target = SkillSensitiveTarget()
    on_ray, started = await train(
        tmp_path, tree_for(tmp_path, "ray", cluster.address), "ray", ray_target, cache="r.sqlite"
    )
    assert outcome(tmp_path, "ray", on_ray) == outcome(tmp_path, "local", local)
    assert ray_target.calls == local_target.calls > 0
    # Concurrency 4 on 2 CPUs: the dispatch gate sends two at a time, and says so.
    assert started[0].executor.startswith("ray, 2 workers on 1 node")
    assert started[0].executor.endswith("2 tasks in flight")

    # `skillopt eval` follows run.executor too, and scores as it does locally.
    best = (tmp_path / "ray" / "best_skill.md").read_text()
    scores = {}
    for executor in ("local", "ray"):
        config = config_from_dict(tree_for(tmp_path, executor, cluster.address))
        client = build_model_client(config, scripted={"target": SkillSensitiveTarget()})
        try:
            env = Shipped(get_environment(config.env))
            scores[executor] = await evaluate_skill(config, best, "test", env=env, client=client)
        finally:
            await client.aclose()
    assert scores["ray"].to_dict() == scores["local"].to_dict()

    # The rollout of t03 kills its worker after its first call was answered; Ray runs the
    # task again on another worker, whose call is answered from the driver's cache.
    marker = tmp_path / "died"
    dying_target = SkillSensitiveTarget()
    tree = tree_for(tmp_path, "ray", cluster.address)
    config = config_from_dict(tree)
    env = DiesOnce(get_environment(config.env), "t03", marker)
    lost, _ = await train(tmp_path, tree, "lost", dying_target, env=env, cache="lost.sqlite")
    assert marker.exists()  # a worker really died mid-rollout
    assert outcome(tmp_path, "lost", lost) == outcome(tmp_path, "local", local)
    assert dying_target.calls == local_target.calls  # no call paid twice


async def test_the_call_cap_holds_with_tasks_in_flight_on_the_workers(tmp_path, cluster):
    # A real server taking 0.3 s per call, 4 rollouts in flight: without reserving the
    # calls in flight, each of them would pass the cap's check before any was counted.
    with LoopbackOpenAI(handler=lambda r: Reply("Paris"), latency_s=0.3) as server:
        tree = tree_for(tmp_path, "ray", cluster.address)
        tree["models"]["target"] = {
            "backend": "openai",
            "base_url": server.base_url,
            "model": "loopback-target",
            "api_key_env": TEST_KEY_VAR,
            "concurrency": 4,
        }
        tree["budget"] = {"max_calls": 3}
        summary, _ = await train(tmp_path, tree, "capped", None)
        assert summary.status == "stopped" and "call budget reached" in summary.reason
        assert len(server.requests) == 3
    # The key stayed with the driver: the job's runtime_env (which the dashboard and
    # `ray list jobs` show) carries code, no env_vars and no key.
    import ray

    job_env = ray.get_runtime_context().get_runtime_env_string()
    assert "py_modules" in job_env and "env_vars" not in job_env and TEST_KEY not in job_env


def test_a_driver_killed_mid_run_resumes_to_the_same_result(tmp_path, cluster):
    local_target = SkillSensitiveTarget()
    local, _ = asyncio.run(
        train(tmp_path, tree_for(tmp_path, "local"), "local", local_target, cache="l.sqlite")
    )
    tree = tree_for(tmp_path, "ray", cluster.address)
    tree["cache"] = {"path": str(tmp_path / "ray.sqlite")}
    config = tmp_path / "ray.yaml"
    config.write_text(yaml.safe_dump(tree))
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "SKILLOPT_TEST_CALL_LOG": str(log)}
    args = [str(SKILLOPT), "train", "--config", str(config), "--out", str(tmp_path / "ray")]
    # The driver blocks at its 12th call (before answering it): kill -9 it there.
    driver = subprocess.Popen(
        args,
        env={**env, "SKILLOPT_TEST_HANG_AT_CALL": "12"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not Path(f"{log}.hanging").exists():
            assert driver.poll() is None and time.monotonic() < deadline, "never reached call 12"
            time.sleep(0.05)
    finally:
        driver.kill()
        driver.wait()
    resumed = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    expected = outcome(tmp_path, "local", local)
    got = {
        "summary": {k: v for k, v in summary.items() if k not in DIFFER},
        "skills": skills_of(tmp_path / "ray"),
    }
    expected["summary"].pop("usage")
    got["summary"].pop("usage")
    assert got == expected
    # The resume replays what the killed driver had cached: it pays again at most the
    # calls answered in the instant before the kill, before their cache rows were written
    # (4 in flight), never the run so far (as a local run killed there would).
    paid = len(log.read_text().splitlines())
    assert local_target.calls <= paid <= local_target.calls + 4


async def test_a_ray_client_address_scores_as_local(tmp_path, cluster):
    # ray://host:port goes through the cluster's Ray client server (the [client] extra).
    scores = {}
    for executor, address in (("local", None), ("ray", cluster.client_address)):
        config = config_from_dict(tree_for(tmp_path, executor, address))
        client = build_model_client(config, scripted={"target": SkillSensitiveTarget()})
        try:
            env = Shipped(get_environment(config.env))
            scores[executor] = await evaluate_skill(
                config, INITIAL_SKILL, "val", env=env, client=client
            )
        finally:
            await client.aclose()
    assert scores["ray"].to_dict() == scores["local"].to_dict()
    assert scores["ray"].n == 5


async def test_a_freed_worker_goes_to_critical_work_before_spare_work(cluster):
    # Both workers busy, then two spare rollouts (the initial skill's test) and a critical
    # one queue for them: Ray's own queue would start the spares first (they came first).
    from core.environment.contract import TaskItem
    from core.models.priority_pool import PRIORITY, SPARE
    from core.training.ray_executor import RayExecutor

    def item(name: str, hold_s: float) -> TaskItem:
        return TaskItem(name, "hold", name, "", {"hold_s": hold_s})

    env = Holds()

    async def spare(name: str):
        PRIORITY.set(SPARE)  # as the scheduler sets it for an early job's task
        return await executor.rollout(env, item(name, 0.3), "", None)

    executor = RayExecutor.connect(cluster.address, slots=4, env=env)
    blockers = [
        asyncio.create_task(executor.rollout(env, item(f"busy{n}", 1.5), "", None))
        for n in range(2)
    ]
    await asyncio.sleep(0.3)  # the blockers hold both workers' places
    spares = [asyncio.create_task(spare(f"spare{n}")) for n in range(2)]
    await asyncio.sleep(0.3)
    critical = await executor.rollout(env, item("critical", 0.3), "", None)
    done = await asyncio.gather(*blockers, *spares)
    started = {r.item_id: float(r.explanation) for r in [*done, critical]}
    assert started["critical"] < min(started["spare0"], started["spare1"]), started
