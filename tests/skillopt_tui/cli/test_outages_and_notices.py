"""Issue 9, wrong answers that look right, from the command line: an optimizer outage is
treated like a target outage (exit 1, resumable), an unusable response cache is said on
stderr and in events.jsonl, and `runs --runs-dir` on a file says it is not a directory."""

from __future__ import annotations

import json

import yaml

from tests.skillopt_tui.cli.test_train_cmds import one_line_error, skillopt
from tests.support.loopback_openai import Fault, LoopbackOpenAI
from tests.support.train_scenario import scenario_config


def _write(tmp_path, tree) -> str:
    path = tmp_path / "outage.yaml"
    path.write_text(yaml.safe_dump(tree))
    return str(path)


def test_an_optimizer_outage_exits_1_and_says_the_run_is_resumable(tmp_path):
    with LoopbackOpenAI(handler=lambda record: Fault.error(503)) as server:
        tree = scenario_config(tmp_path, strategy="llm")
        tree["models"]["optimizer"] = {
            "backend": "openai",
            "base_url": server.base_url,
            "model": "loopback-optimizer",
            "max_retries": 0,
        }
        out = tmp_path / "runs" / "down"
        result = skillopt(tmp_path, "train", "--config", _write(tmp_path, tree), "--out", str(out))
        assert server.requests  # the optimizer was asked, and was down
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("skillopt: error: ") and "HTTP 503" in last
    assert "resumable" in last and "rerun the same command" in last
    state = json.loads((out / "state.json").read_text())
    assert state["status"] == "failed"


def _notices(events_path) -> list[str]:
    lines = [json.loads(line) for line in events_path.read_text().splitlines()]
    return [e["text"] for e in lines if e["type"] == "Notice"]


def test_an_unusable_response_cache_is_said_on_stderr_and_in_events(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database\n" * 100)
    a_directory = tmp_path / "a-directory"
    a_directory.mkdir()
    for name, cache_path in (("garbage", garbage), ("directory", a_directory)):
        tree = scenario_config(tmp_path)
        # The scripted double is never cached: a loopback target is.
        with LoopbackOpenAI(handler=lambda record: "Paris") as server:
            tree["models"]["target"] = {
                "backend": "openai",
                "base_url": server.base_url,
                "model": "loopback-model",
            }
            tree["cache"] = {"path": str(cache_path)}
            out = tmp_path / "runs" / name
            result = skillopt(
                tmp_path, "train", "--config", _write(tmp_path, tree), "--out", str(out)
            )
        assert result.returncode == 0, result.stderr
        assert "response cache disabled" in result.stderr, name
        notices = _notices(out / "events.jsonl")
        assert any("response cache disabled" in n and str(cache_path) in n for n in notices)
    assert garbage.read_bytes() == b"this is not a database\n" * 100  # left as it was


def test_runs_dir_that_is_a_file_is_a_one_line_error(tmp_path):
    a_file = tmp_path / "runs.txt"
    a_file.write_text("not a folder\n")
    result = skillopt(tmp_path, "runs", "--runs-dir", str(a_file))
    assert result.returncode == 2
    assert "not a directory" in one_line_error(result)
    missing = skillopt(tmp_path, "runs", "--runs-dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 0 and "no runs" in missing.stdout
