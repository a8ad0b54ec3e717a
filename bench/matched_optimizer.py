"""A loopback proxy in front of the embedded model server that answers every optimizer call
from one fixed reply set, in the reply format of the engine that asked.

Why: side by side (bench/published_side_by_side.py), ours and published 0.2.0 each read
their own optimizer's replies from a 135M model, so a call one engine made and the other
did not could come from the replies (one cut at the token cap, the other parsable) as well
as from the method. Behind this proxy both engines face the same edits at every optimizer
stage, so their optimizer calls by role can be compared directly.

Target calls go through to the model unchanged. Optimizer calls are recognised by their
prompt (each engine's failure and success analyst, merge, rank, slow update, meta notes);
the analysts' n-th reply (in arrival order) proposes `ANALYST_EDITS[n % 2]`, a merge
returns their union `MERGED_EDITS`, a ranking picks `RANKED` (four of the five, the budget
of the side-by-side run), the slow update and meta notes return fixed texts. Every request
body is logged (JSON lines: engine, role, body, and for a target call the reply's finish
reason and tokens), so the exact requests each engine sends the target can be compared.
A bench tool, not product code: nothing here is imported by core/, envs/ or sleep/.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# (engine, role, a phrase only that engine's prompt for that role contains)
MARKERS: tuple[tuple[str, str, str], ...] = (
    ("ours", "analyst_failure", "task items the model FAILED while following"),
    ("ours", "analyst_success", "task items the model got RIGHT while following"),
    ("ours", "merge", "Several analysts each proposed edits"),
    ("ours", "rank", "Rank candidate edits to a skill"),
    ("ours", "slow_update", "You maintain the epoch-level guidance of a skill"),
    ("ours", "meta", "Write notes for yourself for the next epoch"),
    ("published", "analyst_failure", "failure-analysis agent"),
    ("published", "analyst_success", "success-pattern analyst"),
    ("published", "merge", "skill-edit coordinator"),
    ("published", "rank", "RANK the edits by importance"),
    ("published", "slow_update", "strategic skill advisor"),
    ("published", "meta", "optimizer-coach"),
)
# Any other prompt that asks for JSON is an optimizer call this table does not know: it is
# logged as such (and forwarded), so a new call kind shows up in the counts.
JSON_ASKS = ("Reply with exactly one JSON object", "Respond ONLY with a valid JSON")

_FORM = (
    "## Answer form\nWrite the final answer as the shortest exact phrase the passages use "
    "for it (a name, a title or a number), never a sentence."
)
_SOURCE = (
    "## Finding the answer\nFind the passage that repeats the clue's own words and take "
    "the answer from that passage, not from memory."
)
_NAMES = "Give a person's full name as the passages write it, first name included."
_CHECK = "Before answering, check that the answer fits every part of the clue."
_QUOTES = "Leave quotation marks and a leading article (a, an, the) out of the answer."

EDITS: tuple[dict[str, str], ...] = tuple(
    {"op": "append", "target": "", "content": content}
    for content in (_FORM, _SOURCE, _NAMES, _CHECK, _QUOTES)
)
ANALYST_EDITS = (EDITS[0:3], EDITS[2:5])  # two proposals that share one edit
MERGED_EDITS = EDITS  # their union
RANKED = [1, 0, 3, 2]  # four of the five: the side-by-side run's edit budget
GUIDANCE = "Answer with the exact words of the passage that settles the clue."
NOTES = "Short format rules helped more than reading advice; keep edits to one rule each."


def _ours_edit(edit: dict[str, str]) -> dict[str, str]:
    return {**edit, "rationale": "the predictions lost the exact match"}


def _published_edit(edit: dict[str, str], source: str) -> dict[str, Any]:
    return {**edit, "support_count": 1, "source_type": source}


def reply(engine: str, role: str, n: int) -> dict[str, Any]:
    """The `n`-th reply (0-based, counted per engine and role) to an optimizer call, in the
    JSON its engine's prompt asks for."""
    proposed = ANALYST_EDITS[n % len(ANALYST_EDITS)]
    source = "success" if role == "analyst_success" else "failure"
    if engine == "ours":
        if role.startswith("analyst"):
            edits = [_ours_edit(e) for e in proposed]
            return {"analysis": "fixed reply", "edits": edits, "lapses": []}
        if role == "merge":
            return {"analysis": "fixed reply", "edits": [_ours_edit(e) for e in MERGED_EDITS]}
        if role == "rank":
            return {"order": RANKED, "reason": "fixed reply"}
        content = GUIDANCE if role == "slow_update" else NOTES
        return {"reasoning": "fixed reply", "content": content}
    if role.startswith("analyst"):
        patch = {
            "reasoning": "fixed reply",
            "edits": [_published_edit(e, source) for e in proposed],
        }
        summary_key = "success_patterns" if source == "success" else "failure_summary"
        return {"batch_size": 1, summary_key: [], "patch": patch}
    if role == "merge":
        edits = [_published_edit(e, "failure") for e in MERGED_EDITS]
        return {"reasoning": "fixed reply", "edits": edits}
    if role == "rank":
        return {"reasoning": "fixed reply", "selected_indices": RANKED}
    if role == "slow_update":
        return {"reasoning": "fixed reply", "slow_update_content": GUIDANCE}
    return {"reasoning": "fixed reply", "meta_skill_content": NOTES}


def prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def classify(body: dict[str, Any]) -> tuple[str | None, str]:
    """(engine, role) of a chat request: role "target" (engine None) for every prompt that
    is not an optimizer's, "unknown_optimizer" for a JSON-asking prompt no marker names."""
    text = prompt_text(body)
    for engine, role, marker in MARKERS:
        if marker in text:
            return engine, role
    if any(ask in text for ask in JSON_ASKS):
        return None, "unknown_optimizer"
    return None, "target"


def completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    """An OpenAI chat completion carrying `content`, with rough token counts."""
    prompt_tokens = len(prompt_text(body)) // 4
    completion_tokens = max(1, len(content) // 4)
    return {
        "id": "chatcmpl-matched",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def streamed(payload: dict[str, Any]) -> bytes:
    """The same completion as one server-sent-events stream (for a client that asked)."""
    choice = payload["choices"][0]
    chunk = {
        **{k: payload[k] for k in ("id", "created", "model")},
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": choice["message"], "finish_reason": "stop"}],
        "usage": payload["usage"],
    }
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


@dataclass
class MatchedOptimizerProxy:
    """The proxy on a free loopback port; `url` is its OpenAI base URL (`.../v1`)."""

    upstream: str  # the model server's base URL, with or without `/v1`
    log_path: Path
    matched: bool = True  # False: every call reaches the model, optimizer calls still counted

    def start(self) -> str:
        self._root = self.upstream.rstrip("/").removesuffix("/v1")
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}
        self._log = self.log_path.open("a", encoding="utf-8")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._log.close()

    def counts(self) -> dict[str, int]:
        """Optimizer calls seen (answered when `matched`), by "engine/role"."""
        with self._lock:
            return {f"{e}/{r}": n for (e, r), n in sorted(self._counts.items())}

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()

    def _next(self, engine: str, role: str) -> int:
        with self._lock:
            n = self._counts.get((engine, role), 0)
            self._counts[(engine, role)] = n + 1
            return n

    def _forward(self, method: str, path: str, data: bytes | None, headers: dict[str, str]):
        request = urllib.request.Request(self._root + path, data=data, method=method)
        for key, value in headers.items():
            request.add_header(key, value)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=3600) as response:
                return response.status, response.headers.get_content_type(), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get_content_type(), exc.read()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # the JSON lines are the log
                pass

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(*proxy._forward("GET", self.path, None, {}))

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(data)
                except json.JSONDecodeError:
                    body = None
                if not isinstance(body, dict) or not self.path.endswith("chat/completions"):
                    headers = {"Content-Type": self.headers.get("Content-Type", "")}
                    self._send(*proxy._forward("POST", self.path, data, headers))
                    return
                engine, role = classify(body)
                n = proxy._next(engine, role) if engine is not None else 0
                if engine is not None and proxy.matched:
                    payload = completion(body, json.dumps(reply(engine, role, n)))
                    proxy._record({"engine": engine, "role": role, "n": n, "body": body})
                    if body.get("stream"):
                        self._send(200, "text/event-stream", streamed(payload))
                    else:
                        self._send(200, "application/json", json.dumps(payload).encode())
                    return
                headers = {"Content-Type": "application/json"}
                status, kind, answer = proxy._forward("POST", self.path, data, headers)
                entry: dict[str, Any] = {"engine": engine, "role": role, "status": status}
                entry["body"] = body
                if kind == "application/json":
                    try:
                        out = json.loads(answer)
                        entry["finish_reason"] = out["choices"][0].get("finish_reason")
                        entry["completion_tokens"] = out["usage"]["completion_tokens"]
                        entry["reply"] = out["choices"][0]["message"].get("content")
                    except (ValueError, KeyError, IndexError, TypeError):
                        pass
                proxy._record(entry)
                self._send(status, kind, answer)

        return Handler
