"""Model calls that can wait, answered through a provider's batch API at its discount.

How a phase goes through it (core/training/batch_phase.py drives the rounds): inside a
batch phase (BATCH_PHASE set) a target call with no answer yet is put in the queue and
raises BatchPending, which the rollout runner collects like a handoff prompt, so every item
of the phase puts its call in before the phase gives up. The queue then submits them as one
batch, saves the batch id (before anything waits on it), waits or stops, and stores the
answers; the phase is run again and each call now finds its answer. A conversation of
several turns takes one round per turn.

Why everything is kept in the run directory (`batches/`): a process killed while a batch
is pending must not submit it again. The batch record names every request it holds (the
`custom_id`, a hash of the request as the response cache keys it), so the re-run phase
finds its requests already submitted and only waits. Answers are written there when the
batch ends, and the batch is billed then, all its answers at the batch price, once
(`billed.txt`), also across processes.

A request the batch did not answer (an error inside the batch, a cancelled or expired
batch) goes out again as an ordinary interactive call, at the full price, under the role's
retry policy: scored as a model error it would lower the baseline or a test score for a
reason that has nothing to do with the skill, and an error that is the request's own
(a bad parameter) fails the interactive call too, and stops the run as it would without
batches.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core import exit_codes
from core.atomic import write_json, write_text
from core.models.batch_api import BatchAnswer, BatchProgress, BatchProvider, ready_estimate
from core.models.handoff import HandoffWaiting
from core.models.ledger import UsageLedger, stage
from core.models.response_cache import request_key
from core.models.types import (
    Completion,
    ModelError,
    ModelUnavailable,
    Request,
    TransientError,
    Usage,
)
from core.secrets import redact
from core.words import counted

# Set (to the phase's name) while a phase whose calls can wait runs: the baseline val and
# the test evaluations. Tasks the phase starts inherit it; everything else is interactive.
BATCH_PHASE: contextvars.ContextVar[str] = contextvars.ContextVar("skillopt_batch", default="")
CUSTOM_ID_CHARS = 40  # Anthropic allows 64 of [A-Za-z0-9_-]; a hex hash prefix fits both
MAX_POLL_S = 600.0


class BatchPending(HandoffWaiting):
    """This call's answer will come from a batch: the phase is run again once it has."""


class BatchWaiting(ModelError):
    """A batch is still running and the run was told not to wait: it stops resumably."""

    exit_code = exit_codes.STOPPED


@dataclass
class BatchRecord:
    batch_id: str
    provider: str
    requests: dict[str, str]  # custom_id -> the phase that asked (its ledger stage)
    submitted_at: float
    ended: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def custom_id_of(request: Request, endpoint: str, scope: str) -> str:
    return request_key(request, endpoint, scope)[:CUSTOM_ID_CHARS]


class BatchQueue:
    """The batch requests of one run, kept in `folder`. `provider` is the batch API of the
    target role's backend."""

    def __init__(
        self,
        folder: str | Path,
        provider: BatchProvider,
        ledger: UsageLedger,
        model: str,
        role: str = "target",
    ):
        self.folder = Path(folder)
        self.provider = provider
        self.ledger = ledger
        self.model = model
        self.role = role
        self._pending: dict[str, tuple[str, Request]] = {}  # custom_id -> (phase, request)
        self._settling = asyncio.Lock()  # phases side by side settle one at a time
        self._answers: dict[str, BatchAnswer] = {}
        self._records = self._read_records()
        for record in self._records:
            if record.ended:
                self._answers.update(self._read_answers(record.batch_id))
        billed = self.folder / "billed.txt"
        self._billed = set(billed.read_text().split()) if billed.is_file() else set()

    # ------------------------------------------------------------------ files
    @property
    def _records_path(self) -> Path:
        return self.folder / "batches.json"

    def _read_records(self) -> list[BatchRecord]:
        try:
            data = json.loads(self._records_path.read_text(encoding="utf-8"))
            return [BatchRecord(**entry) for entry in data.get("batches", [])]
        except FileNotFoundError:
            return []
        except (ValueError, TypeError, AttributeError, UnicodeDecodeError) as exc:
            raise ModelError(
                f"{self._records_path} is unreadable ({type(exc).__name__}); it names the "
                "batches this run submitted: restore it, or delete the batches folder to "
                "submit them again (and pay for them again)"
            ) from None

    def _write_records(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self._records_path, {"batches": [r.to_dict() for r in self._records]})

    def _answers_path(self, batch_id: str) -> Path:
        return self.folder / f"{batch_id}.answers.jsonl"

    def _read_answers(self, batch_id: str) -> dict[str, BatchAnswer]:
        out: dict[str, BatchAnswer] = {}
        path = self._answers_path(batch_id)
        if not path.is_file():
            return out
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            completion = None
            if entry.get("text") is not None:
                completion = Completion(
                    text=entry["text"],
                    usage=Usage(entry["input_tokens"], entry["output_tokens"]),
                    finish_reason=entry["finish_reason"],
                    latency_s=0.0,
                    model=entry["model"],
                )
            out[entry["custom_id"]] = BatchAnswer(completion, entry.get("error", ""))
        return out

    def _write_answers(self, batch_id: str, answers: dict[str, BatchAnswer]) -> None:
        lines = []
        for custom_id, answer in answers.items():
            entry: dict[str, Any] = {"custom_id": custom_id}
            c = answer.completion
            if c is None:
                entry["error"] = answer.error
            else:
                entry.update(
                    text=redact(c.text),  # a model may echo a key it saw: never on disk
                    input_tokens=c.usage.input_tokens,
                    output_tokens=c.usage.output_tokens,
                    finish_reason=c.finish_reason,
                    model=c.model,
                )
            lines.append(json.dumps(entry, ensure_ascii=False))
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_lines(self._answers_path(batch_id), lines)

    def _bill(self, record: BatchRecord, answers: dict[str, BatchAnswer]) -> None:
        """Put every answer of an ended batch in the ledger, at the batch price, once: the
        provider bills them all, whether or not the run ends up using each (a request the
        critical path asked too is answered from the response cache first)."""
        if record.batch_id in self._billed:
            return
        for custom_id, answer in answers.items():
            c = answer.completion
            if c is None or custom_id not in record.requests:
                continue
            with stage(record.requests[custom_id]):
                self.ledger.record(
                    self.role, self.model, c.usage, False, served_model=c.model, batch=True
                )
        self._billed.add(record.batch_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / "billed.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{record.batch_id}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ the call
    def answer(self, role: str, request: Request, endpoint: str, scope: str) -> Completion | None:
        """The batch's answer to this call; None when it is to be made interactively (not
        a batch phase, another role, or the batch did not answer it). Raises BatchPending
        when the answer is still to come."""
        if not BATCH_PHASE.get() or role != self.role:
            return None
        custom_id = custom_id_of(request, endpoint, scope)
        got = self._answers.get(custom_id)
        if got is not None:
            if got.completion is None:
                return None  # failed inside the batch: asked again interactively
            return replace(got.completion, batched=True)  # billed when the batch ended
        if not self._submitted(custom_id):
            self._pending[custom_id] = (BATCH_PHASE.get(), request)
        raise BatchPending(f"the answer to this {BATCH_PHASE.get()} call comes from a batch")

    def _submitted(self, custom_id: str) -> bool:
        return any(custom_id in r.requests for r in self._records if not r.ended)

    @property
    def open_batches(self) -> list[BatchRecord]:
        return [r for r in self._records if not r.ended]

    # ------------------------------------------------------------------ a round
    async def settle(
        self,
        *,
        wait: bool,
        poll_s: float,
        say: Callable[[str], None],
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        """Submit what this round put in the queue (one batch), then bring every open batch
        to its end: wait for it (polling every `poll_s`, doubling up to MAX_POLL_S), or,
        with `wait` False, raise BatchWaiting for the first that has not ended. Phases
        running side by side (the baseline beside the initial skill's test) share the
        batch of whichever settles first."""
        async with self._settling:
            await self._settle(wait=wait, poll_s=poll_s, say=say, sleep=sleep)

    async def _settle(
        self,
        *,
        wait: bool,
        poll_s: float,
        say: Callable[[str], None],
        sleep: Callable[[float], Any],
    ) -> None:
        if not self._pending and not self.open_batches:
            raise ModelError(
                "a call waits for a batch that was never submitted (a defect); "
                "set run.batch to off and rerun the same command"
            )
        if self._pending:
            pending, self._pending = self._pending, {}
            requests = {custom_id: request for custom_id, (_, request) in pending.items()}
            try:
                batch_id = await self.provider.submit(requests)
            except TransientError as exc:  # nothing saved: the re-run submits them anew
                self._pending.update(pending)
                raise ModelUnavailable(
                    f"the {self.provider.provider} batch of {counted(len(requests), 'request')} "
                    f"could not be submitted ({exc}); the run is resumable: rerun the same "
                    "command once the provider answers"
                ) from exc
            self._records.append(
                BatchRecord(
                    batch_id=batch_id,
                    provider=self.provider.provider,
                    requests={custom_id: phase for custom_id, (phase, _) in pending.items()},
                    submitted_at=time.time(),
                )
            )
            self._write_records()  # before anything waits: a kill now re-submits nothing
            say(
                f"batch {batch_id} submitted ({counted(len(requests), 'request')}, "
                f"{self.provider.provider})"
            )
        for record in self.open_batches:
            await self._bring_to_end(record, wait=wait, poll_s=poll_s, say=say, sleep=sleep)

    async def _bring_to_end(
        self,
        record: BatchRecord,
        *,
        wait: bool,
        poll_s: float,
        say: Callable[[str], None],
        sleep: Callable[[float], Any],
    ) -> None:
        interval, shown = poll_s, None
        while True:
            try:
                progress = await self.provider.progress(record.batch_id)
                if progress.ended:
                    answers = await self.provider.answers(record.batch_id)
                    break
                line = progress_words(progress)
                if not wait:
                    raise BatchWaiting(waiting_words(record, progress))
            except TransientError as exc:  # the provider did not answer this look: next one
                line = f"batch {record.batch_id}: no status this time ({exc})"
                if not wait:
                    raise BatchWaiting(f"{line}; re-run the same command to look again") from exc
            else:
                line += f"; ready {ready_estimate(progress, record.submitted_at)}"
            if line != shown:
                say(line)
                shown = line
            await sleep(interval)
            interval = min(interval * 2, max(poll_s, MAX_POLL_S))
        for custom_id in record.requests:  # expired or cancelled before it was reached
            answers.setdefault(custom_id, BatchAnswer(None, f"not answered ({progress.status})"))
        self._write_answers(record.batch_id, answers)
        self._bill(record, answers)
        self._answers.update(answers)
        record.ended = True
        self._write_records()
        failed = sum(1 for a in answers.values() if a.completion is None)
        retried = (
            f"; {counted(failed, 'request')} without an answer (failed or not reached) "
            "will be asked interactively"
            if failed
            else ""
        )
        good = len(answers) - failed
        say(f"batch {record.batch_id} {progress.status}: {counted(good, 'answer')}{retried}")


def progress_words(progress: BatchProgress) -> str:
    return (
        f"batch {progress.batch_id} {progress.status}: "
        f"{progress.answered}/{progress.total} answered"
    )


def waiting_words(record: BatchRecord, progress: BatchProgress) -> str:
    phases = " and ".join(sorted(set(record.requests.values())))
    return (
        f"{progress_words(progress)} (the {phases} of this run, "
        f"{counted(len(record.requests), 'request')}); ready "
        f"{ready_estimate(progress, record.submitted_at)}. Nothing is lost: re-run the same "
        "command to pick the batch up (it is not submitted again)"
    )


def write_json_lines(path: Path, lines: list[str]) -> None:
    write_text(path, "".join(f"{line}\n" for line in lines))
