"""`ModelClient`: the one door every role's model calls go through.

Order of a call: merge settings → response cache → budget check → concurrency slot →
backend (with the retry policy and a per-call timeout) → ledger → cache → `on_usage`.
Backends only translate requests; everything that must behave the same for every model
(caching, budget, retries, limits) lives here. A long call streams (the role's `stream`
mode, core/models/streaming.py): then its timeout is the backend's idle timeout between
chunks instead of a deadline for the whole reply, and everything else stays the same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from core.models.ledger import LedgerSnapshot, UsageLedger
from core.models.response_cache import ResponseCache, canonical_json, request_key
from core.models.retry import RetryPolicy
from core.models.slots import Slots
from core.models.streaming import StreamMode, wants_stream
from core.models.structured import Sent
from core.models.structured import apply as apply_structured
from core.models.types import (
    AbandonedCall,
    AgentOutcome,
    AgentTask,
    Backend,
    BadRequestError,
    BudgetExceeded,
    Completion,
    ImpossibleUsage,
    Message,
    ModelError,
    Request,
    StreamingBackend,
    TransientError,
    Usage,
)
from core.secrets import redact

if TYPE_CHECKING:
    from core.models.batch_queue import BatchQueue

UsageCallback = Callable[[LedgerSnapshot], None]
NoticeCallback = Callable[[str], None]
# Where one agent attempt runs: (backend, task, skill_text, timeout_s) -> its outcome.
AgentRunner = Callable[[Any, AgentTask, str, float], Awaitable[AgentOutcome]]
# Backends that speak an HTTP API: an empty reply from them is an anomaly. The embedded
# model's template may legitimately stop at once (an empty answer is its answer).
HTTP_API_KINDS = frozenset({"openai", "azure", "anthropic"})


@dataclass
class RoleRuntime:
    """Everything resolved for one role. `error` is a configuration problem (missing key,
    missing model name) raised on the role's first call, so unused roles never block a run."""

    role: str
    kind: str  # "openai" | "azure" | "anthropic" | "local" | "scripted"
    model: str
    backend: Backend | None
    endpoint: str = ""  # cache identity of the server (no secrets, no random ports)
    settings: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 60.0
    # The factory sets never for backends that cannot stream.
    stream: StreamMode = "never"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache: bool = True
    concurrency: int = 4
    # The server whose slots this role shares with the others on it ("" = a pool of its
    # own) and how many it has (0 = unknown): core/models/slots.py.
    server: str = ""
    server_slots: int = 0
    label: str = ""  # what describe() shows
    # What else decides a rollout's outcome (a coding agent's tools, skill placement, ...):
    # part of the rollout cache's target key when set.
    identity: dict[str, Any] = field(default_factory=dict)
    accepts_images: bool = True  # False: the backend is text-only (image parts are refused)
    # What of a reply's JSON schema is sent (core/models/structured.py), resolved.
    structured: Sent = "off"
    error: ModelError | None = None


class ModelClient:
    def __init__(
        self,
        roles: Mapping[str, RoleRuntime],
        *,
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
        notices: list[str] | None = None,
        on_usage: UsageCallback | None = None,
        on_notice: NoticeCallback | None = None,
    ):
        self._roles = dict(roles)
        self._slots = Slots(
            (name, rt.server, rt.concurrency, rt.server_slots) for name, rt in self._roles.items()
        )
        self.on_notice = on_notice
        self.ledger = ledger or UsageLedger()
        self.cache = cache
        self._in_flight: dict[str, asyncio.Future[None]] = {}  # response-cache key -> done
        self.notices = list(notices or [])
        self.on_usage = on_usage
        # Calls that can wait (the baseline, the tests) go through this when set
        # (core/models/batch_queue.py); None = every call is interactive.
        self.batches: BatchQueue | None = None

    # ------------------------------------------------------------------ introspection
    def runtime(self, role: str) -> RoleRuntime:
        try:
            return self._roles[role]
        except KeyError:
            raise BadRequestError(
                f"unknown model role {role!r} (configured: {', '.join(self._roles)})"
            ) from None

    def describe(self, role: str) -> str:
        rt = self.runtime(role)
        return rt.label or f"{rt.kind}:{rt.model}"

    def configuration_error(self, role: str) -> ModelError | None:
        """The role's configuration problem (unset key, missing model name) that its first
        call would raise, so a face can refuse before it creates anything."""
        return self.runtime(role).error

    def is_local(self, role: str) -> bool:
        return self.runtime(role).kind == "local"

    def settings_key(self, role: str) -> str:
        rt = self.runtime(role)
        key: dict[str, Any] = {
            "backend": rt.kind,
            "endpoint": rt.endpoint,
            "model": rt.model,
            "settings": rt.settings,
        }
        if rt.identity:
            key["identity"] = rt.identity
        return canonical_json(key)

    def bind(self, role: str, *, cache_scope: str = "") -> Callable[..., Any]:
        """`complete` for one role. `cache_scope` joins the response-cache key of every
        call (never the request): replicate runs with other seeds sample anew."""
        self.runtime(role)  # fail now on an unknown role

        async def complete(messages: list[Message], **settings: Any) -> Completion:
            if cache_scope:
                settings["cache_scope"] = cache_scope
            return await self.complete(messages, role=role, **settings)

        complete.__qualname__ = f"ModelClient.bind({role!r})"
        return complete

    def bind_agent(self, role: str) -> Callable[..., Awaitable[AgentOutcome]]:
        """`run_agent` bound to `role`: what an agent environment's rollout receives (the
        executor may add `runner=`, see `run_agent`)."""
        self.runtime(role)

        async def run_agent(task: AgentTask, skill_text: str, **where: Any) -> AgentOutcome:
            return await self.run_agent(task, skill_text, role=role, **where)

        run_agent.__qualname__ = f"ModelClient.bind_agent({role!r})"
        return run_agent

    # ------------------------------------------------------------------ the call
    async def complete(self, messages: list[Message], *, role: str, **settings: Any) -> Completion:
        """One completion for `role`. Settings override the role's config for this call
        (a value of None removes the setting); `timeout_s` overrides the call timeout (for
        a streamed call, the idle timeout between chunks) and `cache_scope` is added to the
        response-cache key (see `bind`)."""
        rt = self.runtime(role)
        if rt.error is not None:
            raise rt.error
        _check_messages(messages)
        if not rt.accepts_images and _has_image(messages):
            raise BadRequestError(
                f"models.{role} ({self.describe(role)}) is a text-only backend and this task "
                "sends images: use a multimodal model (e.g. backend openai with gpt-4.1-mini)"
            )
        timeout_s = float(settings.pop("timeout_s", None) or rt.timeout_s)
        cache_scope = str(settings.pop("cache_scope", None) or "")
        merged = dict(rt.settings)
        for key, value in settings.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = list(value) if isinstance(value, tuple) else value
        merged = apply_structured(merged, rt.structured, rt.kind)
        request = Request(backend=rt.kind, model=rt.model, messages=list(messages), settings=merged)

        cache = self.cache if rt.cache else None
        key = request_key(request, rt.endpoint, cache_scope) if cache is not None else ""
        while cache is not None:
            started = time.monotonic()
            try:
                hit = cache.get(key)
            except ModelError as exc:
                # A corrupt or unreadable cache file must not stop the run: the call
                # goes to the model uncached.
                self._disable_cache(cache, exc)
                cache = hit = None
            if hit is not None:
                self.ledger.record(role, rt.model, Usage(), cached=True)
                self._notify()
                return Completion(
                    text=hit.text,
                    usage=hit.usage,
                    finish_reason=hit.finish_reason,
                    latency_s=time.monotonic() - started,
                    model=hit.model,
                    cached=True,
                )
            # The same request already on its way (two phases that run side by side ask
            # the same question): wait for its answer to reach the cache instead of paying
            # for it twice, as running the phases one after the other would.
            other = self._in_flight.get(key)
            if cache is None or other is None or other.get_loop() is not asyncio.get_running_loop():
                break
            await asyncio.wait([other])

        if cache is not None:
            mine = self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            with self.ledger.reserve_call():  # held until the call is recorded
                return await self._send_and_record(rt, request, timeout_s, cache, key, cache_scope)
        finally:
            if cache is not None and self._in_flight.get(key) is mine:
                del self._in_flight[key]
                mine.set_result(None)

    async def _send_and_record(
        self,
        rt: RoleRuntime,
        request: Request,
        timeout_s: float,
        cache: ResponseCache | None,
        key: str,
        cache_scope: str = "",
    ) -> Completion:
        role = rt.role
        sent = [False]  # set once a request is in the provider's hands
        try:
            completion = None
            if self.batches is not None:
                completion = self.batches.answer(role, request, rt.endpoint, cache_scope)
            if completion is None:
                completion = await rt.retry.run(
                    lambda: self._send_once(rt, request, timeout_s, sent)
                )
        except asyncio.CancelledError:
            if sent[0]:  # e.g. the early gate decided: the provider still bills the call
                self.ledger.record(role, rt.model, estimated_usage(request), False, cancelled=True)
            raise
        except BudgetExceeded:
            raise
        except ModelError as exc:
            raise _with_context(exc, f"models.{role} ({self.describe(role)})") from exc
        # A model may echo a key it saw (in a prompt, a tool result): mask it before the
        # answer is used, so no cache, rollout, event or skill ever holds it.
        completion = _masked(completion)
        # Not: a backend's own replay (a handoff answer read again), or a batch's answer
        # (billed, all of them, when its batch ended: core/models/batch_queue.py).
        if not completion.cached and not completion.batched:
            self.ledger.record(
                role, rt.model, completion.usage, cached=False, served_model=completion.model
            )
        if cache is not None and self.cache is cache:  # not disabled meanwhile
            try:
                cache.put(key, request, completion)
            except ModelError as exc:
                # The answer is paid for and recorded: losing it to a cache problem would be
                # worse than not caching it.
                self._disable_cache(cache, exc)
        self._notify()
        return completion

    async def run_agent(
        self, task: AgentTask, skill_text: str, *, role: str, runner: AgentRunner | None = None
    ) -> AgentOutcome:
        """One coding-agent run for `role` (a backend that can run agents): budget check,
        concurrency slot, the retry policy (each attempt in a fresh workspace), ledger. Not
        response-cached: the rollout cache above keys whole outcomes. `runner(backend,
        task, skill_text, timeout_s)` runs each attempt elsewhere (a Ray worker: the call
        is reserved here before it is sent there); default: `backend.run_agent` here."""
        rt = self.runtime(role)
        if rt.error is not None:
            raise rt.error
        run = getattr(rt.backend, "run_agent", None)
        if run is None:
            raise BadRequestError(
                f"models.{role} uses the {rt.kind} backend, which cannot run a coding agent; "
                f"set models.{role}.backend to claude_code or codex"
            )

        async def once() -> AgentOutcome:
            async with self._slots.lane(rt.role):
                try:
                    async with asyncio.timeout(rt.timeout_s):
                        if runner is not None:
                            return await runner(rt.backend, task, skill_text, rt.timeout_s)
                        return await run(task, skill_text, timeout_s=rt.timeout_s)
                except TimeoutError:
                    raise TransientError(f"no answer within {rt.timeout_s:g}s") from None
                except ImpossibleUsage:
                    usage = Usage(input_tokens=len(task.prompt) // 4 + 1)
                    self.ledger.record(role, rt.model, usage, False, estimated=True)
                    raise

        with self.ledger.reserve_call():
            try:
                outcome = await rt.retry.run(once)
            except BudgetExceeded:
                raise
            except ModelError as exc:
                raise _with_context(exc, f"models.{role} ({self.describe(role)})") from exc
            self.ledger.record(role, rt.model, outcome.usage, cached=False)
            self._notify()
            return outcome

    def _disable_cache(self, cache: ResponseCache, exc: ModelError) -> None:
        """Turn caching off for the rest of this client's life, saying so once (calls in
        flight may fail on the same cache: the first one reports it)."""
        if self.cache is not cache:
            return
        self.cache = None
        notice = f"response cache disabled for this run: {exc}"
        self.notices.append(notice)
        if self.on_notice is not None:  # mid-run: the faces printed the start notices
            self.on_notice(notice)
        cache.close()

    async def _send_once(
        self, rt: RoleRuntime, request: Request, timeout_s: float, sent: list[bool]
    ) -> Completion:
        assert rt.backend is not None
        streamed = wants_stream(rt.stream, request.settings.get("max_tokens"))
        async with self._slots.lane(rt.role):
            sent[0] = True
            try:
                if streamed:  # the backend bounds each wait, not the whole reply
                    backend = cast(StreamingBackend, rt.backend)
                    completion = await backend.send_streamed(request, idle_timeout_s=timeout_s)
                else:
                    try:
                        async with asyncio.timeout(timeout_s):
                            completion = await rt.backend.send(request, timeout_s=timeout_s)
                    except TimeoutError:
                        raise AbandonedCall(f"no answer within {timeout_s:g}s") from None
            except ImpossibleUsage:
                usage = estimated_usage(request)
                self.ledger.record(rt.role, rt.model, usage, False, estimated=True)
                sent[0] = False
                raise
            except AbandonedCall:
                if rt.kind in HTTP_API_KINDS:  # a provider that bills (not our own model)
                    usage = estimated_usage(request)
                    self.ledger.record(rt.role, rt.model, usage, False, cancelled=True)
                sent[0] = False  # nothing in flight while the retry waits
                raise
            except ModelError:
                sent[0] = False  # refused (429, 5xx, ...): nothing in flight or billed
                raise
        if not completion.text and rt.kind in HTTP_API_KINDS:
            # `content: null` or no text block: the server misbehaved. Retried like any
            # transient failure and never cached; scored as an empty answer it would be
            # replayed by every later run without the server being asked again.
            raise TransientError(
                f"the reply had no text (finish_reason={completion.finish_reason!r}); "
                "a protocol anomaly, not an answer"
            )
        return completion

    def _notify(self) -> None:
        if self.on_usage is not None:
            self.on_usage(self.ledger.snapshot())

    # ------------------------------------------------------------------ lifecycle
    async def aclose(self) -> None:
        """Close HTTP clients, stop the embedded server if we started it, close the cache."""
        seen: set[int] = set()
        for rt in self._roles.values():
            if rt.backend is not None and id(rt.backend) not in seen:
                seen.add(id(rt.backend))
                await rt.backend.aclose()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("a model call needs a non-empty list of messages")
    for message in messages:
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise BadRequestError("each message must be a dict with 'role' and 'content'")


def estimated_usage(request: Request) -> Usage:
    """What a call cancelled in flight or abandoned (AbandonedCall) is counted at: its prompt at ~4 characters a token,
    and the whole `max_tokens` of output (an upper bound, so the cap errs on the safe side)."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    return Usage(
        input_tokens=chars // 4 + 1,
        output_tokens=int(request.settings.get("max_tokens") or 0),
    )


def _masked(completion: Completion) -> Completion:
    text = redact(completion.text)
    return completion if text == completion.text else replace(completion, text=text)


def _has_image(messages: list[Message]) -> bool:
    return any(
        isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_image")
        for m in messages
        if isinstance(m["content"], list)
        for part in m["content"]
    )


def _with_context(exc: ModelError, where: str) -> ModelError:
    """The same error type, its message prefixed with the role and model that made the call."""
    message = redact(f"{where}: {exc}")
    cls = type(exc) if not isinstance(exc, TransientError) else ModelError
    try:
        return cls(message)
    except TypeError:
        return ModelError(message)
