"""TEST DOUBLE: a deterministic scripted backend. It is not a model.

Tests and offline demos of the engine plumbing use it to get exact, repeatable answers
without a server: replies come from a function of the request or from a table keyed by the
last user message. Token counts are whitespace word counts so ledgers and budgets behave
deterministically too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.models.types import BadRequestError, Completion, Request, Usage

# A function of the full request, or a table {last user message -> reply}.
ScriptedResponder = Callable[[Request], "str | Completion"] | Mapping[str, "str | Completion"]

SCRIPTED_MODEL = "scripted"


def last_user_text(request: Request) -> str:
    for message in reversed(request.messages):
        if message.get("role") == "user":
            content: Any = message.get("content", "")
            if isinstance(content, list):
                return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content)
    return ""


def _words(text: str) -> int:
    return len(text.split())


class ScriptedBackend:
    """TEST DOUBLE backend. Every call is recorded in `.requests` for assertions."""

    name = "scripted"

    def __init__(self, responder: ScriptedResponder, *, default: str | None = None):
        self._responder = responder
        self._default = default
        self.requests: list[Request] = []

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        self.requests.append(request)
        answer = self._answer(request)
        if isinstance(answer, Completion):
            return answer
        if not isinstance(answer, str):
            raise TypeError(
                f"scripted responder returned {type(answer).__name__}, not str/Completion"
            )
        prompt = " ".join(str(m.get("content", "")) for m in request.messages)
        max_tokens = request.settings.get("max_tokens")
        words = answer.split()
        finish = "stop"
        if isinstance(max_tokens, int) and len(words) > max_tokens:
            answer, finish = " ".join(words[:max_tokens]), "length"
        return Completion(
            text=answer,
            usage=Usage(input_tokens=_words(prompt), output_tokens=_words(answer)),
            finish_reason=finish,
            latency_s=0.0,
            model=request.model,
        )

    def _answer(self, request: Request) -> str | Completion:
        if callable(self._responder):
            return self._responder(request)
        key = last_user_text(request)
        if key in self._responder:
            return self._responder[key]
        if self._default is not None:
            return self._default
        raise BadRequestError(
            f"scripted test double has no reply for the user message {key[:80]!r}"
        )

    async def aclose(self) -> None:
        return None
