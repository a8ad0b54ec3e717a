"""OpenAI chat completions through the official SDK: OpenAI itself, Azure OpenAI, and any
OpenAI-compatible server (vLLM, Ollama, llama.cpp — including our embedded one).

The SDK's own retries are off (`max_retries=0`): `RetryPolicy` in the client is the only
retry loop. This module only translates a `Request` into one HTTP call and the answer (or
the failure) into a `Completion` or a typed error. `send_streamed` is the same call as a
stream (`stream: true`, usage requested with `stream_options.include_usage`), its
`timeout_s` an idle timeout (core/models/streaming.py says why and when).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from core.models.reply_shape import malformed, token_count
from core.models.sdk_errors import call_sdk
from core.models.streaming import OpenAIChunks, streamed_completion
from core.models.types import BadRequestError, Completion, Request, Usage

SDK = TypeVar("SDK")
OFFICIAL_BASE_URL = "https://api.openai.com/v1"

# Settings a caller may pass; anything else is a typo and is refused before any call.
OPENAI_SETTINGS = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "seed",
        "stop",
        "response_format",
        "logprobs",
        "top_logprobs",
        "presence_penalty",
        "frequency_penalty",
        "reasoning_effort",
    }
)


# Reasoning models (o-series, GPT-5) answer 400 to `max_tokens`; served anywhere under
# these names they get `max_completion_tokens`, which every OpenAI model accepts.
_REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)


def takes_no_temperature(model: str) -> bool:
    """Reasoning models (o-series, GPT-5) accept only their default temperature and answer
    400 to any other, so a configured one (the optimizer's 0.0) is not sent to them."""
    return bool(_REASONING_MODEL.match(model))


def takes_max_completion_tokens(backend: str, base_url: str | None, model: str) -> bool:
    """Whether the completion budget is sent as `max_completion_tokens`: api.openai.com
    and Azure OpenAI (whose o-series and GPT-5 deployments refuse `max_tokens`, and whose
    other models take both), and a reasoning model on any OpenAI-compatible server."""
    if backend == "azure" or (backend == "openai" and base_url is None):
        return True
    return backend == "openai" and bool(_REASONING_MODEL.match(model))


class PerLoop(Generic[SDK]):
    """One SDK client per running event loop.

    Why: an async HTTP client belongs to the loop it first ran on. A model client built once
    and used from several `asyncio.run` calls (CLI commands, tests) must not reuse a pool
    bound to a closed loop.
    """

    def __init__(self, make: Callable[[], SDK]):
        self._make = make
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: SDK | None = None

    def get(self) -> SDK:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._make()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.close()  # type: ignore[attr-defined]


class OpenAIBackend:
    """`name` is "openai", "azure" or "local"; `credential` names the variable the key
    came from and `base_url_setting` the config key the URL came from, for error messages."""

    def __init__(
        self,
        *,
        name: str = "openai",
        api_key: str | None,
        credential: str = "OPENAI_API_KEY",
        base_url: str | None = None,
        azure_api_version: str | None = None,
        base_url_setting: str = "base_url",
    ):
        self.name = name
        self.credential = credential
        self.base_url = base_url
        self.base_url_setting = base_url_setting
        self._api_key = api_key
        self._azure_api_version = azure_api_version
        self._sdk: PerLoop[Any] = PerLoop(self._make_sdk)

    def _make_sdk(self) -> Any:
        import openai  # lazy: the CLI must start fast

        if self.name == "azure":
            return openai.AsyncAzureOpenAI(
                api_key=self._api_key,
                azure_endpoint=self.base_url,
                api_version=self._azure_api_version,
                max_retries=0,
            )
        extra: dict[str, Any] = {}
        if self.name == "local":
            # The embedded server is on loopback: a user's HTTP(S)_PROXY must not catch it.
            extra["http_client"] = openai.DefaultAsyncHttpxClient(trust_env=False)
        return openai.AsyncOpenAI(
            # OpenAI-compatible servers often need no key; the SDK insists on one.
            api_key=self._api_key or "not-needed",
            # Always explicit: given None, the SDK would follow OPENAI_BASE_URL and send the
            # official key to whatever server that names. Only the config moves an endpoint.
            base_url=self.base_url or OFFICIAL_BASE_URL,
            max_retries=0,
            **extra,
        )

    def sdk_kwargs(self, request: Request) -> dict[str, Any]:
        unknown = set(request.settings) - OPENAI_SETTINGS
        if unknown:
            raise BadRequestError(f"unknown model setting(s): {', '.join(sorted(unknown))}")
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages}
        completion_key = takes_max_completion_tokens(self.name, self.base_url, request.model)
        no_temperature = takes_no_temperature(request.model)
        for key, value in request.settings.items():
            if value is None or (key == "temperature" and no_temperature):
                continue
            if key == "max_tokens" and completion_key:
                kwargs["max_completion_tokens"] = value
            else:
                kwargs[key] = value
        return kwargs

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        import openai

        kwargs = self.sdk_kwargs(request)
        started = time.monotonic()
        response = await call_sdk(
            openai,
            openai.OpenAIError,
            lambda: self._sdk.get().chat.completions.create(**kwargs, timeout=timeout_s),
            timeout_s=timeout_s,
            credential=self.credential,
            model=request.model,
            where=self._where(),
        )
        latency = time.monotonic() - started
        return _to_completion(response, request, latency)

    async def send_streamed(self, request: Request, *, idle_timeout_s: float) -> Completion:
        """The reply as a stream: `idle_timeout_s` bounds the wait for it to start and every
        gap between chunks, not its length. Returns only a finished reply."""
        import openai

        kwargs = self.sdk_kwargs(request)
        kwargs.update(stream=True, stream_options={"include_usage": True})
        return await streamed_completion(
            openai,
            openai.OpenAIError,
            lambda timeout: self._sdk.get().chat.completions.create(**kwargs, timeout=timeout),
            OpenAIChunks(model=request.model),
            request,
            idle_timeout_s,
            credential=self.credential,
            where=self._where(),
        )

    def _where(self) -> dict[str, str]:
        """The URL in use and the setting to fix, for transport error messages."""
        return {"url": self.base_url or OFFICIAL_BASE_URL, "setting": self.base_url_setting}

    async def aclose(self) -> None:
        await self._sdk.aclose()


def _to_completion(response: Any, request: Request, latency: float) -> Completion:
    choices = getattr(response, "choices", None)
    if not choices or not isinstance(choices, list):
        raise malformed("no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None) or ""
    if not isinstance(text, str):
        raise malformed("content is not text")
    usage = getattr(response, "usage", None)
    return Completion(
        text=text,
        usage=Usage(
            input_tokens=token_count(getattr(usage, "prompt_tokens", 0), "prompt_tokens"),
            output_tokens=token_count(getattr(usage, "completion_tokens", 0), "completion_tokens"),
        ),
        finish_reason=str(getattr(choice, "finish_reason", None) or "stop"),
        latency_s=latency,
        model=str(getattr(response, "model", None) or request.model),
    )


__all__ = ["OPENAI_SETTINGS", "OpenAIBackend", "PerLoop"]
