"""`run.executor` as input: without Ray, with an address that is no address, or one where no
Ray answers (nothing listens, or a server that is not Ray), `skillopt train` is one line
and exit 2 before a run directory exists; the estimate says where the rollouts run;
unknown keys under `run.ray` are refused. (The runs on a real cluster are in
test_ray_executor.py.)"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.config import ConfigError, config_from_dict
from core.install_hint import install_extra
from envs import PROJECT_ROOT
from tests.support.ray_cluster import free_ports
from tests.support.train_scenario import scenario_config, write_config

SKILLOPT = Path(sys.executable).parent / "skillopt"
HAS_RAY = importlib.util.find_spec("ray") is not None


def train(tmp_path: Path, *args: str, pythonpath: str = str(PROJECT_ROOT), env=None):
    config = write_config(tmp_path)
    return subprocess.run(
        [str(SKILLOPT), "train", "--config", str(config), "--out", str(tmp_path / "run"), *args],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": pythonpath, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_ray_the_ray_executor_is_one_line_naming_the_pip_line(tmp_path):
    # A module on PYTHONPATH that fails to import stands in for the uninstalled extra.
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "ray.py").write_text('raise ImportError("No module named ray")')
    done = train(tmp_path, "--set", "run.executor=ray", pythonpath=f"{hidden}:{PROJECT_ROOT}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "skillopt: error: run.executor: ray needs Ray, which is not installed: "
        + install_extra("ray")
    ]
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(not HAS_RAY, reason="the `ray` extra is not installed here")
def test_an_unreachable_address_is_one_line_before_the_run_directory_exists(tmp_path):
    port = free_ports(1)[0]  # nothing listens there
    done = train(
        tmp_path, "--set", "run.executor=ray", "--set", f"run.ray.address=ray://127.0.0.1:{port}"
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"skillopt: error: run.ray.address ray://127.0.0.1:{port}: nothing answers at "
        f"127.0.0.1:{port}"
    )
    assert "ray start --head" in lines[0]
    assert not (tmp_path / "run").exists()


MALFORMED_ADDRESSES = {
    "head-node": "it needs a host and a port",
    "ray://127.0.0.1:99999": "port out of range",
    "ray://[::1:10001": "Invalid IPv6 URL",
    "ray://127.0.0.1:10001\nx": "holds spaces, control characters",
    "http://127.0.0.1:8265": "Ray does not join http:// addresses",
    "ray://user:pw-secret@127.0.0.1:10001": "only host and port",
    "127.0.0.1:0": "port 0",
}


@pytest.mark.parametrize("address", sorted(MALFORMED_ADDRESSES))
def test_an_address_that_is_no_address_is_one_line_before_anything_exists(tmp_path, address):
    done = train(tmp_path, "--set", "run.executor=ray", "--set", f"run.ray.address={address}")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    # the setting is named where it came from (here `--set run.ray.address`)
    assert len(lines) == 1 and lines[0].startswith("skillopt: error: --set run.ray.address:")
    assert MALFORMED_ADDRESSES[address] in lines[0]
    assert "ray://host:10001, host:6379, auto" in lines[0]  # what to give instead
    assert "pw-secret" not in done.stderr
    assert not (tmp_path / "run").exists()


@contextlib.contextmanager
def not_ray(answer: bytes | None):
    """TEST DOUBLE cluster: a plain socket server on loopback that is not Ray. It answers
    every connection with `answer` and closes it, or (None) holds it open and says
    nothing, as a stale or wrong port would."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            if answer is None:
                held.append(conn)
            else:
                with conn:
                    conn.recv(4096)
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in held:
            conn.close()


HTTP_REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@pytest.mark.skipif(not HAS_RAY, reason="the `ray` extra is not installed here")
@pytest.mark.parametrize(
    ("form", "answer"),
    [
        ("ray://127.0.0.1:{port}", HTTP_REPLY),
        ("127.0.0.1:{port}", HTTP_REPLY),
        ("ray://127.0.0.1:{port}", None),
        ("127.0.0.1:{port}", None),
    ],
    ids=["client-http", "gcs-http", "client-silent", "gcs-silent"],
)
def test_a_listener_that_is_not_ray_is_one_line_before_the_run_directory_exists(
    tmp_path, form, answer
):
    with not_ray(answer) as port:
        address = form.format(port=port)
        done = train(tmp_path, "--set", "run.executor=ray", "--set", f"run.ray.address={address}")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"skillopt: error: run.ray.address {address}: 127.0.0.1:{port} is not a Ray cluster"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(not HAS_RAY, reason="the `ray` extra is not installed here")
def test_auto_is_checked_where_ray_would_find_the_cluster(tmp_path):
    # `auto` goes where Ray's own lookup goes; RAY_ADDRESS leads it, so a non-Ray
    # listener named there stands in for a cluster this machine once recorded.
    with not_ray(HTTP_REPLY) as port:
        done = train(
            tmp_path,
            "--set",
            "run.executor=ray",
            "--set",
            "run.ray.address=auto",
            env={"RAY_ADDRESS": f"127.0.0.1:{port}"},
        )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [lines[0]] and "is not a Ray cluster" in lines[0], lines
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(not HAS_RAY, reason="the `ray` extra is not installed here")
def test_auto_with_no_cluster_on_this_machine_is_one_line(monkeypatch):
    # Other sessions may run a Ray on this machine, so Ray's lookup is pointed at none.
    from ray._private import services

    from core.training.executor import RayUnreachable, check_reachable

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(services, "find_gcs_addresses", lambda: [])
    monkeypatch.setattr(services, "find_bootstrap_address", lambda temp_dir: None)
    with pytest.raises(RayUnreachable) as caught:
        check_reachable("auto")
    assert str(caught.value) == (
        "run.ray.address auto: no Ray cluster runs on this machine; start one "
        "(ray start --head) or give its address (ray://host:10001 or host:6379)"
    )


def test_the_estimate_says_where_the_rollouts_run(tmp_path):
    local = train(tmp_path, "--estimate")
    assert local.returncode == 0, local.stderr
    assert local.stdout.splitlines()[0] == "rollouts run: local, 1 slot"
    on_ray = train(
        tmp_path, "--estimate", "--set", "run.executor=ray", "--set", "run.ray.address=auto"
    )
    assert on_ray.returncode == 0, on_ray.stderr
    assert on_ray.stdout.splitlines()[0] == (
        "rollouts run: ray, on the workers of the Ray cluster at auto, 1 task in flight"
    )


def test_unknown_keys_under_run_ray_are_refused(tmp_path):
    tree = scenario_config(tmp_path)
    tree["run"]["ray"] = {"adress": "auto"}
    with pytest.raises(ConfigError, match="adress"):
        config_from_dict(tree)
    tree["run"] = {"executor": "dask"}
    with pytest.raises(ConfigError, match="executor"):
        config_from_dict(tree)
