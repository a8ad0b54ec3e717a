"""No sequence of commands loses a person's task (sleep/night/held_tasks.py), on the transcripts
the real CLIs wrote: a failed night is retried the same day and replayed by the next
night, a waiting night is continued on a later day, and a night that froze its harvest
but could not move the cursors loses nothing. Models: the scripted TEST DOUBLE
(tests/sleep/night_double.py) and a real loopback OpenAI server that is down."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest

from core.models.handoff import parse_prompt_file, pending_prompts
from core.models.types import Request
from sleep.harvest.run import HarvestOptions, harvest
from sleep.night.held_tasks import CARRY_FILE, CarryArchive, Harvested, close_failed_nights
from tests.sleep.night_double import Brain
from tests.support.loopback_openai import LoopbackOpenAI
from tests.support.real_transcript_world import (
    INTERACTIVE,
    frozen_tasks,
    make_real_world,
    openai_roles,
    real_night,
    scripted_roles,
)
from tests.support.workspace_runner_double import workspace_runner_double

DAY = dt.date(2026, 12, 2)
NEXT_DAY = DAY + dt.timedelta(days=1)


def down_url() -> str:
    """The base URL of a loopback server that was started and stopped: connections are
    refused, as with a model server that is down."""
    server = LoopbackOpenAI().start()
    url = server.base_url
    server.stop()
    return url


def frozen_sessions(folder) -> list[dict]:
    return json.loads((folder / "sessions.json").read_text())["sessions"]


@pytest.fixture(autouse=True)
def _agentic_tasks_replay():
    """The fixtures' tasks are agentic: a chat target replays them through a workspace
    runner, here the TEST DOUBLE until the real tool loop is registered."""
    with workspace_runner_double():
        yield


def test_a_failed_night_is_retried_the_same_day_and_replayed_by_the_next_night(tmp_path):
    world = make_real_world(tmp_path, openai_roles(down_url()))
    failed = asyncio.run(real_night(world, DAY).run())
    assert failed.status == "failed", failed.message
    assert "nothing staged" in failed.message
    tasks = frozen_tasks(failed.folder)
    assert sum(len(v) for v in tasks.values()) == 5  # the five prompts the person typed
    # the cursors moved (after the freeze): a plain harvest has nothing new
    later_read = harvest(
        HarvestOptions(
            state_dir=world.state, project=world.project, commit=False,
            claude_home=str(world.home / ".claude"), codex_home=str(world.home / ".codex"),
        )
    )  # fmt: skip
    assert later_read.sessions == []

    # a re-run the same day continues the failed night, on its frozen tasks
    assert real_night(world, DAY).night_id == failed.night_id

    # the next day, the backend answers: the next night closes the failed one and takes
    # up its tasks from the carry archive
    later = real_night(world, NEXT_DAY, roles=scripted_roles())
    result = asyncio.run(later.run())
    assert later.night_id != failed.night_id
    assert result.status == "finished", result.message
    assert frozen_tasks(later.folder) == tasks
    assert frozen_sessions(later.folder) == frozen_sessions(failed.folder)
    closed = json.loads((failed.folder / "night.json").read_text())
    assert closed["status"] == "failed" and closed["closed"] is True
    assert not (world.state / CARRY_FILE).exists()  # held by the later night now
    # and a third night does not take them up again
    third = real_night(world, NEXT_DAY + dt.timedelta(days=1), roles=scripted_roles())
    assert third.sessions() == []


def test_a_night_that_failed_while_mining_hands_its_sessions_to_the_next(tmp_path):
    url = down_url()
    roles = {**openai_roles(url), "miner": {**openai_roles(url)["target"]}}
    world = make_real_world(tmp_path)
    failed = asyncio.run(real_night(world, DAY, roles=roles).run())
    assert failed.status == "failed" and "mining" in failed.message
    assert not (failed.folder / "tasks.json").exists()  # nothing was mined or archived
    typed = [t["text"] for s in frozen_sessions(failed.folder) for t in s["tasks"]]
    assert len(typed) == 5

    later = real_night(world, NEXT_DAY)
    assert asyncio.run(later.run()).status == "finished"
    intents = sorted(i for split in frozen_tasks(later.folder).values() for _id, i in split)
    assert intents == sorted(typed)


def test_a_waiting_night_is_continued_on_a_later_day_with_the_same_tasks(tmp_path):
    world = make_real_world(tmp_path)
    roles = {r: {"backend": "handoff"} for r in ("target", "optimizer", "judge")}
    waiting = real_night(world, DAY, roles=roles)
    assert asyncio.run(waiting.run()).status == "waiting"
    tasks = frozen_tasks(waiting.folder)
    # the person answers the next day (the TEST DOUBLE reading each prompt file)
    folder, brain = waiting.folder / "handoff", Brain()
    for prompt in pending_prompts(folder):
        messages = parse_prompt_file(prompt.read_text())
        (folder / "answers").mkdir(exist_ok=True)
        (folder / "answers" / prompt.name).write_text(
            brain(Request(backend="handoff", model="handoff", messages=messages))
        )
    later = real_night(world, NEXT_DAY, roles=roles)
    assert later.night_id == waiting.night_id
    asyncio.run(later.run())
    assert frozen_tasks(later.folder) == tasks


def test_a_harvest_that_cannot_move_its_cursors_loses_nothing(tmp_path):
    """The night freezes first; a crash before the cursors are saved leaves them where
    they were, so the tasks are in the night's folder and still past the cursors."""
    world = make_real_world(tmp_path)
    options = HarvestOptions(
        state_dir=world.state, project=world.project,
        claude_home=str(world.home / ".claude"), codex_home=str(world.home / ".codex"),
    )  # fmt: skip

    def freeze_then_crash(result):
        raise RuntimeError("power cut")

    with pytest.raises(RuntimeError, match="power cut"):
        harvest(options, before_commit=freeze_then_crash)
    again = harvest(options)
    assert [s.session_id for s in again.sessions] == [INTERACTIVE]


def test_closing_a_failed_night_twice_carries_its_sessions_once(tmp_path):
    world = make_real_world(tmp_path, openai_roles(down_url()))
    failed = asyncio.run(real_night(world, DAY).run())
    assert failed.status == "failed"
    assert close_failed_nights(world.state, NEXT_DAY, str(world.project)) == [failed.night_id]
    # a crash after carrying and before marking it closed: closed again, carried once
    night = json.loads((failed.folder / "night.json").read_text())
    (failed.folder / "night.json").write_text(json.dumps({**night, "closed": False}))
    assert close_failed_nights(world.state, NEXT_DAY, str(world.project)) == [failed.night_id]
    carried = CarryArchive(world.state).load(str(world.project))
    assert list(carried) == [failed.night_id]
    assert isinstance(carried[failed.night_id], Harvested)
    assert len(carried[failed.night_id].sessions) == 1


def test_another_projects_night_never_takes_up_a_failed_nights_tasks(tmp_path):
    world = make_real_world(tmp_path, openai_roles(down_url()))
    failed = asyncio.run(real_night(world, DAY).run())
    assert failed.status == "failed"
    other = world.home / "src" / "other"
    other.mkdir()
    elsewhere = real_night(world, NEXT_DAY, roles=scripted_roles(), project=other)
    assert elsewhere.night_id != failed.night_id
    asyncio.run(elsewhere.run())
    assert elsewhere.sessions() == []
    assert "closed" not in json.loads((failed.folder / "night.json").read_text())
    mine = real_night(world, NEXT_DAY, roles=scripted_roles())
    assert asyncio.run(mine.run()).status == "finished"
    assert frozen_sessions(mine.folder) == frozen_sessions(failed.folder)
