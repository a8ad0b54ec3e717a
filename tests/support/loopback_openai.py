"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions wire protocol.

Test support, not a model: replies come from a script of `Reply`/`Fault` objects, a handler
function, or a deterministic echo of the last user message. Faults are injected per request
(status codes with `Retry-After`, hung connections, malformed JSON, truncated bodies), and
every request is recorded with its arrival time so tests can assert what reached the server.

A request with `"stream": true` is answered as server-sent events (the protocol's chunks,
usage last when `stream_options.include_usage` asks for it, then `data: [DONE]`).
`Reply(chunk_chars=, chunk_interval_s=)` splits the text into many deltas and paces them,
like a slow server writing a long reply; the same reply unstreamed arrives whole after the
same total time. Stream faults start a reply and then stall, drop the connection or send
the protocol's error event (`Fault.stream_stall / stream_drop / stream_end / stream_error`).

    with LoopbackOpenAI() as server:
        server.queue(Fault.error(429, retry_after=2), Reply("Paris"))
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        ...
        assert len(server.requests) == 2
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """A successful completion. Token counts default to whitespace word counts."""

    text: str | None = "ok"  # None: `content: null` (a protocol anomaly)
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str = "stop"  # OpenAI spelling; the Anthropic server translates it
    chunk_chars: int | None = None  # streamed: deltas of this many characters (None = one)
    chunk_interval_s: float = 0.0  # pause before each streamed event (unstreamed: in total)
    served_model: str | None = None  # the model the reply says served it (default: as asked)

    def pieces(self) -> list[str]:
        """The text as the streamed deltas carry it."""
        if not self.text:
            return []
        size = self.chunk_chars or len(self.text)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


# What a stream fault sends before it goes wrong: a few deltas of an unfinished reply.
PARTIAL_REPLY = Reply("a partial reply that never finishes", chunk_chars=8)


@dataclass
class Fault:
    """Something going wrong on one request."""

    # "status" | "raw" | "bytes" | "hang" | "malformed" | "truncated"
    # | "stream_stall" | "stream_drop" | "stream_end" | "stream_error"
    kind: str
    status: int = 500
    retry_after: float | str | None = None
    seconds: float | None = None  # for "hang", "stream_stall": None = until the server stops
    message: str = "injected fault"
    body: Any = None  # for "raw": the JSON body sent as it is; for "bytes": the bytes
    content_type: str = "application/json"  # for "bytes"
    after: int = 0  # stream faults: events of `partial` sent before the fault
    partial: Reply | None = None  # stream faults: the reply they start (PARTIAL_REPLY)

    @classmethod
    def raw(cls, status: int, body: Any) -> Fault:
        """An HTTP error status with a JSON body of the test's choosing (any shape)."""
        return cls("raw", status=status, body=body)

    @classmethod
    def error(
        cls, status: int, *, retry_after: float | str | None = None, message: str = ""
    ) -> Fault:
        """An HTTP error status with the protocol's error body (and `Retry-After`)."""
        return cls(
            "status", status=status, retry_after=retry_after, message=message or f"HTTP {status}"
        )

    @classmethod
    def raw_bytes(cls, status: int, body: bytes, content_type: str = "application/json") -> Fault:
        """Any bytes as the body (not JSON, HTML, an empty body) under `content_type`."""
        return cls("bytes", status=status, body=body, content_type=content_type)

    @classmethod
    def hang(cls, seconds: float | None = None) -> Fault:
        """Accept the request and send nothing (the client must time out)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed_json(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def truncated_body(cls) -> Fault:
        """Announce a full body, send half of it, close the connection."""
        return cls("truncated")

    @classmethod
    def stream_stall(
        cls, after: int = 2, seconds: float | None = None, partial: Reply | None = None
    ) -> Fault:
        """Start a streamed reply, send its first `after` events, then nothing more."""
        return cls("stream_stall", after=after, seconds=seconds, partial=partial)

    @classmethod
    def stream_drop(cls, after: int = 2, partial: Reply | None = None) -> Fault:
        """Start a streamed reply, send `after` events, close the connection mid-body."""
        return cls("stream_drop", after=after, partial=partial)

    @classmethod
    def stream_end(cls, after: int = 2, partial: Reply | None = None) -> Fault:
        """Start a streamed reply, send `after` events, end the body properly: a stream
        that looks complete on the wire but never said the reply was finished."""
        return cls("stream_end", after=after, partial=partial)

    @classmethod
    def stream_error(
        cls, after: int = 2, message: str = "Overloaded", partial: Reply | None = None
    ) -> Fault:
        """Start a streamed reply, send `after` events, then the protocol's error event."""
        return cls("stream_error", after=after, message=message, partial=partial)


@dataclass
class RecordedRequest:
    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None if the body was not JSON
    started: float  # time.monotonic() on arrival
    finished: float | None = None
    raw: bytes = b""  # the body as sent (a multipart upload is not JSON)

    @property
    def route(self) -> str:
        """The path without its query string (`/v1/messages?beta=true` -> `/v1/messages`)."""
        return http_path_route(self.path)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    @property
    def last_user(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""


Handler = Callable[[RecordedRequest], "Reply | Fault | str | None"]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def http_path_route(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/")


def word_count(text: str | None) -> int:
    return max(1, len((text or "").split()))


def _model(record: RecordedRequest) -> str:
    return record.body.get("model", "loopback") if isinstance(record.body, dict) else "loopback"


class LoopbackServer:
    """Protocol-neutral core: threading HTTP server, script/handler dispatch, faults,
    request recording and in-flight accounting. Subclasses render the wire format."""

    endpoint_path = "/"

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        replies: Iterable[Reply | Fault | str] = (),
        latency_s: float = 0.0,
    ):
        self.handler = handler
        self.latency_s = latency_s
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply | Fault | str] = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LoopbackServer:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle's algorithm and the
            # client's delayed ACK that costs ~40 ms per response.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                server._serve(self)

            def do_GET(self) -> None:  # noqa: N802
                server._serve(self)

        class _Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients hanging up on a hung request are expected here

        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ scripting
    def queue(self, *items: Reply | Fault | str) -> None:
        """Answer the next requests with these, in order, before the handler/echo."""
        with self._lock:
            self._script.extend(items)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.max_in_flight = 0

    # ------------------------------------------------------------------ serving
    def _serve(self, http: BaseHTTPRequestHandler) -> None:
        length = int(http.headers.get("Content-Length") or 0)
        raw = http.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            record = RecordedRequest(
                index=len(self.requests),
                method=http.command,
                path=http.path,
                headers={k.lower(): v for k, v in http.headers.items()},
                body=body,
                started=time.monotonic(),
                raw=raw,
            )
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            # Only requests to the model endpoint take the next scripted answer.
            on_endpoint = http.command == "POST" and record.route == self.endpoint_path
            scripted = self._script.popleft() if self._script and on_endpoint else None
        try:
            if not on_endpoint:
                self.serve_other(http, record)
                return
            action = scripted if scripted is not None else self._decide(record)
            if self.latency_s:
                self._stopping.wait(self.latency_s)
            self._act(http, record, action)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.in_flight -= 1
                record.finished = time.monotonic()

    def serve_other(self, http: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        """A request to any other route (subclasses answer e.g. `GET /v1/models`)."""
        self._send_json(http, 404, self.render_error(404, f"no route {http.path}"))

    def _decide(self, record: RecordedRequest) -> Reply | Fault | str:
        if self.handler is not None:
            answer = self.handler(record)
            if answer is not None:
                return answer
        return Reply(f"echo: {record.last_user}")

    def _act(self, http: BaseHTTPRequestHandler, record: RecordedRequest, action: Any) -> None:
        if isinstance(action, str):
            action = Reply(action)
        if isinstance(action, Reply):
            if wants_stream(record):
                self._send_events(http, self.render_stream(record, action), action)
                return
            if action.chunk_interval_s:
                # A slow server unstreamed: the same reply, whole, after the same time.
                events = len(self.render_stream(record, action))
                self._stopping.wait(action.chunk_interval_s * events)
            self._send_json(http, 200, self.render_success(record, action))
            return
        if not isinstance(action, Fault):
            raise TypeError(f"handler returned {type(action).__name__}")
        if action.kind == "status":
            headers = {}
            if action.retry_after is not None:
                headers["Retry-After"] = str(action.retry_after)
            self._send_json(
                http, action.status, self.render_error(action.status, action.message), headers
            )
        elif action.kind == "raw":
            self._send_json(http, action.status, action.body)
        elif action.kind == "bytes":
            self._send_raw(http, action.status, action.body, {}, action.content_type)
        elif action.kind == "hang":
            self._stopping.wait(action.seconds)
            http.close_connection = True
        elif action.kind == "malformed":
            self._send_raw(http, 200, b'{"id": "x", "choices": [ {"message": oops')
        elif action.kind == "truncated":
            body = json.dumps(self.render_success(record, Reply("truncated"))).encode()
            http.send_response(200)
            http.send_header("Content-Type", "application/json")
            http.send_header("Content-Length", str(len(body)))
            http.end_headers()
            http.wfile.write(body[: len(body) // 2])
            http.wfile.flush()
            http.close_connection = True
        elif action.kind in ("stream_stall", "stream_drop", "stream_end", "stream_error"):
            self._act_stream_fault(http, record, action)
        else:
            raise ValueError(f"unknown fault {action.kind!r}")

    def _act_stream_fault(
        self, http: BaseHTTPRequestHandler, record: RecordedRequest, fault: Fault
    ) -> None:
        events = self.render_stream(record, fault.partial or PARTIAL_REPLY)[: fault.after]
        self._start_stream(http)
        for event in events:
            self._write_chunk(http, sse_bytes(*event))
        if fault.kind == "stream_error":
            self._write_chunk(http, sse_bytes(*self.render_stream_error(fault.message)))
            self._end_stream(http)
        elif fault.kind == "stream_end":
            self._end_stream(http)
        else:  # stall, then (like a drop) close with the chunked body unfinished
            if fault.kind == "stream_stall":
                self._stopping.wait(fault.seconds)
            http.close_connection = True

    # ------------------------------------------------------------------ SSE wire
    def _send_events(
        self,
        http: BaseHTTPRequestHandler,
        events: list[tuple[str | None, Any]],
        pace: Reply | None = None,
    ) -> None:
        self._start_stream(http)
        for name, data in events:
            if pace is not None and pace.chunk_interval_s:
                self._stopping.wait(pace.chunk_interval_s)
            self._write_chunk(http, sse_bytes(name, data))
        self._end_stream(http)

    @staticmethod
    def _start_stream(http: BaseHTTPRequestHandler) -> None:
        http.send_response(200)
        http.send_header("Content-Type", "text/event-stream")
        http.send_header("Cache-Control", "no-cache")
        http.send_header("Transfer-Encoding", "chunked")
        http.end_headers()
        http.wfile.flush()

    @staticmethod
    def _write_chunk(http: BaseHTTPRequestHandler, data: bytes) -> None:
        http.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        http.wfile.flush()

    @staticmethod
    def _end_stream(http: BaseHTTPRequestHandler) -> None:
        http.wfile.write(b"0\r\n\r\n")
        http.wfile.flush()

    def _send_json(
        self,
        http: BaseHTTPRequestHandler,
        status: int,
        obj: Any,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._send_raw(http, status, json.dumps(obj).encode(), headers)

    @staticmethod
    def _send_raw(
        http: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        http.send_response(status)
        http.send_header("Content-Type", content_type)
        http.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            http.send_header(key, value)
        http.end_headers()
        http.wfile.write(body)
        http.wfile.flush()

    # ------------------------------------------------------------------ wire format
    def render_success(self, record: RecordedRequest, reply: Reply) -> Any:
        raise NotImplementedError

    def render_error(self, status: int, message: str) -> Any:
        raise NotImplementedError

    def render_stream(self, record: RecordedRequest, reply: Any) -> list[tuple[str | None, Any]]:
        """The reply as (event name or None, data) pairs, in order."""
        raise NotImplementedError

    def render_stream_error(self, message: str) -> tuple[str | None, Any]:
        """The event a server sends when a stream fails after it started."""
        raise NotImplementedError


def wants_stream(record: RecordedRequest) -> bool:
    return isinstance(record.body, dict) and record.body.get("stream") is True


def sse_bytes(name: str | None, data: Any) -> bytes:
    """One server-sent event; `data` is JSON-encoded unless it is already text."""
    line = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {line}\n\n".encode()


class LoopbackOpenAI(LoopbackServer):
    """POST /v1/chat/completions. `base_url` is what an OpenAI client takes."""

    endpoint_path = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def render_success(self, record: RecordedRequest, reply: Reply) -> Any:
        return {
            "id": f"chatcmpl-loopback-{record.index}",
            "object": "chat.completion",
            "created": 0,
            "model": reply.served_model or _model(record),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": self._usage(record, reply),
        }

    def render_stream(self, record: RecordedRequest, reply: Reply) -> list[tuple[str | None, Any]]:
        head = {
            "id": f"chatcmpl-loopback-{record.index}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": reply.served_model or _model(record),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return None, {**head, "choices": [choice]}

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": piece}) for piece in reply.pieces()]
        events.append(chunk({}, reply.finish_reason))
        options = record.body.get("stream_options") if isinstance(record.body, dict) else None
        if isinstance(options, dict) and options.get("include_usage"):
            events.append((None, {**head, "choices": [], "usage": self._usage(record, reply)}))
        events.append((None, "[DONE]"))
        return events

    def render_stream_error(self, message: str) -> tuple[str | None, Any]:
        return None, {"error": {"message": message, "type": "server_error", "code": None}}

    @staticmethod
    def _usage(record: RecordedRequest, reply: Reply) -> dict[str, int]:
        prompt = " ".join(_content_text(m.get("content")) for m in record.messages)
        in_tok = reply.input_tokens if reply.input_tokens is not None else word_count(prompt)
        out_tok = reply.output_tokens if reply.output_tokens is not None else word_count(reply.text)
        return {
            "prompt_tokens": in_tok,
            "completion_tokens": out_tok,
            "total_tokens": in_tok + out_tok,
        }

    def render_error(self, status: int, message: str) -> Any:
        kind = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
        return {"error": {"message": message, "type": "loopback_error", "code": kind.get(status)}}


__all__ = [
    "Fault",
    "Handler",
    "LoopbackOpenAI",
    "LoopbackServer",
    "RecordedRequest",
    "Reply",
    "sse_bytes",
    "word_count",
]
