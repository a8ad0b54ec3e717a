"""The scripted TEST DOUBLE: deterministic answers, usage and ledger accounting."""

from __future__ import annotations

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.types import BadRequestError, Completion, Request, Usage


def build(tmp_path, scripted):
    config = config_from_dict({"run": {"runs_dir": str(tmp_path)}})
    return build_model_client(config, scripted=scripted, environ={})


async def test_table_responder_is_deterministic_and_counted(tmp_path):
    table = {"Capital of France?": "Paris", "Capital of Spain?": "Madrid"}
    client = build(tmp_path, {"target": table})
    complete = client.bind("target")
    answers = [
        (await complete([{"role": "user", "content": q}])).text
        for q in ["Capital of France?", "Capital of Spain?", "Capital of France?"]
    ]
    assert answers == ["Paris", "Madrid", "Paris"]
    assert client.describe("target") == "scripted:scripted"
    snap = client.ledger.snapshot()
    # Never cached (answers come from code), counted with word-count tokens, priced at zero.
    assert (snap.calls, snap.cache_hits, snap.output_tokens, snap.cost_usd) == (3, 0, 3, 0.0)
    assert not (tmp_path / ".cache").exists()
    # Roles without a responder keep their configured backend.
    assert client.is_local("optimizer")


async def test_function_responder_sees_the_resolved_request(tmp_path):
    seen: list[Request] = []

    def responder(request: Request) -> Completion:
        seen.append(request)
        return Completion("x y", Usage(5, 2), "stop", 0.0, request.model)

    client = build(tmp_path, {"optimizer": responder})
    result = await client.complete([{"role": "user", "content": "go"}], role="optimizer", seed=4)
    assert result.usage == Usage(5, 2)
    assert seen[0].settings["seed"] == 4 and seen[0].settings["max_tokens"] == 2048


async def test_missing_table_entry_is_an_error_not_a_guess(tmp_path):
    client = build(tmp_path, {"target": {"known": "yes"}})
    with pytest.raises(BadRequestError, match="no reply for the user message 'unknown'"):
        await client.complete([{"role": "user", "content": "unknown"}], role="target")
