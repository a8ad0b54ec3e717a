"""A real HTTP server on 127.0.0.1 that speaks the Anthropic Messages wire protocol.

Same scripting, faults and recording as `LoopbackOpenAI` (see tests/support/loopback_openai.py);
only the request path and the JSON shapes differ. `base_url` is what an Anthropic client takes.
A `"stream": true` request gets the Messages events (message_start, content_block_start,
content_block_delta..., content_block_stop, message_delta, message_stop); a stream error
is an `error` event, as the API sends it.
"""

from __future__ import annotations

from typing import Any

from tests.support.loopback_openai import (
    Fault,
    LoopbackServer,
    RecordedRequest,
    Reply,
    _content_text,
    _model,
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
        in_tok, out_tok = self._usage(record, reply)
        return {
            "id": f"msg_loopback_{record.index}",
            "type": "message",
            "role": "assistant",
            "model": _model(record),
            # Reply(None): a message with no content blocks at all (a protocol anomaly).
            "content": [] if reply.text is None else [{"type": "text", "text": reply.text}],
            "stop_reason": _STOP_REASONS.get(reply.finish_reason, reply.finish_reason),
            "stop_sequence": None,
            "usage": {"input_tokens": in_tok, "output_tokens": out_tok},
        }

    def render_stream(self, record: RecordedRequest, reply: Reply) -> list[tuple[str | None, Any]]:
        in_tok, out_tok = self._usage(record, reply)
        events = [message_start(f"msg_loopback_{record.index}", _model(record), in_tok)]
        if reply.text is not None:
            events += text_block(0, reply.pieces())
        stop = _STOP_REASONS.get(reply.finish_reason, reply.finish_reason)
        return [*events, *message_end(stop, out_tok)]

    def render_stream_error(self, message: str) -> tuple[str | None, Any]:
        return "error", {"type": "error", "error": {"type": "overloaded_error", "message": message}}

    @staticmethod
    def _usage(record: RecordedRequest, reply: Reply) -> tuple[int, int]:
        body = record.body if isinstance(record.body, dict) else {}
        system = body.get("system") or ""
        if isinstance(system, list):
            system = " ".join(str(block.get("text", "")) for block in system)
        prompt = " ".join([system, *(_content_text(m.get("content")) for m in record.messages)])
        in_tok = reply.input_tokens if reply.input_tokens is not None else word_count(prompt)
        out_tok = reply.output_tokens if reply.output_tokens is not None else word_count(reply.text)
        return in_tok, out_tok

    def render_error(self, status: int, message: str) -> Any:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
        }


# ---------------------------------------------------------------------- stream events
# Shared with the agent servers' Messages stream (tests/support/loopback_agent_servers.py).


def message_start(message_id: str, model: str, input_tokens: int) -> tuple[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return "message_start", {"type": "message_start", "message": message}


def text_block(index: int, pieces: list[str]) -> list[tuple[str, Any]]:
    """A text content block: its start, one delta per piece, its stop."""
    start = {"type": "content_block_start", "index": index}
    start["content_block"] = {"type": "text", "text": ""}
    deltas = [
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            },
        )
        for piece in pieces
    ]
    stop = ("content_block_stop", {"type": "content_block_stop", "index": index})
    return [("content_block_start", start), *deltas, stop]


def message_end(stop_reason: str, output_tokens: int) -> list[tuple[str, Any]]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    return [("message_delta", delta), ("message_stop", {"type": "message_stop"})]


__all__ = [
    "Fault",
    "LoopbackAnthropic",
    "RecordedRequest",
    "Reply",
    "message_end",
    "message_start",
    "text_block",
]
