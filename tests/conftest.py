"""Suite-wide settings. The record of agent sessions we start goes to a temporary state
directory, never to the user's ~/.local/state (core.models.agents.process).

Hypothesis gets a "ci" profile for loaded machines (CI runners, `make test` on a busy
laptop): no deadline, no `too_slow` health check (generation speed is not what these
tests check) and derandomized, so a failure reproduces on the next run. Loaded when CI
is set (Hypothesis also detects CI itself; ours replaces its built-in "ci" profile) or
with `--hypothesis-profile=ci`, which `make test` passes. Derandomized also means no
example database, so parallel workers never share one.

Parallel runs. `make test` runs the suite on pytest-xdist workers, one per core
(`-n auto --dist loadgroup`): separate processes, each with its own tmp_path tree,
environment, working directory and `monkeypatch`. A test that uses tmp_path, port 0,
a private HOME and private tmux socket (tests/support/tmux.py names it by pid) needs
nothing more. The embedded model is one llama.cpp server for the whole session, shared by
every worker: an `embedded` test gets SKILLOPT_EMBEDDED_URL pointing at it, and so does
every `skillopt` it runs (tests/support/embedded_session.py starts and stops it). A test
of the server's own start and stop takes `@pytest.mark.embedded(own_server=True)` and
starts its own. What else workers could share is grouped here, so each group runs on one
worker, one test after another:

- every test of a module that uses a module- or class-scoped fixture of ours (built once,
  not once per worker; the snapshot worlds at fixed /tmp paths also take a FileLock);
- a package- or session-scoped fixture of ours groups all its users under its name.

A new test that shares anything else across processes (a fixed path or port, a file in
the repository, a global service) takes `@pytest.mark.xdist_group("<resource>")`, the
same name on every test sharing it. Better still: give it its own copy under tmp_path.
Tests never write into the repository tree (default `runs/` is relative to the working
directory: pass `run.runs_dir` or a cache path under tmp_path)."""

from __future__ import annotations

import gc
import os

import pytest
from hypothesis import HealthCheck, settings

from core.models.local_server import ATTACH_ENV
from tests.support import embedded_session

settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    print_blob=True,
)
if os.environ.get("CI"):
    settings.load_profile("ci")


# The cyclic garbage collector, tuned for a test process (issue 36). A worker holds every
# imported module and every collected test, and Python's default thresholds (700, 10, 10)
# ran a full collection over all of them every few hundred thousand allocations: a quarter
# of a Textual test's CPU (two TUI files with the whole suite collected, as on an xdist
# worker: 5.2 s of the process's 18.0 s went to the collector, 1.8 s with these).
# A collection now starts after 10,000 new objects instead of 700. Garbage is still
# collected, only later, so what a test proves is unchanged; a test that needs something
# gone at once calls gc.collect(), as it always had to. Set before the test modules are
# imported: collecting them is cheaper too.
GC_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*GC_THRESHOLDS)


def shared_resource_group(item: pytest.Item) -> str | None:
    """The xdist group `item` must run in, or None when it can go to any worker."""
    info = getattr(item, "_fixtureinfo", None)
    for name in sorted(info.name2fixturedefs if info else ()):
        fixturedef = info.name2fixturedefs[name][-1]
        if not fixturedef.baseid.startswith("tests"):
            continue  # pytest's and plugins' own (tmp_path_factory, event loops)
        if fixturedef.scope in ("module", "class"):
            return item.nodeid.split("::", 1)[0]
        if fixturedef.scope in ("package", "session"):
            return f"{fixturedef.baseid}::{name}"
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (its own hook, on workers)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = shared_resource_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path_factory.mktemp("skillopt-state")))


def uses_session_server(item: pytest.Item) -> bool:
    mark = item.get_closest_marker("embedded")
    return mark is not None and not mark.kwargs.get("own_server", False)


@pytest.fixture(autouse=True)
def _session_embedded_server(request, tmp_path_factory, monkeypatch):
    """An `embedded` test, and every run it starts, talks to the session's one server."""
    if not uses_session_server(request.node):
        monkeypatch.delenv(ATTACH_ENV, raising=False)
        return
    folder = embedded_session.session_folder(tmp_path_factory.getbasetemp())
    url = embedded_session.server_url(folder, embedded_session.session_owner())
    monkeypatch.setenv(ATTACH_ENV, url)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The session's owner (the xdist controller, or pytest without workers) stops the
    shared embedded server; workers leave it to the owner."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    embedded_session.stop_server(config._tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    line = embedded_session.cpu_line(config._tmp_path_factory.getbasetemp())
    if line is not None:
        terminalreporter.write_line(line)
