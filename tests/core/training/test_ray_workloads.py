"""What runs on the Ray workers besides plain chat rollouts, on a real loopback cluster (a
head with 2 worker CPUs, started by the module): spreadsheetbench's jailed programs and
the coding-agent runs of an agent environment. Each scores as it does locally, and the
work is shown to happen on a worker: the driver's own copy of the code that does it is
made to fail (a worker imports its own, untouched copy)."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ray", reason="the `ray` extra is not installed here: pip install 'skillopt-tui[ray]'"
)
openpyxl = pytest.importorskip("openpyxl")

from core.config import EnvConfig  # noqa: E402
from core.training.ray_executor import RayExecutor  # noqa: E402
from envs import get_environment  # noqa: E402
from envs.spreadsheetbench.materialize import materialize  # noqa: E402
from tests.envs.benchmarks.fixtures import (  # noqa: E402
    SOLUTION,
    scripted_client,
    spreadsheet_release,
    write_manifest,
)
from tests.support.ray_cluster import RayCluster, driver_env  # noqa: E402

pytestmark = pytest.mark.xdist_group("ray-cluster")
SAME = ("latency_s",)  # what may differ between two runs of one rollout


@pytest.fixture(scope="module")
def cluster():
    with driver_env():
        started = RayCluster.start(cpus=2)
        try:
            yield started
        finally:
            import ray

            if ray.is_initialized():
                ray.shutdown()
            started.stop()


def comparable(result) -> dict:
    return {k: v for k, v in result.to_dict().items() if k not in SAME}


def sheet_env(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    materialize(spreadsheet_release(tmp_path / "release"), tmp_path / "data", manifest)
    return get_environment(
        EnvConfig(
            name="spreadsheetbench",
            manifest_dir=str(manifest),
            data_dir=str(tmp_path / "data"),
            options={"exec_timeout_s": 20.0, "max_turns": 2},
        )
    )


async def test_spreadsheetbench_programs_run_jailed_on_the_workers(tmp_path, cluster, monkeypatch):
    env = sheet_env(tmp_path)
    items = [i for split in ("train", "val", "test") for i in env.load_split(split)]
    half = SOLUTION.replace("range(2, 4)", "range(2, 3)")
    # A broken program first (its traceback is fed back), then a right or a half-right one.
    replies = {i.id: ["```python\nraise ValueError('bad column')\n```", SOLUTION if n % 2 else half]
               for n, i in enumerate(items)}  # fmt: skip

    def responder(request):  # each item's skill (its system text) names it
        item_id = request.messages[0]["content"].split()[-1]
        return replies[item_id][sum(m["role"] == "assistant" for m in request.messages)]

    def skill(item):
        return f"Work carefully on item {item.id}"

    async with scripted_client(responder) as client:
        local = [await env.rollout(i, skill(i), client.bind("target")) for i in items]
    assert {r.hard for r in local} == {0.0, 1.0} and "bad column" in str(local[0].trajectory)

    # The driver cannot run a program any more: what scores below ran on the workers.
    def not_here(*args, **kwargs):
        raise AssertionError("a program ran on the driver")

    monkeypatch.setattr("envs.spreadsheetbench.environment.run_program", not_here)
    with driver_env():
        executor = RayExecutor.connect(cluster.address, slots=2, env=env)
        async with scripted_client(responder) as client:
            on_ray = [
                await executor.rollout(env, i, skill(i), client.bind("target")) for i in items
            ]
    assert executor.dispatched == len(items) and executor.calls_served == 2 * len(items)
    assert [comparable(r) for r in on_ray] == [comparable(r) for r in local]
