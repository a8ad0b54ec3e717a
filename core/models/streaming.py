"""Streamed replies: when a call streams, and how a stream becomes one `Completion`.

Why stream: an unstreamed call has one deadline for the whole reply, so a long reply from
a slow or reasoning model is cut by `timeout_s` however steadily it is being written. For
a streamed call `timeout_s` is an idle timeout instead: the longest wait for the stream to
start and between two of its events. A reply of any length survives while it keeps
coming; a stream that stalls still fails within `timeout_s` of its last event, as a
retryable `AbandonedCall`, and so does one that breaks off or reports an error midway
(the client counts each such attempt at its estimated usage: the provider may bill it).

A stream's reply is used only once the stream said it was finished (OpenAI: a
`finish_reason`; Anthropic: `message_stop`). Until then nothing is returned, so nothing
partial is ever cached, recorded as an answer or applied; the retry policy asks again.
The finished reply is the same `Completion` an unstreamed call returns (text, finish
reason, usage), so the ledger, the truncation check and the response cache cannot tell
them apart: whether a call streamed is not part of its cache key.

`models.<role>.stream` (config): `never`; `always`; `auto` (the default) streams a call
allowed STREAM_FROM_TOKENS output tokens or more, i.e. every target, optimizer and miner
call at their defaults and no judge call unless its `max_tokens` is raised. Only the
HTTP API backends stream (openai, azure and OpenAI-compatible servers, anthropic).

Both backends take the SDKs' raw event streams (`create(stream=True)`), not their
accumulating helpers (`messages.stream()`, `chat.completions.stream()`): every event has
to pass through our idle timer, the completeness rule above is ours, and the OpenAI
helper's own handling of a `length` finish (an exception for structured outputs) would
bypass the one truncation check every caller relies on.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, Protocol, TypeVar

from core.models.reply_shape import token_count
from core.models.sdk_errors import call_sdk
from core.models.transport_errors import broke_off
from core.models.types import (
    AbandonedCall,
    Completion,
    ModelError,
    Request,
    TransientError,
    Usage,
)
from core.secrets import redact

T = TypeVar("T")
StreamMode = Literal["auto", "always", "never"]
# Backend kinds whose calls can stream.
STREAMING_KINDS = frozenset({"openai", "azure", "anthropic"})
# `auto` streams from this completion budget up: 2,048 tokens at a slow server's ~40 tokens
# a second take ~50 s, about the default 60 s whole-call timeout.
STREAM_FROM_TOKENS = 2048
# The SDK's own HTTP timeout trails ours, so the error names what happened (a stall).
SDK_TIMEOUT_SLACK_S = 1.0
# Anthropic stop reasons in the OpenAI spelling every caller reads ("length" = truncated).
ANTHROPIC_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def wants_stream(mode: str, max_tokens: Any) -> bool:
    """Whether a call with this completion budget streams under `mode`."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    return isinstance(max_tokens, int) and max_tokens >= STREAM_FROM_TOKENS


class Fold(Protocol):
    """Folds one protocol's stream events into a reply."""

    def add(self, event: Any) -> None: ...

    def completion(self, request: Request, latency_s: float) -> Completion: ...


async def streamed_completion(
    sdk: ModuleType,
    base_error: type[Exception],
    create: Callable[[float], Awaitable[Any]],
    fold: Fold,
    request: Request,
    idle_s: float,
    *,
    credential: str,
    where: dict[str, str],
) -> Completion:
    """One streamed call: `create(sdk_timeout)` sends the request and returns the SDK's
    stream, whose events `fold` assembles; failures are translated as for an unstreamed
    call (`call_sdk`), so a 429 or 5xx before the stream starts is retried as ever."""
    sdk_timeout = idle_s + SDK_TIMEOUT_SLACK_S
    started = time.monotonic()

    async def streamed() -> Completion:
        try:
            stream = await open_stream(lambda: create(sdk_timeout), idle_s)
            await read_stream(sdk, stream, idle_s, fold.add)
        except Exception as exc:
            if not isinstance(exc, ModelError) and broke_off(exc):
                raise AbandonedCall(
                    f"the stream broke off mid-reply ({type(exc).__name__}); the partial "
                    "reply was discarded"
                ) from None
            raise
        return fold.completion(request, time.monotonic() - started)

    return await call_sdk(
        sdk,
        base_error,
        streamed,
        timeout_s=sdk_timeout,
        credential=credential,
        model=request.model,
        where=where,
    )


async def open_stream(call: Callable[[], Awaitable[T]], idle_s: float) -> T:
    """`call()` (the request; it returns once the response headers are in), within `idle_s`."""
    try:
        async with asyncio.timeout(idle_s):
            return await call()
    except TimeoutError:
        raise AbandonedCall(f"no answer within {idle_s:g}s (the stream did not start)") from None


async def events_within(stream: AsyncIterator[T], idle_s: float) -> AsyncIterator[T]:
    """The stream's events, each within `idle_s` of the one before (else an AbandonedCall)."""
    iterator = aiter(stream)
    while True:
        try:
            async with asyncio.timeout(idle_s):
                event = await anext(iterator)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise AbandonedCall(
                f"the stream stalled: no data for {idle_s:g}s (streamed calls' timeout_s is "
                "the longest silence allowed); the partial reply was discarded"
            ) from None
        yield event


async def read_stream(
    sdk: ModuleType, stream: Any, idle_s: float, add: Callable[[Any], None]
) -> None:
    """Feed every event of an SDK stream to `add`, then close the stream (also on failure:
    the connection is never left half read). A connection that breaks off, or an error the
    server sends inside the stream, is an AbandonedCall: counted, then retried (both SDKs
    raise the error event as an APIError, Anthropic's with the stream's status 200, which
    must not be read as an HTTP status)."""
    async with stream, contextlib.aclosing(events_within(stream, idle_s)) as events:
        try:
            async for event in events:
                add(event)
        except sdk.APIConnectionError:
            raise  # streamed_completion tells a broken-off reply from a refused connection
        except sdk.APIError as exc:
            raise mid_stream_error(getattr(exc, "body", None), str(exc)) from None


def mid_stream_error(body: Any, fallback: str) -> AbandonedCall:
    """For an error event: `{"error": {"type", "message"}}` or the inner object itself."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and (inner.get("message") or inner.get("type")):
        kind, message = inner.get("type"), inner.get("message")
        detail = f"{kind}: {message}" if kind and message else str(kind or message)
    else:
        detail = fallback
    return AbandonedCall(
        redact(f"the server reported an error mid-stream ({detail[:300]}); the partial reply "
               "was discarded")
    )  # fmt: skip


def usage_from_text(request: Request, text: str) -> Usage:
    """What a stream that reported no usage is counted at (a server that ignores
    `stream_options.include_usage`): ~4 characters a token, prompt and reply. Never zero,
    so a budget cap still sees the call."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    return Usage(input_tokens=chars // 4 + 1, output_tokens=math.ceil(len(text) / 4))


@dataclass
class OpenAIChunks:
    """Chat-completion chunks folded into one reply: deltas of choice 0, its finish
    reason, and the usage chunk (`choices: []`) that `include_usage` adds last."""

    model: str
    parts: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None

    def add(self, chunk: Any) -> None:
        self.model = str(getattr(chunk, "model", None) or self.model)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = Usage(
                input_tokens=token_count(getattr(usage, "prompt_tokens", 0), "prompt_tokens"),
                output_tokens=token_count(
                    getattr(usage, "completion_tokens", 0), "completion_tokens"
                ),
            )
        for choice in getattr(chunk, "choices", None) or []:
            if (getattr(choice, "index", 0) or 0) != 0:
                continue
            text = getattr(getattr(choice, "delta", None), "content", None)
            if text is not None and not isinstance(text, str):
                raise TransientError("malformed stream: a delta's content is not text")
            if text:
                self.parts.append(text)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = str(choice.finish_reason)

    def completion(self, request: Request, latency_s: float) -> Completion:
        if self.finish_reason is None:
            raise _unfinished("no finish_reason")
        text = "".join(self.parts)
        return Completion(
            text=text,
            usage=self.usage or usage_from_text(request, text),
            finish_reason=self.finish_reason,
            latency_s=latency_s,
            model=self.model,
        )


@dataclass
class AnthropicEvents:
    """Messages stream events folded into one reply: text deltas (thinking and tool
    blocks are not the answer, as unstreamed), the stop reason and the usage of
    message_start and message_delta (output tokens there are the running total)."""

    model: str
    parts: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    stopped: bool = False

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            message = getattr(event, "message", None)
            self.model = str(getattr(message, "model", None) or self.model)
            self._usage(getattr(message, "usage", None))
        elif kind == "content_block_delta":
            delta = getattr(event, "delta", None)
            if getattr(delta, "type", None) == "text_delta":
                self.parts.append(str(getattr(delta, "text", "") or ""))
        elif kind == "message_delta":
            reason = getattr(getattr(event, "delta", None), "stop_reason", None)
            self.stop_reason = str(reason) if reason else self.stop_reason
            self._usage(getattr(event, "usage", None))
        elif kind == "message_stop":
            self.stopped = True

    def _usage(self, usage: Any) -> None:
        seen_in = token_count(getattr(usage, "input_tokens", 0), "input_tokens")
        seen_out = token_count(getattr(usage, "output_tokens", 0), "output_tokens")
        self.input_tokens = max(self.input_tokens, seen_in)
        self.output_tokens = max(self.output_tokens, seen_out)

    def completion(self, request: Request, latency_s: float) -> Completion:
        if not self.stopped:
            raise _unfinished("no message_stop")
        reason = self.stop_reason or "end_turn"
        return Completion(
            text="".join(self.parts),
            usage=Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens),
            finish_reason=ANTHROPIC_FINISH.get(reason, reason),
            latency_s=latency_s,
            model=self.model,
        )


def _unfinished(why: str) -> AbandonedCall:
    return AbandonedCall(
        f"the stream ended before the reply was finished ({why}); the partial reply was discarded"
    )


__all__ = [
    "ANTHROPIC_FINISH",
    "STREAMING_KINDS",
    "STREAM_FROM_TOKENS",
    "AnthropicEvents",
    "OpenAIChunks",
    "StreamMode",
    "streamed_completion",
    "usage_from_text",
    "wants_stream",
]
