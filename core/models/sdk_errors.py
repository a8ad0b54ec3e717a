"""One translation of SDK failures into our error types.

The official OpenAI and Anthropic SDKs share an exception layout (APIStatusError,
APITimeoutError, APIConnectionError, APIResponseValidationError under one base class), so
both backends await their call through `call_sdk` and the retry policy sees the same
TransientError / AuthError / BadRequestError whichever server it talks to.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, TypeVar

from core.models.retry import error_for_status, parse_retry_after
from core.models.transport_errors import connection_error, unexpected_error
from core.models.types import AbandonedCall, ModelError, TransientError
from core.secrets import redact

T = TypeVar("T")


async def call_sdk(
    sdk: ModuleType,
    base_error: type[Exception],
    call: Callable[[], Awaitable[T]],
    *,
    timeout_s: float,
    credential: str,
    model: str,
    where: dict[str, str],
) -> T:
    """Await `call()`. It is a thunk, not a coroutine, because building the SDK client can
    itself fail on a bad base_url (e.g. a non-numeric port) and must be translated too."""
    try:
        return await call()
    except sdk.APIStatusError as exc:
        raise error_for_status(
            exc.status_code,
            _detail(exc),
            retry_after_s=parse_retry_after(exc.response.headers),
            credential=credential,
            model=model,
        ) from None
    except sdk.APITimeoutError:
        raise AbandonedCall(f"no answer within {timeout_s:g}s") from None
    except sdk.APIConnectionError as exc:
        raise connection_error(exc.__cause__ or exc.__context__ or exc, **where) from None
    except (json.JSONDecodeError, UnicodeDecodeError, sdk.APIResponseValidationError) as exc:
        # Only a body that does not parse: any other ValueError is not the server's fault.
        raise TransientError(f"malformed response body: {type(exc).__name__}") from None
    except base_error:
        raise  # the SDK's other errors stay as they are (with their traceback)
    except ModelError:
        raise  # already ours (a stalled or unfinished stream)
    except Exception as exc:
        # Leaked from the HTTP stack (anyio's ExceptionGroup for a port out of range,
        # httpx's InvalidURL): a bad base_url, never a reason to retry or a traceback.
        mapped = unexpected_error(exc, **where)
        if mapped is None:
            raise
        raise mapped from exc


def _detail(exc: Any) -> str:
    """The server's error message, without echoing request contents."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    # Whole, never cut here: a key split by a cut would survive redaction. The one place
    # that shortens an error detail (retry.error_for_status) masks first, then cuts.
    try:
        return redact(json.dumps(body)) if body is not None else redact(str(exc))
    except (TypeError, ValueError):
        return redact(str(exc))
