"""Anthropic Messages API through the official SDK (its retries off; ours apply).

Requests arrive in the OpenAI message shape every role uses. Here they become a Messages
call: system messages join into `system`, `stop` becomes `stop_sequences`, a JSON-schema
`response_format` becomes `output_config.format` (structured outputs) and a plain JSON
`response_format` an instruction in the system prompt. `temperature`, `top_p` and `seed`
are not sent: the pinned SDK's Messages API no longer takes sampling parameters (they stay
in the request, so they still key the response cache). `send_streamed` is the same call as
a Messages event stream, its `timeout_s` an idle timeout (core/models/streaming.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

from core.models.openai_backend import PerLoop
from core.models.reply_shape import anthropic_text, malformed, token_count
from core.models.sdk_errors import call_sdk
from core.models.streaming import ANTHROPIC_FINISH, AnthropicEvents, streamed_completion
from core.models.types import BadRequestError, Completion, Message, Request, Usage

ANTHROPIC_SETTINGS = frozenset(
    {"temperature", "max_tokens", "top_p", "seed", "stop", "response_format"}
)
OFFICIAL_BASE_URL = "https://api.anthropic.com"


class AnthropicBackend:
    """`credential` names the variable the key came from and `base_url_setting` the config
    key the URL came from, for error messages."""

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None,
        credential: str = "ANTHROPIC_API_KEY",
        base_url: str | None = None,
        base_url_setting: str = "base_url",
    ):
        self.credential = credential
        self.base_url = base_url
        self.base_url_setting = base_url_setting
        self._api_key = api_key
        self._sdk: PerLoop[Any] = PerLoop(self._make_sdk)

    def _make_sdk(self) -> Any:
        import anthropic  # lazy: the CLI must start fast

        # Always an explicit key: given none, the SDK would fall back to ANTHROPIC_API_KEY,
        # ANTHROPIC_AUTH_TOKEN or a credentials profile and send it to whatever server
        # base_url names. A server that needs no key gets a placeholder, as in the openai
        # backend.
        # The same for the URL: given None, the SDK would follow ANTHROPIC_BASE_URL.
        return anthropic.AsyncAnthropic(
            api_key=self._api_key or "not-needed",
            base_url=self.base_url or OFFICIAL_BASE_URL,
            max_retries=0,
        )

    def sdk_kwargs(self, request: Request) -> dict[str, Any]:
        settings = request.settings
        unknown = set(settings) - ANTHROPIC_SETTINGS
        if unknown:
            raise BadRequestError(f"unknown model setting(s): {', '.join(sorted(unknown))}")
        system, messages = split_system(request.messages)
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "max_tokens": settings.get("max_tokens") or 1024,
        }
        response_format = settings.get("response_format")
        schema = _json_schema(response_format)
        if schema is not None:
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        elif response_format:
            note = "Reply with one JSON object only, no prose and no code fence."
            system = f"{system}\n\n{note}" if system else note
        if system:
            kwargs["system"] = system
        stop = settings.get("stop")
        if stop:
            kwargs["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        return kwargs

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        import anthropic

        kwargs = self.sdk_kwargs(request)
        started = time.monotonic()
        response = await call_sdk(
            anthropic,
            anthropic.AnthropicError,
            lambda: self._sdk.get().messages.create(**kwargs, timeout=timeout_s),
            timeout_s=timeout_s,
            credential=self.credential,
            model=request.model,
            where=self._where(),
        )
        return message_completion(response, request, time.monotonic() - started)

    async def send_streamed(self, request: Request, *, idle_timeout_s: float) -> Completion:
        """The reply as an event stream: `idle_timeout_s` bounds the wait for it to start and
        every gap between events, not its length. Returns only a finished reply (one whose
        stream reached message_stop)."""
        import anthropic

        kwargs = self.sdk_kwargs(request)
        return await streamed_completion(
            anthropic,
            anthropic.AnthropicError,
            lambda timeout: self._sdk.get().messages.create(**kwargs, stream=True, timeout=timeout),
            AnthropicEvents(model=request.model),
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


def message_completion(response: Any, request: Request, latency: float) -> Completion:
    """A Messages API reply (a direct call's, or one read from a message batch's results)
    as a Completion."""
    blocks = getattr(response, "content", None)
    if blocks is None:
        raise malformed("no content")
    text = anthropic_text(blocks)
    usage = getattr(response, "usage", None)
    reason = str(getattr(response, "stop_reason", None) or "end_turn")
    return Completion(
        text=text,
        usage=Usage(
            input_tokens=token_count(getattr(usage, "input_tokens", 0), "input_tokens"),
            output_tokens=token_count(getattr(usage, "output_tokens", 0), "output_tokens"),
        ),
        finish_reason=ANTHROPIC_FINISH.get(reason, reason),
        latency_s=latency,
        model=str(getattr(response, "model", None) or request.model),
    )


def split_system(messages: list[Message]) -> tuple[str, list[Message]]:
    """OpenAI-shaped messages -> (system text, user/assistant turns)."""
    system_parts: list[str] = []
    turns: list[Message] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content", "")
        if role in ("system", "developer"):
            system_parts.append(content if isinstance(content, str) else json.dumps(content))
        elif role in ("user", "assistant"):
            turns.append({"role": role, "content": content})
        else:
            raise BadRequestError(f"the anthropic backend cannot send a {role!r} message")
    return "\n\n".join(p for p in system_parts if p), turns


def _json_schema(response_format: Any) -> dict[str, Any] | None:
    """The schema of an OpenAI-style `{"type": "json_schema", "json_schema": {...}}`."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if isinstance(schema, dict):
            return schema
    return None
