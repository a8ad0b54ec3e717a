"""Real HTTP servers on 127.0.0.1 that the real coding-agent CLIs talk to.

Test support, not a model: a scripted brain for the real `claude` and `codex` binaries
(shared AGENT-CLIS.md). `LoopbackMessagesSSE` speaks the Anthropic Messages API with SSE
streaming (what `claude -p` sends), `LoopbackResponsesSSE` the OpenAI Responses API with
SSE (what `codex exec` sends, plus `GET /v1/models`). Replies come from the script
(`queue`), a handler function of the recorded request, or an echo of the last user text:

    Reply("done")                      plain text
    ToolCall("Write", {...})           a tool call the real agent runs in its workspace,
                                       then calls again with the tool result
    Fault.error(401 | 429, ...)        an HTTP error with the protocol's error body
    AgentFault.overloaded()            Anthropic 529 overloaded_error / OpenAI 503
    AgentFault.usage_limit(reset_at)   a subscription limit (429 with the provider's
                                       rate-limit headers)
    AgentFault.malformed_sse()         200 text/event-stream carrying garbage
    AgentFault.stream_hang()           the stream starts, then nothing ever comes

Every request is recorded (`requests`) with its parsed JSON body, so a test can look for
the skill's text in what the agent actually sent (`sent_text()`).
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback_anthropic import _ERROR_TYPES, message_end, message_start, text_block
from tests.support.loopback_openai import Fault, RecordedRequest, Reply, word_count
from tests.support.loopback_sse import AgentFault, StreamingServer, ToolCall, request_text

# ============================================================================ Anthropic


def anthropic_prompt_tokens(body: Any) -> int:
    return word_count(json.dumps(body.get("messages", []) if isinstance(body, dict) else ""))


class LoopbackMessagesSSE(StreamingServer):
    """POST /v1/messages (the CLI adds `?beta=true`), answered as an SSE stream.
    `base_url` is what ANTHROPIC_BASE_URL takes."""

    endpoint_path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return self.root_url

    def serve_other(self, http: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        if record.route == "/v1/messages/count_tokens":
            self._send_json(http, 200, {"input_tokens": anthropic_prompt_tokens(record.body)})
            return
        super().serve_other(http, record)

    def render_stream(
        self, record: RecordedRequest, reply: Reply | ToolCall
    ) -> list[tuple[str, Any]]:
        body = record.body if isinstance(record.body, dict) else {}
        model = body.get("model", "loopback")
        in_tok = getattr(reply, "input_tokens", None)
        in_tok = in_tok if in_tok is not None else anthropic_prompt_tokens(body)
        number = self.next_id()
        events = [message_start(f"msg_loopback_{number}", model, in_tok)]
        text = reply.text
        index = 0
        if text or isinstance(reply, Reply):
            events += text_block(index, [text or ""])
            index += 1
        if isinstance(reply, ToolCall):
            tool = {
                "type": "tool_use",
                "id": f"toolu_loopback_{number}",
                "name": reply.name,
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": tool},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
            stop, out_tok = "tool_use", word_count(json.dumps(reply.input))
        else:
            stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, "end_turn")
            out_tok = reply.output_tokens if reply.output_tokens is not None else word_count(text)
        return [*events, *message_end(stop, out_tok)]

    def render_whole(self, record: RecordedRequest, reply: Reply | ToolCall) -> Any:
        # Claude Code retries a broken stream once without streaming.
        events = self.render_stream(record, reply)
        message = dict(events[0][1]["message"])
        content: list[dict[str, Any]] = []
        for _name, data in events:
            if data["type"] == "content_block_start":
                content.append(dict(data["content_block"]))
            elif data["type"] == "content_block_delta":
                delta = data["delta"]
                if delta["type"] == "text_delta":
                    content[-1]["text"] += delta["text"]
                else:
                    content[-1]["input"] = json.loads(delta["partial_json"])
            elif data["type"] == "message_delta":
                message["stop_reason"] = data["delta"]["stop_reason"]
                message["usage"] = {**message["usage"], **data["usage"]}
        message["content"] = content
        return message

    def render_error(self, status: int, message: str) -> Any:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
        }

    def render_overloaded(self) -> tuple[int, Any]:
        return 529, {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }

    def render_usage_limit(self, reset_at: int) -> tuple[int, Any, dict[str, str]]:
        headers = {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset_at),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-status": "rejected",
            "anthropic-ratelimit-unified-5h-reset": str(reset_at),
        }
        body = self.render_error(429, "usage limit reached")
        return 429, body, headers


# ============================================================================ OpenAI


def responses_input_text(body: Any) -> str:
    return json.dumps(body.get("input", []) if isinstance(body, dict) else "")


def responses_last_user(body: dict[str, Any]) -> str:
    """The text of the last user message of a Responses API `input`."""
    for item in reversed(body.get("input") or []):
        if isinstance(item, dict) and item.get("role") == "user":
            parts = item.get("content") or []
            return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return ""


class LoopbackResponsesSSE(StreamingServer):
    """POST /v1/responses answered as an SSE stream, and GET /v1/models.
    `base_url` is what a Codex model provider's `base_url` takes."""

    endpoint_path = "/v1/responses"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def _decide(self, record: RecordedRequest) -> Reply | Fault | str:
        if self.handler is None and isinstance(record.body, dict):
            return Reply(f"echo: {responses_last_user(record.body)}")
        return super()._decide(record)

    def serve_other(self, http: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        if http.command == "GET" and record.route == "/v1/models":
            self._send_json(http, 200, {"object": "list", "data": []})
            return
        super().serve_other(http, record)

    def render_stream(
        self, record: RecordedRequest, reply: Reply | ToolCall
    ) -> list[tuple[str, Any]]:
        body = record.body if isinstance(record.body, dict) else {}
        model = body.get("model", "loopback")
        number = self.next_id()
        response_id = f"resp_loopback_{number}"
        items: list[dict[str, Any]] = []
        if reply.text or isinstance(reply, Reply):
            items.append(
                {
                    "id": f"msg_loopback_{number}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        if isinstance(reply, ToolCall):
            items.append(
                {
                    "id": f"fc_loopback_{number}",
                    "type": "function_call",
                    "status": "completed",
                    "call_id": f"call_loopback_{number}",
                    "name": reply.name,
                    "arguments": json.dumps(reply.input),
                }
            )
        in_tok = getattr(reply, "input_tokens", None)
        in_tok = in_tok if in_tok is not None else word_count(responses_input_text(body))
        out_tok = getattr(reply, "output_tokens", None)
        out_tok = (
            out_tok
            if out_tok is not None
            else word_count(reply.text or json.dumps(getattr(reply, "input", "")))
        )
        base = {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
        }
        events: list[tuple[str, Any]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {**base, "status": "in_progress", "output": []},
                },
            )
        ]
        for index, item in enumerate(items):
            started = {**item, "status": "in_progress"}
            if item["type"] == "message":
                started["content"] = []
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": started},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": reply.text,
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        events.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        **base,
                        "status": "completed",
                        "output": items,
                        "usage": {
                            "input_tokens": in_tok,
                            "input_tokens_details": {"cached_tokens": 0},
                            "output_tokens": out_tok,
                            "output_tokens_details": {"reasoning_tokens": 0},
                            "total_tokens": in_tok + out_tok,
                        },
                    },
                },
            )
        )
        return events

    def render_whole(self, record: RecordedRequest, reply: Reply | ToolCall) -> Any:
        return self.render_stream(record, reply)[-1][1]["response"]

    def render_error(self, status: int, message: str) -> Any:
        kind = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
        return {"error": {"message": message, "type": "loopback_error", "code": kind.get(status)}}

    def render_overloaded(self) -> tuple[int, Any]:
        return 503, {
            "error": {
                "message": "server overloaded",
                "type": "server_error",
                "code": "server_is_overloaded",
            }
        }

    def render_usage_limit(self, reset_at: int) -> tuple[int, Any, dict[str, str]]:
        resets_in = max(0, reset_at - int(time.time()))
        body = {
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": reset_at,
                "resets_in_seconds": resets_in,
            }
        }
        return 429, body, {}


__all__ = [
    "AgentFault",
    "Fault",
    "LoopbackMessagesSSE",
    "LoopbackResponsesSSE",
    "RecordedRequest",
    "Reply",
    "ToolCall",
    "request_text",
]
