"""One reading of an agent CLI's failure message for the three agents that report only a
message and perhaps a status (pi, opencode, copilot): the same typed errors as the API
backends, so retries, usage limits and bad settings behave alike for every agent."""

from __future__ import annotations

import re

from core.models.retry import RETRYABLE_STATUSES
from core.models.types import (
    AuthError,
    BadRequestError,
    ModelError,
    TransientError,
    UsageLimitReached,
)

_LIMIT = re.compile(r"usage limit|hit your .*limit|quota", re.I)
_AUTH = re.compile(r"\b(401|403)\b|unauthori[sz]ed|invalid (api )?key|authentication", re.I)
_BAD_REQUEST = re.compile(r"\b(400|404)\b|not found|invalid request|unknown model", re.I)


def agent_failure(agent: str, text: str, status: int | None, credential: str) -> ModelError:
    """The error to raise for one failed agent run, from its message and HTTP status."""
    text = " ".join(str(text).split())[:300] or "no message"
    if _LIMIT.search(text) and status in (None, 429):
        return UsageLimitReached(
            f"{agent} usage limit reached ({text}); the run is resumable: rerun the same "
            "command once the limit has reset"
        )
    if status in (401, 403) or (status is None and _AUTH.search(text)):
        return AuthError(f"{agent} could not authenticate ({text}); check the key in {credential}")
    if status in RETRYABLE_STATUSES or (isinstance(status, int) and status >= 500):
        return TransientError(f"{agent}: HTTP {status}: {text}")
    if status in (400, 404) or (status is None and _BAD_REQUEST.search(text)):
        return BadRequestError(f"{agent}: {text}; check the model name and base_url")
    return TransientError(f"{agent} failed: {text}")


def split_model(model: str, default_provider: str = "anthropic") -> tuple[str, str]:
    """("provider", "model id") from "provider/id" or a bare id (the default provider)."""
    provider, sep, name = model.partition("/")
    return (provider, name) if sep else (default_provider, model)
