"""`run.executor` as input: without Ray, or with an address nothing answers at, `skillopt
train` is one line and exit 2 before a run directory exists; the estimate says where the
rollouts run; unknown keys under `run.ray` are refused. (The runs on a real cluster are in
test_ray_executor.py.)"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import ConfigError, config_from_dict
from core.install_hint import install_extra
from envs import PROJECT_ROOT
from tests.support.ray_cluster import free_ports
from tests.support.train_scenario import scenario_config, write_config

SKILLOPT = Path(sys.executable).parent / "skillopt"
HAS_RAY = importlib.util.find_spec("ray") is not None


def train(tmp_path: Path, *args: str, pythonpath: str = str(PROJECT_ROOT)):
    config = write_config(tmp_path)
    return subprocess.run(
        [str(SKILLOPT), "train", "--config", str(config), "--out", str(tmp_path / "run"), *args],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": pythonpath},
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


def test_an_address_that_is_no_address_is_one_line(tmp_path):
    done = train(tmp_path, "--set", "run.executor=ray", "--set", "run.ray.address=head-node")
    assert done.returncode == 2, done.stderr
    if HAS_RAY:
        assert done.stderr.strip().splitlines() == [
            "skillopt: error: run.ray.address 'head-node' is not an address: give "
            "ray://host:10001, host:6379, auto, or null to start a local Ray"
        ]
    assert not (tmp_path / "run").exists()


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
