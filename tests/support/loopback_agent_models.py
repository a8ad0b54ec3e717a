"""A scripted model server on 127.0.0.1 for the real coding-agent CLIs.

Speaks the two streaming wire protocols the agents use: Anthropic Messages with
Server-Sent Events (`POST /v1/messages`, for Claude Code) and OpenAI Responses with SSE
(`POST /v1/responses`, for Codex). It is a test double for the *model* only: the real
`claude` and `codex` binaries run against it, execute the tools it asks for, and write
their real transcripts.

What it answers comes from a `brain`: a function from an `AgentRequest` (the last user
text, whether the request carries a tool result) to a list of `Say` / `UseTool` steps,
optionally with a `delay` so a test can interrupt a turn. Every request is recorded.

    with LoopbackAgentModels(brain) as server:
        env["ANTHROPIC_BASE_URL"] = server.root_url                 # claude
        ... base_url=f"{server.root_url}/v1" ...                    # codex provider
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Say:
    text: str


@dataclass
class UseTool:
    name: str
    input: dict[str, Any]
    # Responses API only: the tool's namespace (Codex lists each MCP server's tools in a
    # `namespace` tool named `mcp__<server>`, and a call names both).
    namespace: str | None = None


@dataclass
class Answer:
    steps: list[Say | UseTool]
    delay: float = 0.0  # seconds before the first byte (lets a test interrupt the turn)
    # Seconds the stream stalls after its first text has arrived: the turn is visibly under
    # way when it is interrupted (Claude Code writes its interrupt sentinel only then).
    stall: float = 0.0
    # Not 200: the request fails with this HTTP status and an error body (a failed call;
    # 400 is not retried by the agents, so the turn fails at once).
    status: int = 200


@dataclass
class AgentRequest:
    protocol: str  # "anthropic" | "responses"
    path: str
    body: dict[str, Any]
    last_user_text: str
    after_tool_result: bool
    tool_names: list[str] = field(default_factory=list)


Brain = Callable[[AgentRequest], Answer]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") in ("text", "input_text")
        )
    return ""


def anthropic_request(path: str, body: dict[str, Any]) -> AgentRequest:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content")
    after_tool = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    user_text = ""
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        blocks = m.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks or []
        texts = [
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        # Claude Code puts <system-reminder> blocks beside the prompt: skip them.
        typed = [t for t in texts if not t.lstrip().startswith("<")]
        if typed:
            user_text = typed[-1]
            break
    names = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
    return AgentRequest("anthropic", path, body, user_text, after_tool, names)


def responses_request(path: str, body: dict[str, Any]) -> AgentRequest:
    items = body.get("input") or []
    after_tool = (
        bool(items)
        and isinstance(items[-1], dict)
        and (items[-1].get("type") in ("function_call_output", "custom_tool_call_output"))
    )
    user_text = ""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            text = _text_of(item.get("content"))
            if not text.startswith("<"):
                user_text = text
                break
    names = [
        t.get("name") or t.get("type", "") for t in body.get("tools") or [] if isinstance(t, dict)
    ]
    return AgentRequest("responses", path, body, user_text, after_tool, names)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_events(answer: Answer, model: str) -> list[bytes]:
    msg_id = f"msg_loop{uuid.uuid4().hex[:20]}"
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
    ]
    stop = "end_turn"
    for i, step in enumerate(answer.steps):
        if isinstance(step, Say):
            block, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": step.text}
        else:
            stop = "tool_use"
            block = {
                "type": "tool_use",
                "id": f"toolu_loop{uuid.uuid4().hex[:16]}",
                "name": step.name,
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": block},
            )
        )
        out.append(
            _sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


def responses_events(answer: Answer, model: str) -> list[bytes]:
    resp_id = f"resp_loop{uuid.uuid4().hex[:16]}"
    base = {"id": resp_id, "object": "response", "model": model, "output": []}
    out = [
        _sse(
            "response.created",
            {"type": "response.created", "response": {**base, "status": "in_progress"}},
        )
    ]
    done_items = []
    for i, step in enumerate(answer.steps):
        if isinstance(step, Say):
            item_id = f"msg_loop{uuid.uuid4().hex[:12]}"
            started = {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            done = {
                **started,
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
            out.append(
                _sse(
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": i, "item": started},
                )
            )
            out.append(
                _sse(
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item_id,
                        "output_index": i,
                        "content_index": 0,
                        "delta": step.text,
                    },
                )
            )
        else:
            done = {
                "type": "function_call",
                "id": f"fc_loop{uuid.uuid4().hex[:12]}",
                "call_id": f"call_loop{uuid.uuid4().hex[:12]}",
                "name": step.name,
                "arguments": json.dumps(step.input),
                "status": "completed",
            }
            if step.namespace:
                done["namespace"] = step.namespace
            out.append(
                _sse(
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": i,
                        "item": {**done, "arguments": ""},
                    },
                )
            )
        out.append(
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": i, "item": done},
            )
        )
        done_items.append(done)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    out.append(
        _sse(
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": done_items, "usage": usage},
            },
        )
    )
    return out


class LoopbackAgentModels:
    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self.requests: list[AgentRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LoopbackAgentModels:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _record(self, request: AgentRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _handler(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _json(self, status: int, data: Any) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._json(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": "local-model", "object": "model"}],
                            "models": [],
                        },
                    )
                else:
                    self._json(404, {"error": {"type": "not_found_error", "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                if path.endswith("/messages/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                    return
                if path.endswith("/messages"):
                    request, render = anthropic_request(path, body), anthropic_events
                elif path.endswith("/responses"):
                    request, render = responses_request(path, body), responses_events
                else:
                    self._json(404, {"error": {"type": "not_found_error", "message": path}})
                    return
                owner._record(request)
                answer = owner.brain(request)
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.status != 200:
                    message = " ".join(s.text for s in answer.steps if isinstance(s, Say))
                    error = {"type": "invalid_request_error", "message": message or "failed"}
                    self._json(answer.status, {"type": "error", "error": error})
                    return
                model = str(body.get("model") or "local-model")
                events = render(answer, model)
                if not body.get("stream"):
                    self._json(200, _non_streaming(request.protocol, answer, model))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for chunk in events:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if answer.stall and b"delta" in chunk.split(b"\n", 1)[0]:
                            time.sleep(answer.stall)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


def _non_streaming(protocol: str, answer: Answer, model: str) -> dict[str, Any]:
    text = " ".join(s.text for s in answer.steps if isinstance(s, Say))
    if protocol == "anthropic":
        return {
            "id": f"msg_loop{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    return {
        "id": f"resp_loop{uuid.uuid4().hex[:16]}",
        "object": "response",
        "status": "completed",
        "model": model,
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }
