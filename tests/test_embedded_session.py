"""The test session's one embedded server (tests/support/embedded_session.py), in a
session folder of its own: workers racing for it start one, a server found dead is
started again, and it never outlives the session that owns it (the owner is a stand-in
process here, killed as a crashed or interrupted pytest would be)."""

from __future__ import annotations

import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support import embedded_session

pytestmark = pytest.mark.embedded(own_server=True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=5) as ok:
            return ok.status == 200
    except OSError:
        return False


def _gone(folder: Path, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while (folder / embedded_session.URL_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not (folder / embedded_session.URL_FILE).exists()


def test_racing_workers_start_one_server_and_the_owner_stops_it(tmp_path, monkeypatch):
    starts = []
    start = embedded_session._start
    monkeypatch.setattr(embedded_session, "_start", lambda *a: starts.append(a) or start(*a))
    urls: list[str] = []
    owner = subprocess.Popen(["sleep", "300"])  # stands for the session's pytest process
    try:
        racers = [
            threading.Thread(
                target=lambda: urls.append(embedded_session.server_url(tmp_path, owner.pid))
            )
            for _ in range(3)
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(timeout=300)
        assert len(starts) == 1 and len(urls) == 3 and len(set(urls)) == 1
        assert _answers(urls[0])
        embedded_session.stop_server(tmp_path)
        assert not (tmp_path / embedded_session.URL_FILE).exists()
        assert not _answers(urls[0])
        assert "s user" in (embedded_session.cpu_line(tmp_path) or "")
    finally:
        owner.kill()
        owner.wait()


def test_a_dead_server_is_started_again_and_none_outlives_its_owner(tmp_path):
    owner = subprocess.Popen(["sleep", "300"])
    try:
        first = embedded_session.server_url(tmp_path, owner.pid)
        _, pid = embedded_session._read(tmp_path)
        subprocess.run(["kill", "-9", str(pid)], check=True)  # leaves its url file behind
        deadline = time.monotonic() + 30
        while _answers(first) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = embedded_session.server_url(tmp_path, owner.pid)
        assert _answers(second) and embedded_session._read(tmp_path)[1] != pid
    finally:
        owner.kill()  # a session killed without its end hooks
        owner.wait()
    assert _gone(tmp_path), "the server outlived its owner"
    assert not _answers(second)
