"""The one retry policy for every backend (the SDKs' own retries are switched off).

Why one policy: retries hidden inside an SDK multiply with ours and make `Retry-After`,
budgets and timeouts impossible to reason about. Transient failures (429, 5xx, timeouts,
broken connections, malformed bodies) are retried with exponential backoff and jitter,
waiting at least what the server asked for in `Retry-After`; auth errors and bad requests
are raised at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from core.models.types import ModelError, RetriesExhausted, TransientError
from core.secrets import redact

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    # A server asking for longer than this is treated as "not soon": we still wait this long.
    max_retry_after_s: float = 120.0
    sleep: Sleep = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay_for(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        backoff = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        jittered = backoff * self.rng.uniform(0.5, 1.0)
        if retry_after_s is not None and retry_after_s > 0:
            # Honour the server, plus a little jitter so parallel callers do not stampede.
            return min(self.max_retry_after_s, retry_after_s) + self.rng.uniform(0, 0.1) * backoff
        return jittered

    async def run(self, call: Callable[[], Awaitable[T]], *, what: str = "") -> T:
        """`call()` until it succeeds, raises a non-transient error, or retries run out;
        then a RetriesExhausted naming `what` (e.g. "openai:gpt-4.1-mini") and the last cause."""
        attempt = 0
        while True:
            try:
                return await call()
            except TransientError as exc:
                if attempt >= self.max_retries:
                    tries = attempt + 1
                    prefix = f"{what}: " if what else ""
                    plural = "s" if tries > 1 else ""
                    raise RetriesExhausted(
                        redact(f"{prefix}gave up after {tries} attempt{plural}: {exc}")
                    ) from exc
                await self.sleep(self.delay_for(attempt, exc.retry_after_s))
                attempt += 1


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# Statuses worth retrying: rate limits, timeouts, server trouble, Anthropic's "overloaded".
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def error_for_status(
    status: int, detail: str, *, retry_after_s: float | None, credential: str, model: str
) -> ModelError:
    """The typed error for an HTTP status. `credential` says where the key came from
    (e.g. "OPENAI_API_KEY"), `model` the model name, so the message names what to fix."""
    from core.models.types import AuthError, BadRequestError

    detail = redact(detail.strip())[:300]
    if status in RETRYABLE_STATUSES:
        return TransientError(f"HTTP {status}: {detail}", retry_after_s=retry_after_s)
    if status in (401, 403):
        verdict = "rejected" if status == 401 else "not allowed to use this model"
        return AuthError(
            f"HTTP {status}: the key in {credential} was {verdict} ({detail}); set a valid key"
        )
    if status == 404:
        return BadRequestError(
            f"HTTP 404: model {model!r} or endpoint not found ({detail}); check the model name and base_url"
        )
    if 500 <= status < 600:
        return TransientError(f"HTTP {status}: {detail}", retry_after_s=retry_after_s)
    return BadRequestError(f"HTTP {status}: the server refused the request ({detail})")
