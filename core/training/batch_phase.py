"""The phases of a run whose calls can wait, run through the provider's batch API
(`run.batch`): the baseline val, the initial skill's test and the final tests.

Why only these: their inputs are fixed when they start and nothing waits on their answers
but the end of the run (or, for the baseline, the first gate), so a batch that takes an
hour costs nothing but that hour. The rollouts of the step being decided and the
optimizer's calls stay interactive: the loop waits on each of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from core.config import Config, ConfigError
from core.models.batch_api import BatchProvider, batch_provider
from core.models.batch_queue import BATCH_PHASE, BatchPending, BatchQueue

T = TypeVar("T")


def batch_provider_for(config: Config, client) -> BatchProvider | None:
    """The batch API the run's waiting calls go through; None when they stay interactive
    (run.batch off, a target without a batch API or not the provider's own endpoint under
    auto). ConfigError, in one line, for run.batch on with a target that cannot batch (the
    CLI asks before the run directory exists)."""
    mode = config.run.batch
    if mode == "off":
        return None
    rt = client.runtime("target")
    provider = batch_provider(rt.backend)
    own_api = getattr(rt.backend, "base_url", "") is None  # the provider's own endpoint
    usable = provider is not None and config.run.executor == "local"
    if mode == "on" and not usable:
        raise ConfigError(
            f"run.batch is on, but models.target ({client.describe('target')}) "
            + (
                "runs on the Ray executor, which batches nothing"
                if provider is not None
                else "has no batch API (OpenAI and Anthropic backends have one)"
            )
            + ": set run.batch to auto or off"
        )
    return provider if usable and (mode == "on" or own_api) else None


def open_batch_queue(config: Config, client, folder: Path) -> BatchQueue | None:
    """The run's batch queue, attached to `client` (None: every call interactive)."""
    provider = batch_provider_for(config, client)
    if provider is None:
        return None
    queue = BatchQueue(folder, provider, client.ledger, client.runtime("target").model)
    client.batches = queue
    return queue


async def batched(
    queue: BatchQueue | None,
    phase: str,
    make: Callable[[], Awaitable[T]],
    *,
    wait: bool,
    poll_s: float,
    say: Callable[[str], None],
) -> T:
    """`make()` with its target calls answered through batches: run it, and while calls
    are left waiting for a batch, settle the batch (submit, then wait or stop with
    BatchWaiting) and run it again. Without a queue, just `make()`."""
    if queue is None:
        return await make()
    token = BATCH_PHASE.set(phase)
    try:
        while True:
            try:
                return await make()
            except BatchPending:
                await queue.settle(wait=wait, poll_s=poll_s, say=say)
    finally:
        BATCH_PHASE.reset(token)
