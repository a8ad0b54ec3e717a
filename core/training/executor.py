"""Where one rollout runs (`run.executor`): the one seam between the rollout runner and the
machines.

The runner decides *what* runs and in which order (cache first, the early gate, item
order); an executor only runs one `env.rollout(item, skill_text, complete)`. `local` runs
it in this process; `ray` (core/training/ray_executor.py) runs it as a Ray task on a
cluster while this process keeps the run directory, the caches, the ledger and the budget
and makes every model call itself. Ray is an optional extra, imported only here, only for
`executor: ray`.
"""

from __future__ import annotations

import socket
from typing import Any, Protocol

from core.config import Config, ConfigError
from core.environment.contract import Environment, RolloutResult, TaskItem
from core.errors import UserError
from core.install_hint import install_extra
from core.ray_address import RayAddress, parse_ray_address

RAY_PIP = install_extra("ray")
CONNECT_TIMEOUT_S = 5.0
PROBE_TIMEOUT_S = 5.0  # one gRPC call to the cluster; a head answers in milliseconds


class RayNotInstalled(ConfigError):
    """`run.executor: ray` without the `ray` extra."""


class RayUnreachable(UserError):
    """`run.ray.address` names a cluster that does not answer."""


class Executor(Protocol):
    async def rollout(
        self, env: Environment, item: TaskItem, skill_text: str, complete: Any
    ) -> RolloutResult: ...

    def describe(self) -> str:
        """Where the work runs, for the estimate line and the TUI header."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """In this process: as many rollouts at once as the runner's pool (the target's
    concurrency) allows."""

    def __init__(self, slots: int = 1) -> None:
        self.slots = slots

    async def rollout(
        self, env: Environment, item: TaskItem, skill_text: str, complete: Any
    ) -> RolloutResult:
        return await env.rollout(item, skill_text, complete)

    def describe(self) -> str:
        return f"local, {self.slots} slot{'s' if self.slots != 1 else ''}"

    def close(self) -> None:
        return None


def planned_words(config: Config) -> str:
    """Where the work will run, from the config alone (the estimate connects to nothing)."""
    slots = config.models.target.concurrency
    if config.run.executor == "local":
        return LocalExecutor(slots).describe()
    address = config.run.ray.address
    where = f"the Ray cluster at {address}" if address else "a local Ray started for the run"
    return f"ray, on the workers of {where}, {in_flight(slots)}"


def in_flight(slots: int) -> str:
    return f"{slots} task{'s' if slots != 1 else ''} in flight"


def _resolved(address: str) -> RayAddress:
    """The address Ray would dial: `auto` is what Ray itself finds (RAY_ADDRESS, the
    cluster `ray start` recorded on this machine, a GCS process running here)."""
    try:
        parsed = parse_ray_address(address)
    except ValueError as exc:  # a caller that skipped the config's check
        raise ConfigError(f"run.ray.address {exc}") from None
    if parsed.kind != "auto":
        return parsed
    from ray._private.services import get_ray_address_from_environment

    try:
        found = get_ray_address_from_environment("auto", None)
    except ConnectionError:
        raise RayUnreachable(
            "run.ray.address auto: no Ray cluster runs on this machine; start one "
            "(ray start --head) or give its address (ray://host:10001 or host:6379)"
        ) from None
    try:
        return parse_ray_address(found)
    except ValueError as exc:
        raise RayUnreachable(
            f"run.ray.address auto: Ray found {exc}; set RAY_ADDRESS or run.ray.address"
        ) from None


def _speaks_ray(target: RayAddress) -> str | None:
    """None when a Ray server answers one gRPC call at `target` within PROBE_TIMEOUT_S;
    else what answered instead. Something else listening there (a web server, a stale
    port) would have Ray's own connect retry for half a minute, or wait forever."""
    import grpc

    options = [("grpc.enable_http_proxy", 0)]  # a proxy answering for the host is not Ray
    with grpc.insecure_channel(f"{_bracketed(target.host)}:{target.port}", options) as channel:
        try:
            if target.kind == "client":
                from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc

                ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
                ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(
                    ping, timeout=PROBE_TIMEOUT_S
                )
            else:
                from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

                gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId(
                    gcs_service_pb2.GetClusterIdRequest(), timeout=PROBE_TIMEOUT_S
                )
        except grpc.RpcError as exc:
            code = exc.code()
            if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                return None  # a Ray cluster that wants a token: Ray's connect says so
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return f"no Ray answer within {PROBE_TIMEOUT_S:g} s"
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return "a gRPC server that is not Ray's"
            return "a server that does not speak Ray's protocol"
    return None


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def check_reachable(address: str | None) -> None:
    """Fail fast, with one line, on an address where no Ray answers: nothing listens there,
    or something else does (Ray's own connect retries for half a minute, or for ever on
    a GCS address, before it gives up)."""
    if address is None:
        return
    target = _resolved(address)
    host, port = target.host, target.port
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise RayUnreachable(
            f"run.ray.address {address}: nothing answers at {host}:{port} "
            f"({exc.strerror or type(exc).__name__}); start the cluster (ray start --head) "
            "or fix the address"
        ) from None
    problem = _speaks_ray(target)
    if problem is not None:
        usual = "its client server, 10001" if target.kind == "client" else "its GCS, 6379"
        raise RayUnreachable(
            f"run.ray.address {address}: {_bracketed(host)}:{port} is not a Ray cluster "
            f"({problem}); give the head's address ({usual} unless changed)"
        )


def check_executor(config: Config) -> None:
    """The input problems of `run.executor`, as one-line UserErrors, for the faces to
    raise before a run directory exists: Ray not installed, an address where no Ray answers."""
    if config.run.executor == "local":
        return
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RayNotInstalled(
            f"run.executor: ray needs Ray, which is not installed: {RAY_PIP}"
        ) from None
    check_reachable(config.run.ray.address)


def open_executor(config: Config, env: Environment | None = None, *, ledger=None) -> Executor:
    """The executor `run.executor` names, connected (after `check_executor`). `ledger` is
    the run's: the ray executor reserves calls against its cap before it sends them."""
    slots = config.models.target.concurrency
    if config.run.executor == "local":
        return LocalExecutor(slots)
    check_executor(config)
    from core.training.ray_executor import RayExecutor

    return RayExecutor.connect(config.run.ray.address, slots=slots, env=env, ledger=ledger)
