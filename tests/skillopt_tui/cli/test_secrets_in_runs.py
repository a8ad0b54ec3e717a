"""Issue 9, secrets, as a user meets them: `skillopt train` against a loopback server that
puts the key into an error body (where a 300-character cut would split it) or echoes it in
its answers. Nothing under the run directory, the cache or stderr may hold any piece of it."""

from __future__ import annotations

import yaml

from tests.core.models.test_secrets_persisted import leaked
from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.loopback_openai import Fault, LoopbackOpenAI
from tests.support.train_scenario import scenario_config

KEY_VAR = "SKILLOPT_TEST_KEY"
KEY = "sk-proj-run-secret-9f8e7d6c5b4a"


def _config(tmp_path, base_url: str):
    tree = scenario_config(tmp_path)
    tree["models"]["target"] = {
        "backend": "openai",
        "base_url": base_url,
        "model": "loopback-model",
        "api_key_env": KEY_VAR,
        "max_retries": 0,
        "timeout_s": 10.0,
    }
    tree["cache"] = {"path": str(tmp_path / "cache" / "responses.sqlite")}
    path = tmp_path / "secret.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _files_with_the_key(tmp_path) -> list[str]:
    hits = []
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix != ".yaml" or path.name == "config.yaml":
            data = path.read_bytes().decode("utf-8", "replace")
            if leaked(data, KEY):
                hits.append(str(path))
    return hits


def test_a_key_in_an_error_body_reaches_no_file_and_not_stderr(tmp_path):
    body = {"error": "x" * 285 + KEY + " is not allowed here" * 20}
    with LoopbackOpenAI(handler=lambda record: Fault.raw(400, body)) as server:
        config = _config(tmp_path, server.base_url)
        out = tmp_path / "runs" / "leaky"
        result = skillopt(
            tmp_path, "train", "--config", str(config), "--out", str(out), **{KEY_VAR: KEY}
        )
    assert result.returncode != 0, result.stderr
    assert "HTTP 400" in result.stderr
    assert leaked(result.stderr, KEY) == [], result.stderr
    assert (out / "state.json").exists() and (out / "events.jsonl").exists()
    assert _files_with_the_key(tmp_path) == []


def test_a_key_the_model_echoes_reaches_no_file_and_not_stderr(tmp_path):
    with LoopbackOpenAI(handler=lambda record: f"Paris ({KEY})") as server:
        config = _config(tmp_path, server.base_url)
        out = tmp_path / "runs" / "echo"
        result = skillopt(
            tmp_path, "train", "--config", str(config), "--out", str(out), **{KEY_VAR: KEY}
        )
    assert result.returncode == 0, result.stderr
    assert leaked(result.stderr, KEY) == []
    rollouts = list(out.glob("steps/*/rollouts.jsonl"))
    assert rollouts and "Paris (***)" in rollouts[0].read_text()
    assert _files_with_the_key(tmp_path) == []


def test_a_key_pasted_as_api_key_env_is_refused_without_echo_and_leaves_no_run(tmp_path):
    with LoopbackOpenAI() as server:
        config = _config(tmp_path, server.base_url)
    out = tmp_path / "runs" / "pasted"
    result = skillopt(
        tmp_path,
        "train",
        "--config",
        str(config),
        "--out",
        str(out),
        "--set",
        f"models.target.api_key_env={KEY}",
    )
    assert result.returncode == 2, result.stderr
    assert "variable name" in result.stderr and leaked(result.stderr, KEY) == []
    assert not out.exists()
