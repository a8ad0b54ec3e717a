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
from urllib.parse import urlsplit

from core.config import Config, ConfigError
from core.environment.contract import Environment, RolloutResult, TaskItem
from core.errors import UserError
from core.install_hint import install_extra
from core.training.in_flight import in_flight

RAY_PIP = install_extra("ray")
CONNECT_TIMEOUT_S = 5.0


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


def _host_port(address: str) -> tuple[str, int] | None:
    """The (host, port) to probe for an address Ray would dial; None for `auto` (Ray
    finds the cluster of this machine itself, and says so at once when there is none)."""
    if address == "auto":
        return None
    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    if not parts.hostname or parts.port is None:
        raise ConfigError(
            f"run.ray.address {address!r} is not an address: give ray://host:10001, "
            "host:6379, auto, or null to start a local Ray"
        )
    return parts.hostname, parts.port


def check_reachable(address: str | None) -> None:
    """Fail fast, with one line, on an address nothing listens at (Ray's own connect
    retries for about a minute before it gives up)."""
    if address is None:
        return
    target = _host_port(address)
    if target is None:
        return
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise RayUnreachable(
            f"run.ray.address {address}: nothing answers at {host}:{port} "
            f"({exc.strerror or type(exc).__name__}); start the cluster (ray start --head) "
            "or fix the address"
        ) from None


def check_executor(config: Config) -> None:
    """The input problems of `run.executor`, as one-line UserErrors, for the faces to
    raise before a run directory exists: Ray not installed, an address nothing answers at."""
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
