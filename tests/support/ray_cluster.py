"""A real Ray cluster on loopback for the `run.executor: ray` tests and bench, started and
stopped by its user, and a test environment wrapper whose worker dies once mid-rollout.

The cluster is `ray start --head --block` in its own process group, on free ports and its
own temp dir, so it never meets another session's Ray; stopping it ends that group only
(never `ray stop`, which stops every Ray of the user on the machine).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core.environment.contract import WorkerNeeds

START_TIMEOUT_S = 90.0
WORKER_PORTS = 40  # the size of the worker port range, past its low end
# Ray 2.60 turns token auth on for a cluster whenever ~/.ray/auth_token exists (a local
# `ray.init()` writes one), and the driver must then hold the same token: the loopback
# cluster and its drivers say explicitly that they use none, so whatever a user's home
# holds cannot split them. `driver_env()` sets it for this process's drivers.
AUTH = {"RAY_AUTH_MODE": "disabled"}
PORT_NAMES = (
    "port",
    "node-manager-port",
    "object-manager-port",
    "ray-client-server-port",
    "dashboard-agent-listen-port",
    "dashboard-agent-grpc-port",
    "runtime-env-agent-port",
    "metrics-export-port",
    "dashboard-port",
)


@contextlib.contextmanager
def driver_env():
    """This process (and the drivers it starts) joins the loopback cluster without a token."""
    saved = {k: os.environ.get(k) for k in AUTH}
    os.environ.update(AUTH)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class RayCluster:
    process: subprocess.Popen
    address: str  # the GCS address a driver joins
    temp_dir: Path
    client_address: str = ""  # ray://, through the cluster's Ray client server

    @classmethod
    def start(cls, cpus: int = 2) -> RayCluster:
        ray_bin = Path(sys.executable).with_name("ray")
        temp_dir = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: socket paths
        ports = dict(zip(PORT_NAMES, free_ports(len(PORT_NAMES) + 2), strict=False))
        low = free_ports(1)[0]
        # The worker ports are a range of their own: one that holds a named port is refused
        # by ray start ("is used by other components"), so draw again.
        while any(low <= port <= low + WORKER_PORTS for port in ports.values()):
            low = free_ports(1)[0]
        args = [
            str(ray_bin),
            "start",
            "--head",
            "--block",
            "--node-ip-address",
            "127.0.0.1",
            f"--num-cpus={cpus}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
            f"--min-worker-port={low}",
            f"--max-worker-port={low + WORKER_PORTS}",
            *(f"--{name}={port}" for name, port in ports.items()),
        ]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **AUTH}
        log = open(temp_dir / "ray-start.log", "wb")  # noqa: SIM115 - the child writes it
        process = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        cluster = cls(
            process,
            f"127.0.0.1:{ports['port']}",
            temp_dir,
            f"ray://127.0.0.1:{ports['ray-client-server-port']}",
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        # Wait on the condition: the GCS and the Ray client server listen.
        while not (_answers(ports["port"]) and _answers(ports["ray-client-server-port"])):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (temp_dir / "ray-start.log").read_text(errors="replace")[-800:]
                cluster.stop()
                raise RuntimeError(f"ray start --head did not come up: {tail}")
            time.sleep(0.1)
        return cluster

    def stop(self) -> None:
        """End the cluster's process group (the head and every worker it spawned) at once.
        `ray start --block` does not exit on SIGTERM (still running 30 s after one), so
        the 5 s wait for it that came first always ran out before this same kill. The
        group is the head's pid (start_new_session), so its workers are ended even when
        the head is gone already."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@contextlib.contextmanager
def running_cluster(cpus: int = 2):
    """A loopback cluster for a test module, the driver disconnected and the cluster
    stopped after (a module fixture: `with running_cluster() as cluster: yield cluster`)."""
    with driver_env():
        started = RayCluster.start(cpus=cpus)
        try:
            yield started
        finally:
            import ray

            if ray.is_initialized():
                ray.shutdown()
            started.stop()


class DiesOnce:
    """TEST DOUBLE environment: the wrapped one, except that the rollout of `item_id`
    kills its worker process (os._exit, as a lost machine would) right after its first
    model call has been answered — once: a marker file says it happened, so Ray's retry
    on another worker runs it to the end."""

    def __init__(self, env, item_id: str, marker: Path) -> None:
        self.inner = env
        self.item_id = item_id
        self.marker = str(marker)
        self.name = env.name
        self.version = env.version
        self.worker_needs = WorkerNeeds(modules=("tests",))

    def load_split(self, split):
        return self.inner.load_split(split)

    def score(self, item, prediction):
        return self.inner.score(item, prediction)

    async def rollout(self, item, skill_text, complete):
        if item.id != self.item_id or os.path.exists(self.marker):
            return await self.inner.rollout(item, skill_text, complete)

        async def then_die(messages, **settings):
            completion = await complete(messages, **settings)
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
            return completion  # never reached

        return await self.inner.rollout(item, skill_text, then_die)


class Shipped:
    """The wrapped environment, declaring the test code as a worker need (the tests'
    modules are not the project's, which the executor always ships)."""

    def __init__(self, env) -> None:
        self.inner = env
        self.name = env.name
        self.version = env.version
        self.worker_needs = WorkerNeeds(modules=("tests",))

    def load_split(self, split):
        return self.inner.load_split(split)

    def score(self, item, prediction):
        return self.inner.score(item, prediction)

    async def rollout(self, item, skill_text, complete):
        return await self.inner.rollout(item, skill_text, complete)


class Holds:
    """TEST DOUBLE environment: each rollout takes the worker for its item's `hold_s`
    seconds (no model call) and says in its explanation when it started on the worker, so
    a test reads the order in which the cluster gave out its workers."""

    name = "holds"
    version = "1"
    worker_needs = WorkerNeeds(modules=("tests",))

    def load_split(self, split):
        return []

    def score(self, item, prediction):
        raise NotImplementedError

    async def rollout(self, item, skill_text, complete):
        from core.environment.contract import RolloutResult

        started = time.time()
        time.sleep(item.data["hold_s"])  # the worker is busy, as with a long episode
        return RolloutResult(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            reference="",
            prediction="",
            hard=1.0,
            soft=1.0,
            explanation=f"{started:.6f}",
            trajectory=[],
        )
