"""Every network setting the product has, given a malformed value: one line on stderr, exit
2, before anything is created (no run directory, no night, no server). The settings: each
model role's `base_url` (through `skillopt train` and through `skillopt sleep run`), the web
face's `--host` and `--port`, and `run.ray.address` (its table and the listeners that are
not Ray are in tests/core/training/test_executor_config.py). The MCP server speaks over
stdio only: it has no address to get wrong.

The config faces run in this process (tests/support/cli_in_process.py) for speed, one case
each in a real process; the web face always in a real one (a value it wrongly took would
start a server, which a timeout then ends)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.config import ROLES
from tests.skillopt_tui.cli.test_train_cmds import env_for, one_line_error, skillopt
from tests.support.cli_in_process import run_main
from tests.support.sleep_world import make_world
from tests.support.train_scenario import write_config
from tests.support.web_face import REPO
from tests.support.web_face import skillopt as web_skillopt

SECRET = "pw-secret-1234"
# value -> words the one line must hold
BASE_URLS = {
    "http://[::1/v1": "Invalid IPv6 URL",
    "http://127.0.0.1:99999/v1": "port out of range",
    "http://127.0.0.1:0/v1": "port 0",
    "http://127.0.0.1:8000/v1\nx": "control characters",
    "http://127.0.0.1:8000/v1 x": "spaces",
    "http://127.0.0.1:8000/v1\tx": "spaces",
    "http://127.0.0.1:8000/\u202ev1": "invisible marks",
    "http://my host/v1": "spaces",
    "http://999.0.0.1/v1": "not a host name or IP address",
    "http://-bad-/v1": "not a host name or IP address",
    "127.0.0.1:8000/v1": "is not an http(s) URL",
    "ftp://127.0.0.1/v1": "is not an http(s) URL",
    "http://": "is not an http(s) URL",
    f"http://user:{SECRET}@127.0.0.1:8000/v1": "must not carry credentials",
    f"http://user:{SECRET}@127.0.0.1:99999/v1": "port out of range",
    f"http://127.0.0.1:8000/v1?key={SECRET}": "must not carry credentials",
    "http://127.0.0.1:8000/v1#frag": "a fragment",
}
HOSTS = [
    "",
    "127.0.0.1 ",
    "127.0.0.1\nx",
    "[::1",
    "::1]",
    "999.0.0.1",
    "localhost:8765",
    "http://127.0.0.1",
    "\u202e127.0.0.1",
]
PORTS = ["-1", "65536", "abc", "8765x", ""]


def in_process(tmp_path: Path, *args: str, **env: str):
    return run_main(
        list(args), env=env_for(tmp_path, **env), cwd=REPO, argv0=str(Path(sys.executable))
    )


def _train_line(tmp_path: Path, role: str, url: str, run=in_process) -> str:
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "bad"
    result = run(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        str(out),
        "--set",
        f"models.{role}.base_url={url}",
    )
    assert result.returncode == 2, result.stderr
    assert not out.exists()
    assert SECRET not in result.stderr + result.stdout
    line = one_line_error(result)
    assert f"models.{role}.base_url" in line
    return line


@pytest.mark.parametrize("url", sorted(BASE_URLS))
def test_a_malformed_base_url_is_one_line_before_a_run_directory(tmp_path, url):
    assert BASE_URLS[url] in _train_line(tmp_path, "target", url)


@pytest.mark.parametrize("role", ROLES)
def test_every_role_s_base_url_is_checked(tmp_path, role):
    assert "port 0" in _train_line(tmp_path, role, "http://127.0.0.1:0/v1")


def test_a_malformed_base_url_in_a_real_process(tmp_path):
    line = _train_line(tmp_path, "judge", "http://127.0.0.1:8000/v1\nx", run=skillopt)
    assert "control characters" in line


@pytest.mark.parametrize(
    "url", ["http://[::1/v1", "http://127.0.0.1:0/v1", "http://127.0.0.1:8000/v1 x"]
)
def test_a_malformed_base_url_stops_a_night_before_it_starts(tmp_path, url):
    world = make_world(tmp_path / "w")
    before = sorted(p.relative_to(world.state) for p in world.state.rglob("*"))
    result = in_process(
        tmp_path,
        "sleep",
        "run",
        "--state-dir",
        str(world.state),
        "--set",
        f"models.judge.base_url={url}",
        HOME=str(world.home),
    )
    assert result.returncode == 2, result.stderr
    assert "models.judge.base_url" in one_line_error(result)
    assert sorted(p.relative_to(world.state) for p in world.state.rglob("*")) == before


def _web_refusal(tmp_path: Path, *args: str) -> str:
    runs = tmp_path / "runs"
    result = web_skillopt("tui", "--web", *args, "--runs-dir", str(runs), timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""  # no server, no URL
    assert not runs.exists()
    return one_line_error(result)


@pytest.mark.parametrize("host", HOSTS)
def test_a_malformed_web_host_is_one_line(tmp_path, host):
    # --allow-remote: the syntax is refused, not only the reach beyond loopback
    line = _web_refusal(tmp_path, "--host", host, "--allow-remote", "--port", "0")
    assert "--host" in line and "not a host name or IP address" in line


@pytest.mark.parametrize("port", PORTS)
def test_a_malformed_web_port_is_one_line(tmp_path, port):
    assert "--port" in _web_refusal(tmp_path, "--port", port)
