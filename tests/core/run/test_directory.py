"""The run directory: layout, owner lock (live owner refused, dead owner taken over, one
winner among simultaneous starters), state round trip, unreadable files, and `list_runs`
statuses."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import subprocess
import sys
import time

import pytest

from core import file_lock
from core.errors import UserError
from core.run.directory import (
    LOCK_NAME,
    NotARunDirectory,
    RunDirectory,
    RunDirectoryCorrupt,
    RunDirectoryInUse,
    list_runs,
    lock_owner,
)
from core.run.events import EventBus, RunFailed, RunFinished, RunStarted
from core.run.state import SkillVersion, TrainState


def state(run_id="r", **kw) -> TrainState:
    base = dict(
        run_id=run_id, env="capitals", started_at=time.time(), total_steps=4, steps_per_epoch=2
    )
    base.update(kw)
    return TrainState(**base)


def test_a_state_from_before_scheduled_steps_resumes_its_schedule(tmp_path):
    """An older state.json has no scheduled_steps; its schedule advanced on every step, so
    it resumes from next_step. Fails on the old code (0: the schedule started over)."""
    rd = RunDirectory(tmp_path / "run")
    rd.write_state(state(next_step=3))
    older = json.loads(rd.state_path.read_text())
    del older["scheduled_steps"]
    rd.state_path.write_text(json.dumps(older))
    assert rd.read_state().scheduled_steps == 3
    rd.write_state(state(next_step=3, scheduled_steps=1))  # a newer state keeps its own
    assert rd.read_state().scheduled_steps == 1


def test_state_round_trip(tmp_path):
    rd = RunDirectory(tmp_path / "run")
    s = state(
        next_step=3,
        versions=[SkillVersion(0, "h0", None, "initial")],
        best_items={"a": 1.0},
        ledger={"per_role": {}},
        meta_notes="n",
    )
    rd.write_state(s)
    assert rd.read_state() == s
    assert json.loads(rd.state_path.read_text())["state_version"] == 1


def test_second_owner_is_refused_with_the_pid(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; sys.path.insert(0, sys.argv[1]);"
            "from core.run.directory import RunDirectory; RunDirectory(sys.argv[2]).acquire();"
            "print('locked', flush=True); time.sleep(60)",
            os.getcwd(),
            str(tmp_path / "run"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert lock_owner(tmp_path / "run") == holder.pid
        with pytest.raises(RunDirectoryInUse) as err:
            RunDirectory(tmp_path / "run").acquire()
        assert f"run directory {tmp_path / 'run'} is in use by process {holder.pid}" in str(
            err.value
        )
    finally:
        holder.kill()
        holder.wait()
    # The owner is dead now: its lock file remains, naming it, but the run is not live and
    # the lock is taken over.
    assert (tmp_path / "run" / LOCK_NAME).read_text().split()[0] == str(holder.pid)
    assert lock_owner(tmp_path / "run") is None
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


def _contend(path, wait, start, tried, results) -> None:
    """One of several processes starting on the same run directory at once."""
    rd = RunDirectory(path)
    start.wait()
    try:
        rd.acquire(wait=wait)
        results.put(("ok", os.getpid()))
    except RunDirectoryInUse as exc:
        results.put(("busy", str(exc)))
    tried.wait()  # the winner holds the lock until every contender has tried
    rd.release()


# What an earlier owner may have left: nothing, a lock file whose pid was never written,
# or the pid of a process that died (another host's pid looks the same to this host).
LEFTOVERS = {"none": None, "empty": "", "dead": "{dead} otherhost\n"}


@pytest.mark.parametrize("leftover", sorted(LEFTOVERS))
def test_exactly_one_of_several_simultaneous_starters_wins(tmp_path, leftover):
    ctx = multiprocessing.get_context("fork")
    contenders = 3
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for trial in range(7):  # 21 trials over the three leftovers
        path = tmp_path / f"run{trial}"
        path.mkdir()
        if LEFTOVERS[leftover] is not None:
            (path / LOCK_NAME).write_text(LEFTOVERS[leftover].format(dead=dead.pid))
        start, tried = ctx.Barrier(contenders), ctx.Barrier(contenders)
        results = ctx.Queue()
        procs = [
            ctx.Process(target=_contend, args=(path, 0.0, start, tried, results))
            for _ in range(contenders)
        ]
        for p in procs:
            p.start()
        outcome = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        winners = [pid for kind, pid in outcome if kind == "ok"]
        assert len(winners) == 1, (trial, outcome)
        assert sorted(kind for kind, _ in outcome) == ["busy"] * (contenders - 1) + ["ok"]
        for kind, message in outcome:
            if kind == "busy":
                assert f"is in use by process {winners[0]};" in message
        assert not (path / LOCK_NAME).exists()  # the winner removed it on release


class _ProbeEndsAfterFirstTry:
    """fcntl stand-in: a liveness probe holds the lock (shared) when the owner lock is first
    tried, and lets go right after that try fails."""

    def __init__(self, probe_fd: int) -> None:
        self.probe_fd = probe_fd
        self.tries = 0

    def flock(self, fd: int, op: int) -> None:
        if op & fcntl.LOCK_EX:
            self.tries += 1
            if self.probe_fd >= 0:
                try:
                    fcntl.flock(fd, op)
                finally:
                    os.close(self.probe_fd)  # the probe is over
                    self.probe_fd = -1
        fcntl.flock(fd, op)

    def __getattr__(self, name: str):
        return getattr(fcntl, name)


@pytest.mark.parametrize("wait", [None, 0.0])
def test_a_start_colliding_with_a_liveness_probe_is_not_refused(tmp_path, monkeypatch, wait):
    """`skillopt runs` and the TUI probe the lock by taking it for an instant; `acquire`
    waits a moment for that by default."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / LOCK_NAME).write_text("")
    probe_fd = os.open(tmp_path / "run" / LOCK_NAME, os.O_RDONLY)
    fcntl.flock(probe_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    stand_in = _ProbeEndsAfterFirstTry(probe_fd)
    monkeypatch.setattr(file_lock, "fcntl", stand_in)
    rd = RunDirectory(tmp_path / "run")
    if wait is None:
        rd.acquire()
        assert rd.locked and stand_in.tries == 2
        rd.release()
    else:  # without the wait, the probe would have refused the start
        with pytest.raises(RunDirectoryInUse, match="in use by process unknown"):
            rd.acquire(wait=wait)
        assert stand_in.tries == 1


def test_a_pid_file_nobody_holds_is_not_an_owner(tmp_path):
    """Liveness is the lock, not the pid: a leftover naming a running process (or one on
    another host) does not make the run live forever."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / LOCK_NAME).write_text(f"{os.getppid()} some-other-host\n")
    assert lock_owner(tmp_path / "run") is None
    rd = RunDirectory(tmp_path / "run")
    rd.acquire()
    assert rd.locked and lock_owner(tmp_path / "run") == os.getpid()
    rd.release()
    assert not rd.locked and lock_owner(tmp_path / "run") is None


def test_out_naming_a_file_is_a_user_error(tmp_path):
    (tmp_path / "file").write_text("mine\n")
    with pytest.raises(NotARunDirectory) as err:
        RunDirectory(tmp_path / "file").acquire()
    assert isinstance(err.value, UserError)
    assert f"--out {tmp_path / 'file'} is a file, not a run directory" in str(err.value)
    with pytest.raises(NotARunDirectory, match="which is a file, not a directory"):
        RunDirectory(tmp_path / "file" / "run").acquire()
    assert (tmp_path / "file").read_text() == "mine\n"  # nothing lost


@pytest.mark.parametrize("content", [b'{"run_id": ', b"[]", b"{}", b"\xff\xfe", b""])
def test_unreadable_state_is_a_user_error_naming_the_file(tmp_path, content):
    rd = RunDirectory(tmp_path / "run")
    rd.write_state(state())
    rd.state_path.write_bytes(content)
    with pytest.raises(RunDirectoryCorrupt) as err:
        rd.read_state()
    message = str(err.value)
    assert isinstance(err.value, UserError) and "\n" not in message
    assert str(rd.state_path) in message and "--fresh --force" in message
    assert rd.state_path.read_bytes() == content  # left for the user to inspect


@pytest.mark.parametrize("content", ["env: [unclosed\n", "- a list\n", "just text\n", ""])
def test_malformed_saved_config_is_a_user_error_naming_the_file(tmp_path, content):
    rd = RunDirectory(tmp_path / "run")
    assert rd.read_config() is None  # not written yet: nothing to compare with
    rd.write_config({"env": {"name": "capitals"}})
    assert rd.read_config() == {"env": {"name": "capitals"}}
    rd.config_path.write_text(content)
    with pytest.raises(RunDirectoryCorrupt) as err:
        rd.read_config()
    message = str(err.value)
    assert "\n" not in message
    assert str(rd.config_path) in message and "--fresh --force" in message


def test_list_runs_shows_a_run_with_unreadable_files(tmp_path):
    rd = _run(tmp_path, "broken", status="running")
    rd.state_path.write_text("{")
    rd.config_path.write_text("env: [")
    (info,) = list_runs(tmp_path)
    assert (info.run_id, info.status) == ("broken", "unreadable")
    assert "state.json is unreadable" in info.problem and "config.yaml" in info.problem


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
    rd.write_state(
        state(
            run_id=name,
            status=status,
            finished=finished,
            next_step=2,
            baseline_score=0.1,
            best_score=0.3,
            ledger={"per_role": {}},
        )
    )
    bus = EventBus()
    rd.attach(bus)
    for e in events:
        bus.emit(e)
    rd.detach()
    if summary:
        rd.write_summary(summary)
    return rd


def test_list_runs_statuses(tmp_path):
    start = RunStarted(
        run_id="x",
        env="capitals",
        strategy="fewshot",
        target_model="t",
        optimizer_model="o",
        epochs=1,
        steps_per_epoch=2,
        train_items=1,
        val_items=1,
        test_items=1,
    )
    _run(
        tmp_path,
        "done",
        status="finished",
        finished=True,
        events=[start, RunFinished(status="finished", baseline_val=0.1, best_val=0.5)],
        summary={"baseline_val": 0.1, "best_val": 0.5, "cost_usd": 0.25},
    )
    _run(
        tmp_path,
        "stopped",
        status="stopped",
        events=[start, RunFinished(status="stopped", baseline_val=0.1, best_val=0.3)],
    )
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
        "done": "finished",
        "stopped": "stopped",
        "failed": "failed",
        "killed": "interrupted",
        "live": "live",
    }
    done = infos["done"]
    assert (done.env, done.baseline_val, done.best_val, done.cost_usd) == (
        "capitals",
        0.1,
        0.5,
        0.25,
    )
    assert (done.steps_done, done.total_steps) == (2, 4)
    assert infos["killed"].best_val == 0.3  # from state.json when there is no summary
    assert list_runs(tmp_path / "missing") == []
