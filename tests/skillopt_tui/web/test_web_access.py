"""Who reaches `skillopt tui --web`: a real server process, real HTTP. Without the token
nothing is served (401, not the page, not its scripts, not the websocket); the token is
traded for a cookie and dropped from the address; it never reaches the log; a foreign
Host or websocket Origin is refused; a non-loopback --host needs --allow-remote. The
token's redirect stays on this server; --token-file reads a small regular file only; a
request aiohttp cannot parse is a quiet 400; sessions are capped; kill -9 leaves no
temp files."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
from pathlib import Path

import httpx
import pytest

from tests.support.tui_app import RUNS, make_skills_repo
from tests.support.web_face import skillopt, skillopt_env, start_server, wait_for

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("textual_serve") is None,
    reason="textual-serve not installed (pip install -e '.[web]')",
)
aiohttp = pytest.importorskip("aiohttp", reason="the `web` extra is not installed here")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    where = tmp_path_factory.mktemp("web-access")
    make_skills_repo(where / "skills")
    server = start_server(where, "--runs-dir", str(RUNS), "--skills-repo", str(where / "skills"))
    yield server
    server.stop()


def _get(server, path: str, **kwargs) -> httpx.Response:
    return httpx.get(server.base + path, follow_redirects=False, timeout=30, **kwargs)


@pytest.mark.parametrize("path", ["/", "/ws", "/static/js/textual.js", "/static/", "/download/x"])
def test_no_token_is_401_and_nothing_served(server, path):
    response = _get(server, path)
    assert response.status_code == 401
    assert "textual" not in response.text.lower()  # no page, no script, no listing


def test_a_wrong_token_or_cookie_is_401(server):
    assert _get(server, "/?token=" + "x" * 43).status_code == 401
    assert _get(server, "/?token=" + server.token[:-1]).status_code == 401
    cookies = {f"skillopt-web-{server.base.rsplit(':', 1)[1]}": server.token}  # not its value
    assert _get(server, "/", cookies=cookies).status_code == 401


def test_the_token_becomes_a_cookie_and_leaves_the_address(server):
    first = _get(server, f"/?token={server.token}&fontsize=14")
    assert first.status_code == 303
    assert first.headers["location"] == "/?fontsize=14"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert server.token not in cookie  # a value derived from it
    page = _get(server, "/?fontsize=14", cookies=first.cookies)
    assert page.status_code == 200
    assert 'data-session-websocket-url="ws://127.0.0.1:' in page.text
    assert _get(server, "/static/js/textual.js", cookies=first.cookies).status_code == 200


def test_the_token_is_printed_once_and_never_logged(server):
    _get(server, f"/?token={server.token}")
    _get(server, f"/static/css/xterm.css?token={server.token}")
    _get(server, "/?token=wrong-token-wrong-token")
    printed = server.output()
    assert printed.count(server.token) == 1  # the URL at start, nothing since
    assert "GET / 303" in printed  # the access log is on, without query strings
    assert "wrong-token" not in printed


def test_a_foreign_host_or_websocket_origin_is_refused(server):
    good = _get(server, f"/?token={server.token}").cookies
    # DNS rebinding: a page on evil.example that resolves to 127.0.0.1
    assert _get(server, "/", cookies=good, headers={"Host": "evil.example"}).status_code == 403
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
    upgrade["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    foreign = _get(
        server, "/ws", cookies=good, headers={**upgrade, "Origin": "http://evil.example"}
    )
    assert foreign.status_code == 403
    assert _get(server, "/ws", headers=upgrade).status_code == 401


def test_a_non_loopback_host_needs_allow_remote(tmp_path):
    result = skillopt("tui", "--web", "--host", "0.0.0.0", "--runs-dir", str(RUNS))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--allow-remote" in lines[0], result.stderr
    assert result.stdout == ""


def test_allow_remote_serves_another_address(tmp_path):
    server = start_server(tmp_path, "--host", "0.0.0.0", "--allow-remote", "--runs-dir", str(RUNS))
    try:
        assert server.base.startswith("http://0.0.0.0:")
        port = server.base.rsplit(":", 1)[1]
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code == 401
    finally:
        server.stop()


def test_token_file_sets_the_token_and_a_bad_one_is_one_line(tmp_path):
    short = tmp_path / "short"
    short.write_text("abc\n")
    result = skillopt("tui", "--web", "--token-file", str(short), "--runs-dir", str(RUNS))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "at least 16" in result.stderr
    missing = skillopt("tui", "--web", "--token-file", str(tmp_path / "nope"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1

    good = tmp_path / "token"
    good.write_text("a-token-of-my-own-choosing-1234\n")
    server = start_server(tmp_path, "--token-file", str(good), "--runs-dir", str(RUNS))
    try:
        assert server.token == "a-token-of-my-own-choosing-1234"
        assert _get(server, f"/?token={server.token}").status_code == 303
    finally:
        server.stop()


def test_web_options_without_web_are_one_line(tmp_path):
    result = skillopt("tui", "--port", "9000", "--runs-dir", str(RUNS))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--web" in result.stderr


def test_without_the_web_extra_it_says_what_to_install(tmp_path):
    """textual-serve made unimportable (a shadowing package that fails as a missing one)."""
    shadow = tmp_path / "shadow" / "textual_serve"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'textual_serve'\", name='textual_serve')\n"
    )
    env = skillopt_env()
    env["PYTHONPATH"] = f"{shadow.parent}:{env['PYTHONPATH']}"
    result = skillopt("tui", "--web", "--runs-dir", str(RUNS), env=env)
    assert result.returncode == 2
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip()]
        and "pip install -e " in result.stderr and "[web]'" in result.stderr
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_what_counts_as_loopback(host, loopback):
    from skillopt_tui.web.access import is_loopback

    assert is_loopback(host) is loopback


def _one_line_refusal(tmp_path, token_file, says: str) -> None:
    result = skillopt(
        "tui", "--web", "--token-file", str(token_file), "--runs-dir", str(RUNS), timeout=30
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"skillopt: error: --token-file {token_file}")
    assert says in lines[0]
    assert result.stdout == ""  # no server started, no URL printed


def test_a_token_file_that_is_not_a_small_regular_file_is_one_line(tmp_path):
    # A FIFO with no writer (open would wait for one), a directory, devices.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _one_line_refusal(tmp_path, fifo, "not a regular file")
    _one_line_refusal(tmp_path, tmp_path, "not a regular file")
    _one_line_refusal(tmp_path, Path("/dev/null"), "not a regular file")
    _one_line_refusal(tmp_path, Path("/dev/zero"), "not a regular file")  # endless


def test_a_huge_token_file_is_refused_though_its_first_line_is_a_token(tmp_path):
    big = tmp_path / "big"
    with big.open("wb") as sink:  # 200 MB, sparse: a good first line, then a hole
        sink.write(b"a-token-of-my-own-choosing-1234\n")
        sink.truncate(200 * 1024 * 1024)
    _one_line_refusal(tmp_path, big, "more than a token file holds")


def test_the_token_redirect_stays_on_this_server(server):
    # `//evil.example/` in a Location header is another site's address to a browser
    for path, local in [
        ("//evil.example/", "/evil.example/"),
        ("/\\evil.example/", "/evil.example/"),
        ("///evil.example/x?fontsize=12", "/evil.example/x?fontsize=12"),
    ]:
        response = _get(server, f"{path}{'&' if '?' in path else '?'}token={server.token}")
        assert response.status_code == 303
        assert response.headers["location"] == local


def test_a_request_aiohttp_cannot_parse_is_a_quiet_400(server):
    with socket.create_connection(("127.0.0.1", int(server.base.rsplit(":", 1)[1]))) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = conn.recv(4096)
    assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400")
    wait_for(lambda: " 400" in server.output(), "the access log shows the 400")
    assert "Traceback" not in server.output()


def test_sessions_are_capped_with_a_page_that_says_so(tmp_path):
    server = start_server(tmp_path, "--runs-dir", str(RUNS), "--max-sessions", "1")
    try:
        cookies = _get(server, f"/?token={server.token}").cookies
        port = server.base.rsplit(":", 1)[1]

        async def sessions() -> None:
            async with aiohttp.ClientSession(cookies=dict(cookies)) as client:
                ws = await client.ws_connect(f"ws://127.0.0.1:{port}/ws")  # session 1 of 1
                full = await client.get(f"{server.base}/")
                assert full.status == 503
                assert "already serves 1 browser session" in await full.text()
                assert "--max-sessions" in await full.text()
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await client.ws_connect(f"ws://127.0.0.1:{port}/ws")
                assert refused.value.status == 503
                await ws.close()

        asyncio.run(sessions())
        # the session left: the page is served again
        wait_for(lambda: _get(server, "/", cookies=cookies).status_code == 200, "a free seat")
    finally:
        server.stop()
    bad = skillopt("tui", "--web", "--max-sessions", "0", "--runs-dir", str(RUNS))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_kill_9_of_the_server_leaves_nothing_in_the_temp_dir(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    server = start_server(tmp_path, "--runs-dir", str(RUNS), env=skillopt_env(TMPDIR=str(temp)))
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    assert [p.name for p in temp.iterdir() if p.name.startswith("skillopt-web-")] == []
