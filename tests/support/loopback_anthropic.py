"""A real HTTP server on 127.0.0.1 that speaks the Anthropic Messages wire protocol.

Same scripting, faults and recording as `LoopbackOpenAI` (see tests/support/loopback_openai.py);
only the request path and the JSON shapes differ. `base_url` is what an Anthropic client takes.
"""

from __future__ import annotations

from typing import Any

from tests.support.loopback_openai import (
    Fault,
    LoopbackServer,
    RecordedRequest,
    Reply,
    _content_text,
    word_count,
)

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class LoopbackAnthropic(LoopbackServer):
    """POST /v1/messages."""

    endpoint_path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return self.root_url

    def render_success(self, record: RecordedRequest, reply: Reply) -> Any:
        body = record.body if isinstance(record.body, dict) else {}
        system = body.get("system") or ""
        if isinstance(system, list):
            system = " ".join(str(block.get("text", "")) for block in system)
        prompt = " ".join([system, *(_content_text(m.get("content")) for m in record.messages)])
        in_tok = reply.input_tokens if reply.input_tokens is not None else word_count(prompt)
        out_tok = reply.output_tokens if reply.output_tokens is not None else word_count(reply.text)
        return {
            "id": f"msg_loopback_{record.index}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "loopback"),
            # Reply(None): a message with no content blocks at all (a protocol anomaly).
            "content": [] if reply.text is None else [{"type": "text", "text": reply.text}],
            "stop_reason": _STOP_REASONS.get(reply.finish_reason, reply.finish_reason),
            "stop_sequence": None,
            "usage": {"input_tokens": in_tok, "output_tokens": out_tok},
        }

    def render_error(self, status: int, message: str) -> Any:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
        }


__all__ = ["Fault", "LoopbackAnthropic", "RecordedRequest", "Reply"]
