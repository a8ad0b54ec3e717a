"""`sleep.batch` (issue 42): a night's replays that can wait (its baseline val, and its
tests when it holds some) go through the provider's batch API, on the real transcripts and
a loopback server speaking OpenAI's Batch API. The fixtures' tasks replay as our tool loop:
each turn of a conversation is one batch round."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

from sleep.state.settings import SleepSettings
from tests.sleep.test_night_tools_replay import Server
from tests.support.loopback_batches import LoopbackOpenAIBatches
from tests.support.real_transcript_world import make_real_world, openai_roles, real_night

DAY = dt.date(2026, 12, 2)


def test_a_nights_baseline_replays_go_through_batches_one_round_a_turn(tmp_path):
    handler = Server()
    with LoopbackOpenAIBatches(handler=handler) as server:
        world = make_real_world(tmp_path, openai_roles(server.base_url))
        (world.project / "app.py").write_text("x = 1\n")
        night = real_night(world, DAY)
        night.batch = "on"
        result = asyncio.run(night.run())
        submissions = list(server.submissions)
        batched_turns = [
            body["messages"] for batch in server.batches.values() for _, body in batch.requests
        ]
    assert result.status == "finished", result.message
    assert len(submissions) >= 3  # look, write, finish: one batch round a turn
    flat = [cid for batch in submissions for cid in batch]
    assert len(flat) == len(set(flat))  # no request submitted twice
    assert any(m[-1]["content"].startswith("Tool results:") for m in batched_turns)
    spend = [
        json.loads(line)
        for path in night.folder.rglob("spend.jsonl")
        for line in path.read_text().splitlines()
    ]
    target = [e for e in spend if e["role"] == "target" and not e["cached"]]
    baseline = [e for e in target if e["stage"] == "baseline"]
    assert baseline and all(e.get("batch") for e in baseline)  # the judge stays interactive
    assert not any(e.get("batch") for e in spend if e["stage"] not in ("baseline", "test"))
    assert not any(e.get("batch") for e in spend if e["role"] != "target")


def test_sleep_batch_reads_a_bare_yaml_off_and_on_as_the_words():
    assert SleepSettings.model_validate({"batch": False}).batch == "off"
    assert SleepSettings.model_validate({"batch": True}).batch == "on"
    assert SleepSettings().batch == "off"
