"""The streaming half of the loopback agent servers: streaming by default, tool calls and
the faults only a streaming agent server has (see tests/support/loopback_agent_servers.py
for the two protocols and how tests script them; the SSE wire itself is LoopbackServer's)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback_openai import (
    Fault,
    Handler,
    LoopbackServer,
    RecordedRequest,
    Reply,
)


@dataclass
class ToolCall:
    """The model asks the agent to run a tool (`name` as the agent's own tool list spells
    it, `input` its arguments). `text` is said before the call."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@dataclass
class AgentFault(Fault):
    """Faults only a streaming agent server has."""

    reset_at: int | None = None  # usage_limit: epoch seconds the limit resets

    @classmethod
    def overloaded(cls) -> AgentFault:
        return cls("overloaded", message="Overloaded")

    @classmethod
    def usage_limit(cls, reset_at: int) -> AgentFault:
        return cls("usage_limit", reset_at=reset_at, message="usage limit reached")

    @classmethod
    def malformed_sse(cls) -> AgentFault:
        return cls("malformed_sse")

    @classmethod
    def stream_hang(cls) -> AgentFault:
        """The stream starts (its first event), then nothing ever comes."""
        return cls("stream_stall", after=1, partial=Reply(""))


def request_text(record: RecordedRequest) -> str:
    """Everything textual in one request body (system, instructions, messages, input,
    tool results), for finding what the agent sent."""
    return json.dumps(record.body, ensure_ascii=False) if record.body is not None else ""


class StreamingServer(LoopbackServer):
    """A server that streams unless the request says `"stream": false` (what the agent
    CLIs expect); subclasses render the events of their protocol."""

    def __init__(self, handler: Handler | None = None, **kwargs: Any):
        super().__init__(handler, **kwargs)
        self._ids = 0
        self._id_lock = threading.Lock()

    def next_id(self) -> int:
        with self._id_lock:
            self._ids += 1
            return self._ids

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Requests to the model endpoint (not `GET /v1/models` or other side routes)."""
        return [r for r in self.requests if r.route == self.endpoint_path and r.method == "POST"]

    def sent_text(self) -> str:
        """All model requests' bodies as one string."""
        return "\n".join(request_text(r) for r in self.model_requests)

    # ------------------------------------------------------------------ acting
    def _act(self, http: BaseHTTPRequestHandler, record: RecordedRequest, action: Any) -> None:
        if isinstance(action, str):
            action = Reply(action)
        if isinstance(action, (Reply, ToolCall)):
            if isinstance(record.body, dict) and record.body.get("stream") is False:
                self._send_json(http, 200, self.render_whole(record, action))
                return
            self._send_events(http, self.render_stream(record, action))
            return
        if isinstance(action, AgentFault):
            self._act_fault(http, record, action)
            return
        super()._act(http, record, action)

    def _act_fault(self, http: BaseHTTPRequestHandler, record: RecordedRequest, fault: AgentFault):
        if fault.kind == "overloaded":
            status, body = self.render_overloaded()
            self._send_json(http, status, body)
        elif fault.kind == "usage_limit":
            assert fault.reset_at is not None
            status, body, headers = self.render_usage_limit(fault.reset_at)
            self._send_json(http, status, body, headers)
        elif (
            fault.kind == "malformed_sse"
            and isinstance(record.body, dict)
            and (record.body.get("stream") is False)
        ):
            self._send_raw(http, 200, b'{"id": "x", "content": [ oops')
        elif fault.kind == "malformed_sse":
            self._start_stream(http)
            self._write_chunk(http, b"event: message_start\ndata: {not json at all\n\n")
            self._write_chunk(http, b"data: }}}}\n\n")
            self._end_stream(http)
        else:
            super()._act(http, record, fault)

    # ------------------------------------------------------------------ protocol
    def render_whole(self, record: RecordedRequest, reply: Reply | ToolCall) -> Any:
        """The same answer as one JSON body, for a request with `"stream": false`."""
        raise NotImplementedError

    def render_overloaded(self) -> tuple[int, Any]:
        raise NotImplementedError

    def render_usage_limit(self, reset_at: int) -> tuple[int, Any, dict[str, str]]:
        raise NotImplementedError
