"""The night is the one consumer of the cursors, as a user meets it from the shell
(subprocesses), on the transcripts the real `claude` and `codex` CLIs wrote
(tests/support/real_transcript_world.py): `sleep harvest` is a preview, so `dry-run`
after it plans the same tasks; `dry-run --json` lists them; a `sleep run` stopped by
SIGINT mid-replay is continued by the next night on the same tasks. Models: the scripted
TEST DOUBLE brain (tests/sleep/night_double.py) behind a real loopback OpenAI server."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from core.models.types import Request
from tests.sleep.night_double import Brain
from tests.support.loopback_openai import LoopbackOpenAI
from tests.support.real_transcript_world import (
    INTERACTIVE,
    RealWorld,
    frozen_tasks,
    make_real_world,
    openai_roles,
    real_night,
)

SKILLOPT = Path(sys.executable).parent / "skillopt"
REPO = Path(__file__).resolve().parents[3]


def env_for(world: RealWorld) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.update(HOME=str(world.home), PYTHONPATH=str(REPO), PATH="/usr/bin:/bin")
    return env


def skillopt(world: RealWorld, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SKILLOPT), "sleep", *args, "--state-dir", str(world.state)],
        env=env_for(world), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def planned(world: RealWorld) -> dict:
    out = skillopt(world, "dry-run", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_harvest_then_dry_run_plans_the_same_tasks_as_without_the_harvest(tmp_path):
    world = make_real_world(tmp_path)
    before = planned(world)
    [skill] = before["skills"]
    typed = {t["text"] for t in skill["tasks"]}
    assert len(typed) == 5 and "List the files in this project." in typed
    assert before["sessions"] == 1 and before["automation_skipped"] == 2  # claude -p, codex exec
    for task in skill["tasks"]:
        assert {"id", "text", "source", "session", "split", "routed_by"} <= set(task)
        assert (task["source"], task["session"]) == ("claude", INTERACTIVE)
        assert task["routed_by"] == skill["routed_by"] == "Claude Code reads CLAUDE.md"
    assert sorted(t["split"] for t in skill["tasks"]) == sorted(
        ["train"] * skill["train"] + ["val"] * skill["val"]
    )

    shown = skillopt(world, "harvest", *world.homes, "--project", str(world.project))
    assert shown.returncode == 0, shown.stderr
    assert "List the files in this project." in shown.stdout
    assert "preview: nothing marked read" in shown.stdout
    assert planned(world) == before  # the preview ate nothing

    text = skillopt(world, "dry-run")
    assert "1 session(s), 2 automation session(s) left out" in text.stdout

    # --mark-read moves the cursors on purpose: then tonight has nothing new
    marked = skillopt(world, "harvest", *world.homes, "--project", str(world.project), "--mark-read")  # fmt: skip
    assert marked.returncode == 0 and "marked read" in marked.stdout
    assert planned(world)["sessions"] == 0


def test_a_night_stopped_by_sigint_mid_replay_is_continued_with_the_same_tasks(tmp_path):
    asked, released, brain = threading.Event(), threading.Event(), Brain()

    def model(record):
        asked.set()
        released.wait(120)  # the first request hangs until the night was interrupted
        return brain(Request(backend="openai", model="m", messages=record.messages))

    with LoopbackOpenAI(handler=model) as server:
        world = make_real_world(tmp_path, openai_roles(server.base_url))
        night = subprocess.Popen(
            [str(SKILLOPT), "sleep", "run", "--state-dir", str(world.state)],
            env=env_for(world), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert asked.wait(120), "the night never asked its model"
            [folder] = (world.state / "nights").iterdir()
            tasks = frozen_tasks(folder)  # frozen before the replay started
            night.send_signal(signal.SIGINT)
            _out, err = night.communicate(timeout=120)
        finally:
            released.set()
            if night.poll() is None:
                night.kill()
        assert night.returncode == 130, err
        assert "night interrupted; run the same command" in err and "Traceback" not in err
        saved = json.loads((folder / "night.json").read_text())
        assert saved["status"] == "stopped" and "continue" in saved["message"]

        # the plan says so, and shows the frozen tasks (nothing new was harvested)
        plan = planned(world)
        assert (plan["night_id"], plan["continues"]) == (folder.name, "stopped")
        [skill] = plan["skills"]
        listed = sorted((f"{skill['skill']}/{t['split']}", t["id"]) for t in skill["tasks"])
        assert listed == sorted((split, i) for split, v in tasks.items() for i, _ in v)
        assert "continuing the stopped night" in skillopt(world, "dry-run").stdout

        # the next night (cron, the next day) continues it, on the same tasks
        tomorrow = real_night(world, dt.date.today() + dt.timedelta(days=1))
        assert tomorrow.night_id == folder.name
        result = asyncio.run(tomorrow.run())
    assert result.status == "finished", result.message
    assert frozen_tasks(folder) == tasks
    [run] = [o for o in result.skills.values()]
    assert run["train"] + run["val"] == 5
