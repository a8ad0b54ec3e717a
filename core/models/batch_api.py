"""The two providers' batch APIs behind one small interface: submit requests, read a
batch's progress, read its answers.

OpenAI's Batch API: the requests go up as a JSONL file (`POST /v1/files`, purpose
`batch`; one line `{custom_id, method, url, body}` each), `POST /v1/batches` starts the
batch over that file, `GET /v1/batches/{id}` reports its status and request counts, and
once it ends its `output_file_id` (and `error_file_id`) hold one line per request:
`{custom_id, response: {status_code, body}, error}`. Anthropic's Message Batches take the
requests inline (`POST /v1/messages/batches`, `requests: [{custom_id, params}]`), report
`processing_status` (`in_progress`, `canceling`, `ended`) with request counts, and stream
one result line per request once ended: `{custom_id, result: {type: succeeded, message}
| {type: errored, error} | {type: canceled} | {type: expired}}`.

Both providers bill batch calls at half the interactive price (the ledger's
BATCH_PRICE_FACTOR says where that comes from). The body of each request is exactly what
the interactive call would send (the backend's own `sdk_kwargs`), so an answer read from
a batch is the answer to the same question.
"""

from __future__ import annotations

import importlib
import io
import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from core.models.anthropic_backend import AnthropicBackend, message_completion
from core.models.openai_backend import OpenAIBackend, _to_completion
from core.models.sdk_errors import call_sdk
from core.models.types import Completion, ModelError, Request

# The completion window OpenAI accepts (and Anthropic's fixed one): a batch not done by
# then expires, its unfinished requests unanswered.
COMPLETION_WINDOW_S = 24 * 3600
_SDK_TIMEOUT_S = 120.0
CHAT_ENDPOINT = "/v1/chat/completions"


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands. `ended`: its answers can be read (completed, expired,
    cancelled or failed as a whole); `status` is the provider's own word for it."""

    batch_id: str
    status: str
    ended: bool
    total: int
    answered: int  # finished, well or badly
    failed: int
    expires_at: float | None = None  # epoch seconds


@dataclass(frozen=True)
class BatchAnswer:
    """One request's outcome inside a batch: its completion, or why it has none."""

    completion: Completion | None
    error: str = ""


class BatchProvider(Protocol):
    provider: str

    async def submit(self, requests: dict[str, Request]) -> str: ...

    async def progress(self, batch_id: str) -> BatchProgress: ...

    async def answers(self, batch_id: str) -> dict[str, BatchAnswer]: ...


def _epoch(value: Any) -> float | None:
    """A provider timestamp (epoch seconds, or an RFC 3339 string) as epoch seconds."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _SdkBatches:
    """What both providers' batch clients share: the backend's own SDK client (its key,
    base_url and proxy rules) and its translation of SDK failures into our errors."""

    provider = ""
    sdk_name = ""  # the SDK module
    sdk_error = ""  # its base error class

    def __init__(self, backend: Any):
        self.backend = backend

    async def _call(self, thunk: Any, what: str) -> Any:
        sdk = importlib.import_module(self.sdk_name)  # lazy: the CLI must start fast
        return await call_sdk(
            sdk,
            getattr(sdk, self.sdk_error),
            thunk,
            timeout_s=_SDK_TIMEOUT_S,
            credential=self.backend.credential,
            model=what,
            where=self.backend._where(),
        )


class OpenAIBatches(_SdkBatches):
    """The Batch API of api.openai.com (or a server that speaks it at the role's base_url)."""

    provider = sdk_name = "openai"
    sdk_error = "OpenAIError"

    async def submit(self, requests: dict[str, Request]) -> str:
        lines = [
            json.dumps(
                {
                    "custom_id": custom_id,
                    "method": "POST",
                    "url": CHAT_ENDPOINT,
                    "body": self.backend.sdk_kwargs(request),
                },
                separators=(",", ":"),
            )
            for custom_id, request in requests.items()
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        sdk = self.backend._sdk.get()
        upload = await self._call(
            lambda: sdk.files.create(
                file=("skillopt-batch.jsonl", io.BytesIO(data)), purpose="batch"
            ),
            "batch input file",
        )
        batch = await self._call(
            lambda: sdk.batches.create(
                input_file_id=upload.id,
                endpoint=CHAT_ENDPOINT,
                completion_window="24h",
                metadata={"client": "skillopt"},
            ),
            "batch",
        )
        return str(batch.id)

    async def progress(self, batch_id: str) -> BatchProgress:
        sdk = self.backend._sdk.get()
        batch = await self._call(lambda: sdk.batches.retrieve(batch_id), "batch")
        counts = batch.request_counts
        failed = int(getattr(counts, "failed", 0) or 0)
        return BatchProgress(
            batch_id=batch_id,
            status=str(batch.status),
            ended=batch.status in ("completed", "expired", "cancelled", "failed"),
            total=int(getattr(counts, "total", 0) or 0),
            answered=int(getattr(counts, "completed", 0) or 0) + failed,
            failed=failed,
            expires_at=_epoch(batch.expires_at),
        )

    async def answers(self, batch_id: str) -> dict[str, BatchAnswer]:
        from openai.types.chat import ChatCompletion

        sdk = self.backend._sdk.get()
        batch = await self._call(lambda: sdk.batches.retrieve(batch_id), "batch")
        out: dict[str, BatchAnswer] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self._call(lambda f=file_id: sdk.files.content(f), "batch output")
            for line in content.text.splitlines():
                entry = json.loads(line) if line.strip() else None
                if isinstance(entry, dict) and entry.get("custom_id"):
                    out[str(entry["custom_id"])] = _openai_answer(entry, ChatCompletion)
        return out


def _openai_answer(entry: dict[str, Any], model_type: Any) -> BatchAnswer:
    response = entry.get("response") or {}
    error = entry.get("error")
    status = response.get("status_code")
    if error or status != 200:
        body = response.get("body") or {}
        detail = error or (body.get("error") if isinstance(body, dict) else None) or {}
        message = detail.get("message", "") if isinstance(detail, dict) else str(detail)
        return BatchAnswer(None, f"status {status}: {message}".strip(": "))
    try:
        reply = model_type.model_validate(response["body"])
        request = Request(backend="openai", model=str(reply.model), messages=[])
        return BatchAnswer(_to_completion(reply, request, 0.0))
    except (ValueError, TypeError, KeyError, ModelError) as exc:
        return BatchAnswer(None, f"unreadable answer: {type(exc).__name__}")


class AnthropicBatches(_SdkBatches):
    """Anthropic's Message Batches (or a server that speaks them at the role's base_url)."""

    provider = sdk_name = "anthropic"
    sdk_error = "AnthropicError"

    async def submit(self, requests: dict[str, Request]) -> str:
        sdk = self.backend._sdk.get()
        body = [
            {"custom_id": custom_id, "params": self.backend.sdk_kwargs(request)}
            for custom_id, request in requests.items()
        ]
        batch = await self._call(lambda: sdk.messages.batches.create(requests=body), "batch")
        return str(batch.id)

    async def progress(self, batch_id: str) -> BatchProgress:
        sdk = self.backend._sdk.get()
        batch = await self._call(lambda: sdk.messages.batches.retrieve(batch_id), "batch")
        c = batch.request_counts
        failed = int(c.errored) + int(c.canceled) + int(c.expired)
        return BatchProgress(
            batch_id=batch_id,
            status=str(batch.processing_status),
            ended=batch.processing_status == "ended",
            total=int(c.processing) + int(c.succeeded) + failed,
            answered=int(c.succeeded) + failed,
            failed=failed,
            expires_at=_epoch(batch.expires_at),
        )

    async def answers(self, batch_id: str) -> dict[str, BatchAnswer]:
        sdk = self.backend._sdk.get()
        results = await self._call(lambda: sdk.messages.batches.results(batch_id), "batch")
        out: dict[str, BatchAnswer] = {}
        async for entry in results:
            result = entry.result
            if result.type != "succeeded":
                error = getattr(result, "error", None)
                inner = getattr(error, "error", None)
                message = getattr(inner, "message", "") if inner is not None else ""
                out[entry.custom_id] = BatchAnswer(None, f"{result.type}: {message}".strip(": "))
                continue
            request = Request(backend="anthropic", model=str(result.message.model), messages=[])
            try:
                out[entry.custom_id] = BatchAnswer(message_completion(result.message, request, 0))
            except ModelError as exc:
                out[entry.custom_id] = BatchAnswer(None, f"unreadable answer: {exc}")
        return out


def batch_provider(backend: object) -> BatchProvider | None:
    """The batch API of a role's backend; None for a backend without one (the embedded
    model, Azure, agents, handoff, test doubles): its calls stay interactive."""
    if isinstance(backend, AnthropicBackend):
        return AnthropicBatches(backend)
    if isinstance(backend, OpenAIBackend) and backend.name == "openai":
        return OpenAIBatches(backend)
    return None


def ready_estimate(progress: BatchProgress, submitted_at: float, now: float | None = None) -> str:
    """When the batch should be done, in words: from its pace so far when it has answered
    some requests, else the provider's deadline (the 24-hour completion window)."""
    now = time.time() if now is None else now
    elapsed = max(now - submitted_at, 0.0)
    if progress.answered and progress.total > progress.answered:
        left = elapsed / progress.answered * (progress.total - progress.answered)
        return f"about {_duration(left)} more at its pace so far"
    deadline = progress.expires_at or submitted_at + COMPLETION_WINDOW_S
    return f"within {_duration(max(deadline - now, 0.0))} (the provider's 24-hour window)"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
