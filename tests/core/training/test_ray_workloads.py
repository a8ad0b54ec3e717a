"""What runs on the Ray workers besides plain chat rollouts, on a real loopback cluster (a
head with 2 worker CPUs, started by the module): spreadsheetbench's jailed programs and
the coding-agent runs of an agent environment, ALFWorld's episodes. Each scores as it does locally, and the
work is shown to happen on a worker: the driver's own copy of the code that does it is
made to fail (a worker imports its own, untouched copy)."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("ray", reason="the `ray` extra is not installed here: pip install -e '.[ray]'")
openpyxl = pytest.importorskip("openpyxl")

from core.config import EnvConfig, config_from_dict  # noqa: E402
from core.models.agents.process import AGENTS_BIN  # noqa: E402
from core.models.factory import build_model_client  # noqa: E402
from core.models.types import BudgetExceeded  # noqa: E402
from core.training.evaluate import evaluate_skill  # noqa: E402
from core.training.ray_executor import RayExecutor, WorkerMissingFiles  # noqa: E402
from envs import get_environment  # noqa: E402
from envs.spreadsheetbench.materialize import materialize  # noqa: E402
from tests.envs.benchmarks.fixtures import (  # noqa: E402
    SOLUTION,
    scripted_client,
    spreadsheet_release,
    write_manifest,
)
from tests.envs.benchmarks.test_alfworld import SOLUTION as PLAN  # noqa: E402
from tests.envs.benchmarks.test_alfworld import recorded_env  # noqa: E402
from tests.support.agent_clis import AGENTS_SANDBOXED, PROTOCOL, SERVER  # noqa: E402
from tests.support.ray_cluster import driver_env, running_cluster  # noqa: E402
from tests.support.repo_task_brain import INITIAL_SKILL, RULE, RepoTaskBrain  # noqa: E402

pytestmark = pytest.mark.xdist_group("ray-cluster")
SAME = ("latency_s",)  # what may differ between two runs of one rollout


@pytest.fixture(scope="module")
def cluster():
    with running_cluster() as started:
        yield started


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

        # Workers without the workbooks at that path score the driver's shipped copy.
        shutil.move(env.data_dir, tmp_path / "elsewhere")
        async with scripted_client(responder) as client:
            shipped = [
                await executor.rollout(env, i, skill(i), client.bind("target")) for i in items
            ]
    assert [comparable(r) for r in shipped] == [comparable(r) for r in local]


# ---------------------------------------------------------------- agent tasks


def agent_eval_config(agent: str, server, tmp_path, executor: str, address=None, **budget):
    from tests.support.agent_clis import MODEL, PROGRAM

    tree = {
        "run": {"runs_dir": str(tmp_path / "runs"), "executor": executor},
        "env": {"name": "repo_tasks"},
        "models": {
            "target": {
                "backend": agent,
                "base_url": server.base_url,
                "model": MODEL[agent],
                "binary": str(AGENTS_BIN / PROGRAM[agent]),
                "timeout_s": 60.0,
                "max_retries": 0,
                "concurrency": 2,
            }
        },
        "cache": {"path": str(tmp_path / f"{executor}.sqlite")},
    }
    tree["run"]["ray"] = {"address": address}
    if budget:
        tree["budget"] = budget
    return config_from_dict(tree)


async def evaluate_with(agent, tmp_path, executor, address=None, **budget):
    config = agent_eval_config(agent, *SERVERS, tmp_path, executor, address, **budget)
    env = get_environment(config.env, target_backend=agent)
    client = build_model_client(config, environ={})
    try:
        with driver_env():
            result = await evaluate_skill(config, SKILL, "val", env=env, client=client)
        return result, client.ledger.snapshot()
    finally:
        await client.aclose()


class CountingBrain(RepoTaskBrain):
    """The repo-task brain, counting the agent runs that reached it (a run's first
    request: no tool result yet)."""

    starts = 0

    def __call__(self, record):
        body = record.body if isinstance(record.body, dict) else {}
        if self._tool_results(body) == 0:
            self.starts += 1
        return super().__call__(record)


SERVERS: list = []  # the loopback model server of the test that runs
SKILL = f"{INITIAL_SKILL}\n{RULE}\n"


@pytest.mark.agents
@pytest.mark.parametrize("agent", AGENTS_SANDBOXED)
async def test_agent_runs_happen_on_the_workers_and_score_as_local(
    agent, tmp_path, cluster, monkeypatch
):
    if not (AGENTS_BIN / {"claude_code": "claude", "codex": "codex"}[agent]).exists():
        pytest.skip("the agent CLIs are not installed: run `make agents`")
    brain = CountingBrain(PROTOCOL[agent])
    with SERVER[agent](brain) as server:
        SERVERS[:] = [server]
        local, local_usage = await evaluate_with(agent, tmp_path, "local")
        assert local.hard == 1.0 and local.n >= 2  # the rule reached the agent: all pass

        # The driver can no longer run an agent: every run below is a worker's.
        def not_here(*args, **kwargs):
            raise AssertionError("an agent ran on the driver")

        monkeypatch.setattr("core.models.agents.cli.run_agent_task", not_here)
        on_ray, ray_usage = await evaluate_with(agent, tmp_path, "ray", cluster.address)
        assert on_ray.to_dict() == local.to_dict()
        # Each run was paid once, and the driver's ledger counted it.
        assert ray_usage.per_role["target"]["calls"] == local_usage.per_role["target"]["calls"]

        # The cap holds with runs in flight on the workers: reserved before dispatch.
        brain.starts = 0
        capped = agent_eval_config(agent, server, tmp_path, "ray", cluster.address, max_calls=1)
        env = get_environment(capped.env, target_backend=agent)
        client = build_model_client(capped, environ={})
        try:
            with driver_env(), pytest.raises(BudgetExceeded):
                await evaluate_skill(capped, SKILL, "val", env=env, client=client)
        finally:
            await client.aclose()
        assert brain.starts <= 1  # the second run was refused before it was sent


async def test_a_worker_without_the_agent_binary_says_so_in_one_line(tmp_path, cluster):
    from core.models.agents.cli import AgentSettings
    from core.models.agents.codex import CodexBackend
    from core.models.agents.process import AgentMissing
    from core.models.types import AgentTask
    from core.training.ray_agents import run_on_worker

    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("x = 1\n")
    gone = tmp_path / "codex-gone"  # on the driver when the run was set up, not on a worker
    backend = CodexBackend(AgentSettings(binary=gone, model="local-model"))
    task = AgentTask(prompt="p", files=tmp_path / "repo", skill_name="s", check=len)
    with driver_env():
        RayExecutor.connect(cluster.address, slots=1)
        with pytest.raises(AgentMissing) as err:
            await run_on_worker(backend, task, "", 10.0)
    message = str(err.value)
    assert "\n" not in message and "a Ray worker (node" in message and str(gone) in message


# ---------------------------------------------------------------- ALFWorld episodes
# The real game player (the alfworld extra) is not installed here: it compiles textworld's
# planner from source and its games come from `alfworld-download` (the network). The
# episode loop is the same for a recorded episode, which is what runs on the workers here.


def play(request):
    """The scripted target: the plan's next action, from the prompt's step number."""
    prompt = request.messages[-1]["content"]
    step = int(prompt.split("(step ")[1].split(" ")[0])
    return f"<action>{PLAN[step - 1]}</action>" if step <= len(PLAN) else "look"


async def test_alfworld_episodes_are_played_on_the_workers(tmp_path, cluster, monkeypatch):
    env = recorded_env(tmp_path, harness="skill_only")  # `play` reads its step number
    items = [i for split in ("train", "val", "test") for i in env.load_split(split)]
    async with scripted_client(play) as client:
        local = [await env.rollout(i, "Play it.", client.bind("target")) for i in items]
    assert [r.hard for r in local] == [1.0, 1.0, 1.0]

    def not_here(*args, **kwargs):
        raise AssertionError("an episode was played on the driver")

    monkeypatch.setattr("envs.alfworld.environment.open_episode", not_here)
    with driver_env():
        executor = RayExecutor.connect(cluster.address, slots=2, env=env)
        async with scripted_client(play) as client:
            on_ray = [
                await executor.rollout(env, i, "Play it.", client.bind("target")) for i in items
            ]
        assert [comparable(r) for r in on_ray] == [comparable(r) for r in local]
        assert executor.calls_served == len(PLAN) * len(items)

        # A worker without the game files at that path plays the driver's shipped copy.
        shutil.move(env.data_dir, tmp_path / "elsewhere")
        async with scripted_client(play) as client:
            shipped = [
                await executor.rollout(env, i, "Play it.", client.bind("target")) for i in items
            ]
        assert [comparable(r) for r in shipped] == [comparable(r) for r in local]

        # Too heavy to ship (the full game files are gigabytes): a mount, or one line.
        monkeypatch.setattr("core.training.ray_files.SHIP_LIMIT_BYTES", 1)
        (tmp_path / "heavy").mkdir()
        heavy = recorded_env(tmp_path / "heavy", harness="skill_only")
        heavy_items = heavy.load_split("val")
        await executor._env_ref(heavy)  # the run's first dispatch: the driver weighs the folder
        shutil.rmtree(heavy.data_dir)
        with pytest.raises(WorkerMissingFiles) as err:
            await executor.rollout(heavy, heavy_items[0], "Play it.", lambda *a, **k: None)
    assert "\n" not in str(err.value) and str(heavy.data_dir) in str(err.value)
    assert "mount it at that path" in str(err.value)
