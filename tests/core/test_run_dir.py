"""The run directory: layout, owner lock (live owner refused, dead owner taken over),
state round trip, and `list_runs` statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from core.events import EventBus, RunFailed, RunFinished, RunStarted
from core.run_dir import LOCK_NAME, RunDirectory, RunDirectoryInUse, list_runs
from core.train_state import SkillVersion, TrainState


def state(run_id="r", **kw) -> TrainState:
    base = dict(run_id=run_id, env="capitals", started_at=time.time(), total_steps=4,
                steps_per_epoch=2)
    base.update(kw)
    return TrainState(**base)


def test_state_round_trip(tmp_path):
    rd = RunDirectory(tmp_path / "run")
    s = state(next_step=3, versions=[SkillVersion(0, "h0", None, "initial")],
              best_items={"a": 1.0}, ledger={"per_role": {}}, meta_notes="n")
    rd.write_state(s)
    assert rd.read_state() == s
    assert json.loads(rd.state_path.read_text())["state_version"] == 1


def test_second_owner_is_refused_with_the_pid(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; sys.path.insert(0, sys.argv[1]);"
         "from core.run_dir import RunDirectory; RunDirectory(sys.argv[2]).acquire();"
         "print('locked', flush=True); time.sleep(60)",
         os.getcwd(), str(tmp_path / "run")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirectoryInUse) as err:
            RunDirectory(tmp_path / "run").acquire()
        assert f"in use by process {holder.pid}" in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    # The owner is dead now: its stale lock is taken over.
    rd = RunDirectory(tmp_path / "run")
    rd.acquire()
    assert (tmp_path / "run" / LOCK_NAME).read_text().split()[0] == str(os.getpid())
    rd.release()
    assert not (tmp_path / "run" / LOCK_NAME).exists()


def test_same_process_cannot_own_a_directory_twice(tmp_path):
    first = RunDirectory(tmp_path / "run")
    first.acquire()
    try:
        with pytest.raises(RunDirectoryInUse):
            RunDirectory(tmp_path / "run").acquire()
    finally:
        first.release()


def test_skill_versions_and_steps_are_written_atomically_where_documented(tmp_path):
    rd = RunDirectory(tmp_path / "run")
    rd.write_skill(0, "a\r\nb")
    assert rd.skill_path(0).name == "v0000.md"
    assert rd.read_skill(0) == "a\r\nb"  # bytes kept, CRLF included
    rd.write_step_json(12, "gate.json", {"accepted": True})
    assert (tmp_path / "run" / "steps" / "0012" / "gate.json").exists()
    assert not list((tmp_path / "run").rglob("*.tmp"))


def test_events_are_appended_to_the_log(tmp_path):
    rd = RunDirectory(tmp_path / "run")
    bus = EventBus()
    rd.attach(bus)
    bus.emit(RunFailed(error="x"))
    rd.detach()
    bus.emit(RunFailed(error="not logged"))
    lines = rd.events_path.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["type"] == "RunFailed"


def _run(root, name, *, status, finished=False, events=(), summary=None):
    rd = RunDirectory(root / name)
    rd.write_config({"env": {"name": "capitals"}})
    rd.write_state(state(run_id=name, status=status, finished=finished, next_step=2,
                         baseline_score=0.1, best_score=0.3, ledger={"per_role": {}}))
    bus = EventBus()
    rd.attach(bus)
    for e in events:
        bus.emit(e)
    rd.detach()
    if summary:
        rd.write_summary(summary)
    return rd


def test_list_runs_statuses(tmp_path):
    start = RunStarted(run_id="x", env="capitals", strategy="fewshot", target_model="t",
                       optimizer_model="o", epochs=1, steps_per_epoch=2, train_items=1,
                       val_items=1, test_items=1)
    _run(tmp_path, "done", status="finished", finished=True,
         events=[start, RunFinished(status="finished", baseline_val=0.1, best_val=0.5)],
         summary={"baseline_val": 0.1, "best_val": 0.5, "cost_usd": 0.25})
    _run(tmp_path, "stopped", status="stopped",
         events=[start, RunFinished(status="stopped", baseline_val=0.1, best_val=0.3)])
    _run(tmp_path, "failed", status="failed", events=[start, RunFailed(error="x")])
    _run(tmp_path, "killed", status="running", events=[start])
    live = _run(tmp_path, "live", status="running", events=[start])
    (tmp_path / "not-a-run").mkdir()
    live.acquire()
    try:
        infos = {i.run_id: i for i in list_runs(tmp_path)}
    finally:
        live.release()
    assert set(infos) == {"done", "stopped", "failed", "killed", "live"}
    assert {k: v.status for k, v in infos.items()} == {
        "done": "finished", "stopped": "stopped", "failed": "failed",
        "killed": "interrupted", "live": "live",
    }
    done = infos["done"]
    assert (done.env, done.baseline_val, done.best_val, done.cost_usd) == ("capitals", 0.1, 0.5, 0.25)
    assert (done.steps_done, done.total_steps) == (2, 4)
    assert infos["killed"].best_val == 0.3  # from state.json when there is no summary
    assert list_runs(tmp_path / "missing") == []
