"""`skillopt runs` over run directories whose files were damaged outside skillopt: a
non-UTF-8, non-object, nested or directory summary.json, scores that are not numbers, a
state.json that is garbage. Each run is listed as "unreadable" with the reason; the
listing never raises and the other runs are listed as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.run.directory import list_runs
from tests.core.run.test_directory import _run

REPO = Path(__file__).resolve().parents[3]


def damaged_runs(root: Path) -> None:
    _run(root, "good", status="finished", finished=True, summary={"best_val": 0.5})
    bad = {
        "not-utf8": b'{"best_val": 0.5, "note": "\xff\xfe"}',
        "a-list": b"[1, 2]",
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "truncated": b'{"best_val": 0.',
        "score-text": b'{"best_val": "high", "cost_usd": 0.1}',
        "cost-nan": b'{"best_val": 0.2, "cost_usd": NaN}',
    }
    for name, content in bad.items():
        rd = _run(root, name, status="finished", finished=True, summary={"best_val": 0.4})
        rd.summary_path.write_bytes(content)
    folder = _run(root, "summary-dir", status="finished", finished=True)
    folder.summary_path.mkdir()
    garbage_state = _run(root, "state-garbage", status="finished", finished=True)
    garbage_state.state_path.write_bytes(b"\x00\xff not json")


@pytest.fixture
def runs_dir(tmp_path):
    damaged_runs(tmp_path / "runs")
    return tmp_path / "runs"


def test_damaged_runs_are_listed_unreadable_with_a_reason(runs_dir):
    infos = {i.run_id: i for i in list_runs(runs_dir)}
    assert infos["good"].status == "finished" and infos["good"].problem is None
    assert infos["good"].best_val == 0.5
    expected = {
        "not-utf8": "summary.json is not UTF-8",
        "a-list": "summary.json is unreadable (not a JSON object)",
        "deep": "summary.json is unreadable",
        "truncated": "summary.json is unreadable",
        "score-text": "summary.json: best_val is not a number",
        "cost-nan": "summary.json: cost_usd is not a number",
        "summary-dir": "summary.json is unreadable",
        "state-garbage": "state.json",
    }
    for name, reason in expected.items():
        info = infos[name]
        assert info.status == "unreadable" and reason in (info.problem or ""), (name, info)
        assert info.to_dict()["problem"] == info.problem
        assert info.best_val is None or isinstance(info.best_val, float)
    assert infos["cost-nan"].best_val == 0.2  # the readable fields still show


def test_skillopt_runs_prints_each_damaged_run_and_exits_0(runs_dir):
    skillopt = Path(sys.executable).parent / "skillopt"
    result = subprocess.run(
        [str(skillopt), "runs", "--runs-dir", str(runs_dir)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(runs_dir)},
    )  # fmt: skip
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.count("unreadable") >= 8
    assert "summary.json is not UTF-8" in result.stdout
    as_json = subprocess.run(
        [str(skillopt), "runs", "--runs-dir", str(runs_dir), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(runs_dir)},
    )  # fmt: skip
    assert as_json.returncode == 0 and '"problem": "summary.json is not UTF-8' in as_json.stdout


def test_run_files_that_are_fifos_do_not_hang_the_listing(tmp_path):
    """A FIFO under a run file's name would block a read forever: each is reported as
    not a regular file (in a subprocess with a deadline, so a hang fails the test)."""
    runs = tmp_path / "runs"
    for name in ("summary.json", "state.json", "config.yaml", "events.jsonl", ".owner.pid"):
        rd = _run(runs, f"fifo-{name.strip('.')}", status="finished", finished=True)
        target = rd.path / name
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    skillopt = Path(sys.executable).parent / "skillopt"
    result = subprocess.run(
        [str(skillopt), "runs", "--runs-dir", str(runs), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0 and result.stderr == "", result.stderr
    import json

    listed = {row["run_id"]: row for row in json.loads(result.stdout)}
    for name in ("summary.json", "state.json", "config.yaml"):
        row = listed[f"fifo-{name}"]
        assert row["status"] == "unreadable" and "not a regular file" in row["problem"], row
