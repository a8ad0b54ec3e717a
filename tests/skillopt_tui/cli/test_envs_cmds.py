"""`skillopt envs` and `skillopt data materialize` as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SKILLOPT = Path(sys.executable).parent / "skillopt"


def skillopt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SKILLOPT_DATA": str(tmp_path / "data")}
    return subprocess.run(
        [str(SKILLOPT), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_envs_lists_every_environment_with_data_and_sizes(tmp_path):
    result = skillopt(tmp_path, "envs", "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {
        "capitals",
        "bigbench",
        "repo_tasks",
        "searchqa",
        "livemath",
        "docvqa",
        "officeqa",
        "spreadsheetbench",
        "alfworld",
    }
    assert rows["capitals"]["data"] and rows["bigbench"]["data"]
    assert rows["searchqa"] == {
        **rows["searchqa"],
        "data": False,
        "sizes": {"train": 400, "val": 200, "test": 1400},
        "data_dir": str(tmp_path / "data" / "searchqa"),
    }
    assert "skillopt data materialize searchqa --source PATH" in rows["searchqa"]["problem"]
    assert rows["docvqa"]["needs"] == ["multimodal backend"]
    assert rows["alfworld"]["sizes"] == {"train": 39, "val": 18, "test": 134}
    text = skillopt(tmp_path, "envs")
    assert text.returncode == 0 and "searchqa" in text.stdout and "no data" in text.stdout


def test_materialize_then_the_env_has_data(tmp_path):
    manifest = REPO / "manifests" / "searchqa_id_split"
    ids = [
        e["id"]
        for split in ("train", "val", "test")
        for e in json.loads((manifest / split / "items.json").read_text())
    ]
    rows = [{"key": i, "question": f"q {i}", "context": "[DOC] c", "answers": ["a"]} for i in ids]
    source = tmp_path / "searchqa.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    result = skillopt(
        tmp_path, "data", "materialize", "searchqa", "--source", str(source), "--json"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["counts"] == {"train": 400, "val": 200, "test": 1400}
    listed = {r["name"]: r for r in json.loads(skillopt(tmp_path, "envs", "--json").stdout)}
    assert listed["searchqa"]["data"] is True


def test_materialize_errors_are_one_line_with_exit_2(tmp_path):
    for args, expected in (
        (["searchqa"], "give exactly one of --source PATH or --download"),
        (["capitals", "--source", "x"], "ships with the project"),
        (["nosuch", "--source", "x"], "unknown environment 'nosuch'"),
        (["searchqa", "--source", str(tmp_path / "missing")], "no such file or folder"),
    ):
        result = skillopt(tmp_path, "data", "materialize", *args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and expected in lines[0], result.stderr


def test_training_on_an_env_without_data_fails_with_the_materialise_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("env:\n  name: searchqa\ntrain:\n  strategy: fewshot\n")
    result = skillopt(tmp_path, "train", "--config", str(config), "--out", str(tmp_path / "run"))
    error = [line for line in result.stderr.splitlines() if line.startswith("skillopt: error:")]
    assert result.returncode == 2 and len(error) == 1 and "Traceback" not in result.stderr
    assert "skillopt data materialize searchqa --source PATH" in error[0]
    assert not (tmp_path / "run").exists()
