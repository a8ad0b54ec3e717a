"""Loopback servers that also speak the two batch APIs (test support, not a provider).

`LoopbackOpenAIBatches`: `POST /v1/files` (a multipart JSONL upload), `POST /v1/batches`,
`GET /v1/batches/{id}`, `GET /v1/files/{id}/content`. `LoopbackAnthropicBatches`:
`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}` and its `/results`. Each
request inside a batch is answered as the server answers an interactive call (the
script, the handler, else the echo), when the batch is released.

Controls, shared by both: `hold` keeps new batches in progress until `release()`;
`expire` makes a released batch end as expired with only its first `answer_before_expiry`
requests answered; `fail_when(body)` marks requests that fail inside the batch.
`submissions` lists each batch's custom_ids in order (what a test counts).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply

BatchBody = dict[str, Any]


@dataclass
class LoopbackBatch:
    batch_id: str
    requests: list[tuple[str, BatchBody]]  # (custom_id, request body)
    created_at: float
    status: str = "in_progress"  # in_progress | ended (completed or expired)
    expired: bool = False
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # custom_id -> outcome


class BatchControls:
    """The batch bookkeeping both servers share (mixed into each)."""

    def _init_batches(self) -> None:
        self.batches: dict[str, LoopbackBatch] = {}
        self.submissions: list[list[str]] = []
        self.hold = False
        self.expire = False
        self.answer_before_expiry = 0
        self.fail_when: Callable[[BatchBody], bool] | None = None
        self.refuse_submissions = 0
        self._ids = itertools.count(1)
        self._batch_lock = threading.Lock()

    def _new_batch(self, prefix: str, requests: list[tuple[str, BatchBody]]) -> LoopbackBatch:
        with self._batch_lock:
            batch = LoopbackBatch(f"{prefix}{next(self._ids)}", requests, time.time())
            self.batches[batch.batch_id] = batch
            self.submissions.append([cid for cid, _ in requests])
        if not self.hold:
            self._end(batch)
        return batch

    def refused(self, http: BaseHTTPRequestHandler) -> bool:
        """Answer this submission 503 when told to refuse it."""
        if self.refuse_submissions <= 0:
            return False
        self.refuse_submissions -= 1
        self._send_json(http, 503, self.render_error(503, "overloaded"))  # type: ignore[attr-defined]
        return True

    def release(self) -> None:
        """End every batch still in progress (answering its requests)."""
        for batch in list(self.batches.values()):
            if batch.status == "in_progress":
                self._end(batch)

    def _end(self, batch: LoopbackBatch) -> None:
        for n, (custom_id, body) in enumerate(batch.requests):
            if self.expire and n >= self.answer_before_expiry:
                continue
            if self.fail_when is not None and self.fail_when(body):
                batch.results[custom_id] = {"error": "the loopback failed this request"}
                continue
            record = RecordedRequest(
                index=n, method="POST", path="(batch)", headers={}, body=body, started=0.0
            )
            action = self._decide(record)  # type: ignore[attr-defined]
            reply = Reply(action) if isinstance(action, str) else action
            batch.results[custom_id] = {"body": self.render_success(record, reply)}  # type: ignore[attr-defined]
        batch.expired = self.expire
        batch.status = "ended"

    def counts(self, batch: LoopbackBatch) -> tuple[int, int, int]:
        """(answered well, failed, not reached) so far."""
        ok = sum(1 for r in batch.results.values() if "body" in r)
        failed = len(batch.results) - ok
        return ok, failed, len(batch.requests) - len(batch.results)


class LoopbackOpenAIBatches(BatchControls, LoopbackOpenAI):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._init_batches()
        self.files: dict[str, bytes] = {}

    def serve_other(self, http: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        route = record.route
        if http.command == "POST" and route == "/v1/files":
            self._send_json(http, 200, self._upload(record))
        elif http.command == "POST" and route == "/v1/batches":
            if self.refused(http):
                return
            lines = self.files[record.body["input_file_id"]].decode().splitlines()
            entries = [json.loads(line) for line in lines if line.strip()]
            batch = self._new_batch("batch_", [(e["custom_id"], e["body"]) for e in entries])
            self._send_json(http, 200, self._batch_object(batch))
        elif http.command == "GET" and route.startswith("/v1/batches/"):
            batch = self.batches.get(route.rsplit("/", 1)[1])
            if batch is None:
                self._send_json(http, 404, self.render_error(404, "no such batch"))
            else:
                self._send_json(http, 200, self._batch_object(batch))
        elif (
            http.command == "GET" and route.startswith("/v1/files/") and route.endswith("/content")
        ):
            data = self.files.get(route.split("/")[3])
            if data is None:
                self._send_json(http, 404, self.render_error(404, "no such file"))
            else:
                self._send_raw(http, 200, data, content_type="application/octet-stream")
        else:
            super().serve_other(http, record)

    def _upload(self, record: RecordedRequest) -> dict[str, Any]:
        head = f"Content-Type: {record.headers['content-type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + record.raw)
        data = b""
        for part in message.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True)
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": "input.jsonl",
            "purpose": "batch",
            "status": "processed",
        }

    def _batch_object(self, batch: LoopbackBatch) -> dict[str, Any]:
        ok, failed, _ = self.counts(batch)
        output_id = error_id = None
        if batch.status == "ended":
            out = [
                {
                    "id": f"r{n}",
                    "custom_id": cid,
                    "response": {"status_code": 200, "body": r["body"]},
                    "error": None,
                }
                for n, (cid, r) in enumerate(batch.results.items())
                if "body" in r
            ]
            bad = [
                {
                    "id": f"e{n}",
                    "custom_id": cid,
                    "response": {"status_code": 500, "body": {"error": {"message": r["error"]}}},
                    "error": None,
                }
                for n, (cid, r) in enumerate(batch.results.items())
                if "error" in r
            ]
            for lines, kind in ((out, "output"), (bad, "error")):
                if lines:
                    file_id = f"file-{batch.batch_id}-{kind}"
                    self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                    if kind == "output":
                        output_id = file_id
                    else:
                        error_id = file_id
        status = "in_progress"
        if batch.status == "ended":
            status = "expired" if batch.expired else "completed"
        return {
            "id": batch.batch_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": "file-in",
            "completion_window": "24h",
            "status": status,
            "created_at": int(batch.created_at),
            "expires_at": int(batch.created_at) + 86400,
            "output_file_id": output_id,
            "error_file_id": error_id,
            "request_counts": {"total": len(batch.requests), "completed": ok, "failed": failed},
        }


class LoopbackAnthropicBatches(BatchControls, LoopbackAnthropic):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._init_batches()

    def serve_other(self, http: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        route = record.route
        parts = route.split("/")  # ["", "v1", "messages", "batches", id, ("results")]
        if http.command == "POST" and route == "/v1/messages/batches":
            if self.refused(http):
                return
            requests = [(r["custom_id"], r["params"]) for r in record.body["requests"]]
            self._send_json(http, 200, self._batch_object(self._new_batch("msgbatch_", requests)))
        elif http.command == "GET" and route.startswith("/v1/messages/batches/"):
            batch = self.batches.get(parts[4])
            if batch is None:
                self._send_json(http, 404, self.render_error(404, "no such batch"))
            elif len(parts) == 6 and parts[5] == "results":
                lines = "".join(json.dumps(x) + "\n" for x in self._results(batch))
                self._send_raw(http, 200, lines.encode(), content_type="application/x-jsonl")
            else:
                self._send_json(http, 200, self._batch_object(batch))
        else:
            super().serve_other(http, record)

    def _results(self, batch: LoopbackBatch) -> list[dict[str, Any]]:
        out = []
        for custom_id, _ in batch.requests:
            r = batch.results.get(custom_id)
            if r is None:
                result: dict[str, Any] = {"type": "expired"}
            elif "error" in r:
                error = {"type": "api_error", "message": r["error"]}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": "succeeded", "message": r["body"]}
            out.append({"custom_id": custom_id, "result": result})
        return out

    def _batch_object(self, batch: LoopbackBatch) -> dict[str, Any]:
        ok, failed, missing = self.counts(batch)
        ended = batch.status == "ended"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created_at))
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created_at + 86400))
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else missing,
                "succeeded": ok,
                "errored": failed,
                "canceled": 0,
                "expired": missing if ended else 0,
            },
            "created_at": stamp,
            "expires_at": expires,
            "ended_at": stamp if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": (
                f"{self.root_url}/v1/messages/batches/{batch.batch_id}/results" if ended else None
            ),
        }
