"""One coding-agent attempt on a Ray worker (`run.executor: ray` with an agent target).

The driver keeps what the run owns: the budget (the attempt is reserved against the call
cap before it is sent), the retry policy, the concurrency slot and the ledger, all in
`ModelClient.run_agent`, which hands each attempt to `run_on_worker`. The worker does the
work: the workspace is made there from the task's files (sent with the task as a tar: the
driver's staging folder is not on the worker's disk), the skill is placed in it, the agent
CLI runs there and so does the task's check. The agent calls its model itself, from the
worker: the role's key goes with the task (a task argument, never the job's runtime_env,
which the dashboard shows) and nothing else of the driver's environment does: the CLI
gets the worker's own PATH and logins.

The binary: the driver's absolute path if the worker has it (one machine, or the same
install on every node), else the CLI's name on the worker's PATH, else one line saying so.
"""

from __future__ import annotations

import asyncio
import copy
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import ray

from core.models.agents.process import AgentMissing
from core.models.agents.workspace import pristine_tree
from core.models.types import AgentOutcome, AgentTask
from core.training.ray_files import pack, unpack

# A worker lost mid-run: Ray runs the attempt again elsewhere (the agent's own calls are
# not cached, so they are paid again; the driver's reservation holds for both).
AGENT_RETRIES = 3


def binary_here(binary: Path) -> Path:
    """The CLI on this machine: the driver's path, else its name on PATH."""
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    found = shutil.which(binary.name)
    if found:
        return Path(found)
    node = ray.get_runtime_context().get_node_id()[:8]
    raise AgentMissing(
        f"a Ray worker (node {node}) has no {binary.name}: not at {binary} and not on its "
        "PATH; install the agent CLI at the same path on every node, or on the workers' PATH"
    )


@ray.remote(num_cpus=1, max_retries=AGENT_RETRIES, retry_exceptions=False)
def agent_task(
    backend: Any, task: AgentTask, files: bytes, skill_text: str, timeout_s: float
) -> tuple[str, Any]:
    """One attempt on a worker: ("ok", AgentOutcome) or ("raise", the exception)."""
    try:
        settings = backend.settings
        backend.settings = replace(
            settings, binary=binary_here(settings.binary), environ=dict(os.environ)
        )
        with tempfile.TemporaryDirectory(prefix="skillopt-agent-files-") as tmp:
            unpack(files, Path(tmp))
            here = replace(task, files=Path(tmp), commit=None)
            return "ok", asyncio.run(backend.run_agent(here, skill_text, timeout_s=timeout_s))
    except Exception as exc:  # noqa: BLE001 - the driver raises it where the run expects it
        return "raise", exc


async def run_on_worker(
    backend: Any, task: AgentTask, skill_text: str, timeout_s: float
) -> AgentOutcome:
    """An `AgentRunner` (core/models/client.py): the attempt as a Ray task, its files sent
    with it; cancelled (a timeout, the early gate), the task is cancelled too."""
    shipped = copy.copy(backend)
    shipped.settings = replace(backend.settings, environ={})  # the driver's env stays here
    with pristine_tree(task.files, task.commit) as original:
        files = await asyncio.to_thread(pack, original.root)
    ref = agent_task.remote(shipped, task, files, skill_text, timeout_s)
    try:
        kind, value = await ref
    except asyncio.CancelledError:
        ray.cancel(ref)
        raise
    if kind == "raise":
        raise value
    return replace(value, left_out=original.left_out)
