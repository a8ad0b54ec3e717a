"""The `llm` strategy with its optimizer calls streamed (issue 15): the default optimizer
role (`stream: auto`, max_tokens 2048) streams from a real loopback server speaking SSE; a
finished streamed reply is applied, one cut at the token limit never is."""

from __future__ import annotations

import json

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.optimizer.llm import LLMOptimizer
from tests.core.models.helpers import ENV, TEST_KEY_VAR
from tests.core.optimizer.test_llm import ctx, four_edits, kind_of, results
from tests.support.loopback_openai import LoopbackOpenAI, Reply


@pytest.mark.parametrize(("finish", "applied"), [("stop", 4), ("length", 0)])
async def test_streamed_analyst_replies_apply_only_when_finished(tmp_path, finish, applied):
    def analyst(record):
        assert kind_of(record.messages) == "failure"
        return Reply(json.dumps(four_edits(None)), chunk_chars=6, finish_reason=finish)

    with LoopbackOpenAI(analyst) as server:
        optimizer = {
            "backend": "openai",
            "base_url": server.base_url,
            "model": "loopback-model",
            "api_key_env": TEST_KEY_VAR,
        }
        config = config_from_dict(
            {"models": {"optimizer": optimizer}, "cache": {"path": str(tmp_path / "c.sqlite")}}
        )
        events: list = []
        async with build_model_client(config, environ=ENV) as client:
            proposal = await LLMOptimizer(client).propose(ctx(results(2, 0), events=events))
    [request] = server.requests
    assert request.body["stream"] is True and request.body["max_tokens"] >= 2048
    assert len(proposal.edits) == applied
    if not applied:
        assert "reply truncated at the token limit" in events[0].text
