"""A response-cache entry that is not an answer (empty text, or token counts that are not
non-negative integers: what an older version could store from a garbage reply) is a miss:
a fresh run asks the server again instead of replaying it as a score of 0 with 0 requests,
and the good answer replaces it."""

from __future__ import annotations

import json
import sqlite3

import pytest

from core.models.factory import build_model_client
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config
from tests.support.loopback_openai import LoopbackOpenAI, Reply


def rewrite_entries(path, change) -> None:
    with sqlite3.connect(path) as db:
        for key, completion in db.execute("SELECT key, completion FROM responses").fetchall():
            data = json.loads(completion)
            change(data)
            db.execute("UPDATE responses SET completion = ? WHERE key = ?", (json.dumps(data), key))


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(text=""),
        lambda d: d.update(text=None),
        lambda d: d["usage"].update(input_tokens=-5),
        lambda d: d["usage"].update(output_tokens="many"),
    ],
    ids=["empty-text", "null-text", "negative-tokens", "text-tokens"],
)
async def test_an_unusable_cache_entry_is_a_miss(tmp_path, damage):
    with LoopbackOpenAI() as server:
        config = loopback_config(server.base_url, tmp_path)
        server.queue(Reply("Paris"))
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            first = await client.complete(USER, role="target")
        assert first.text == "Paris" and not first.cached
        rewrite_entries(tmp_path / "cache.sqlite", damage)
        server.queue(Reply("Paris again"))
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            fresh = await client.complete(USER, role="target")
            assert fresh.text == "Paris again" and not fresh.cached
            replayed = await client.complete(USER, role="target")
    assert replayed.text == "Paris again" and replayed.cached  # the good answer replaced it
