"""One reading of a failed agent run, for every CLI: its message and perhaps an HTTP status
become the same typed errors as the API backends', so retries, usage limits and bad
settings behave alike for every agent. A CLI differs only in its words for a spent limit
and a refused login (`FailureWords`), and in how one logs in to it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models.retry import RETRYABLE_STATUSES
from core.models.types import (
    AuthError,
    BadRequestError,
    ModelError,
    TransientError,
    UsageLimitReached,
)

_BAD_REQUEST = re.compile(r"\b(400|404)\b|not found|invalid request|unknown model", re.I)
# The key variable of the providers that pi and OpenCode reach by "provider/id".
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


@dataclass(frozen=True)
class FailureWords:
    """What one CLI says when a limit is spent or a login refused."""

    limit: re.Pattern[str] = re.compile(r"usage limit|hit your .*limit|quota", re.I)
    auth: re.Pattern[str] = re.compile(
        r"\b(401|403)\b|unauthori[sz]ed|invalid (api )?key|authentication", re.I
    )


def agent_failure(
    agent: str,
    text: str,
    status: int | None,
    credential: str,
    words: FailureWords = FailureWords(),
    *,
    login: str = "",
    limit_reported: bool = False,
) -> ModelError:
    """The error to raise for one failed agent run, from its message and HTTP status
    (`login`: how to log in to the CLI, e.g. "`codex login`"; `limit_reported`: the CLI
    said outright that a usage limit was reached)."""
    text = " ".join(str(text).split())[:300] or "no message"
    status = status if isinstance(status, int) else None
    if limit_reported or (words.limit.search(text) and status in (None, 429)):
        return UsageLimitReached(
            f"{agent} usage limit reached ({text}); the run is resumable: rerun the same "
            "command once the limit has reset"
        )
    if status in (401, 403) or (status is None and words.auth.search(text)):
        how = f", or log in with {login}" if login else ""
        return AuthError(
            f"{agent} could not authenticate ({text}); check the key in {credential}{how}"
        )
    if status in RETRYABLE_STATUSES or (status is not None and status >= 500):
        return TransientError(f"{agent}: HTTP {status}: {text}")
    if status in (400, 404) or (status is None and _BAD_REQUEST.search(text)):
        where = f"{agent}: HTTP {status}" if status else agent
        return BadRequestError(f"{where}: {text}; check the model name and base_url")
    # Malformed or truncated answers, and anything unrecognised: worth another try.
    return TransientError(f"{agent} failed: {text}")


def split_model(model: str, default_provider: str = "anthropic") -> tuple[str, str]:
    """("provider", "model id") from "provider/id" or a bare id (the default provider)."""
    provider, sep, name = model.partition("/")
    return (provider, name) if sep else (default_provider, model)
