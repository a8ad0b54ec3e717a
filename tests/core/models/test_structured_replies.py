"""`models.<role>.structured` on real loopback servers: what each mode puts in the request
body for a reply shape's schema, per backend, and that the response cache tells the modes
apart (core/models/structured.py)."""

from __future__ import annotations

import json

import pytest

from core.config import ConfigError
from core.models import structured
from core.models.factory import build_model_client
from core.models.types import BadRequestError
from core.optimizer.json_reply import ANALYST_SHAPE, RANK_SHAPE, ask_json
from sleep.night.replay_env import VERDICT_SHAPE
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config
from tests.core.models.test_reasoning_settings import LoopbackAzure
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_anthropic import Reply as AnthropicReply
from tests.support.loopback_openai import LoopbackOpenAI, Reply

RANKED = json.dumps({"order": [1, 0], "reason": "b first"})


@pytest.fixture
def server():
    with LoopbackOpenAI() as srv:
        yield srv


def client_for(base_url, tmp_path, **role):
    backend = role.pop("backend", "openai")
    config = loopback_config(base_url, tmp_path, backend=backend, role=role)
    return build_model_client(config, environ=ENV, retry_sleep=FakeSleep())


async def ask(client, shape=RANK_SHAPE):
    return await ask_json(client.bind("target"), USER, shape)


async def test_schema_mode_sends_the_shapes_strict_schema(server, tmp_path):
    server.queue(Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured="schema") as client:
        reply = await ask(client)
    assert reply.ok and reply.value == {"order": [1, 0], "reason": "b first"}
    sent = server.requests[0].body["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "rank", "schema": RANK_SHAPE.schema, "strict": True},
    }
    assert sent["json_schema"]["schema"]["required"] == ["order", "reason"]


async def test_json_mode_sends_json_object(server, tmp_path):
    server.queue(Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured="json") as client:
        assert (await ask(client)).ok
    assert server.requests[0].body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("mode", ["off", "auto"])
async def test_off_and_auto_on_an_unknown_server_send_no_response_format(server, tmp_path, mode):
    # auto: a base_url of the user's is a server of unknown kind, which may reject the field.
    server.queue(Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured=mode) as client:
        assert (await ask(client)).ok
    assert "response_format" not in server.requests[0].body


async def test_unparseable_schema_reply_is_repaired_once_with_the_schema_again(server, tmp_path):
    server.queue(Reply("{not json"), Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured="schema") as client:
        reply = await ask(client)
    assert reply.ok and reply.repaired and reply.calls == 2
    first, repair = (r.body for r in server.requests)
    assert repair["response_format"] == first["response_format"]
    assert "{not json" in repair["messages"][1]["content"]


async def test_hosted_apis_get_the_schema_without_bounds(tmp_path):
    # Azure is a known backend whatever its endpoint: auto sends the schema, minus the
    # keywords hosted strict modes refuse (the judge's score range; the parser checks it).
    with LoopbackAzure() as azure:
        azure.queue(Reply(json.dumps({"score": 0.5, "reason": "ok"})))
        role = {"api_version": "2024-10-21", "backend": "azure"}
        async with client_for(azure.root_url, tmp_path, **role) as client:
            reply = await ask(client, VERDICT_SHAPE)
    assert reply.ok and reply.value == {"score": 0.5, "reason": "ok"}
    schema = azure.requests[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"] == {"type": "number"}
    assert VERDICT_SHAPE.schema["properties"]["score"]["maximum"] == 1  # kept in ours


async def test_anthropic_schema_mode_sends_output_config(tmp_path):
    with LoopbackAnthropic() as anthropic:
        anthropic.queue(AnthropicReply(RANKED))
        role = {"backend": "anthropic", "structured": "schema"}
        async with client_for(anthropic.base_url, tmp_path, **role) as client:
            assert (await ask(client)).ok
    body = anthropic.requests[0].body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": RANK_SHAPE.schema}}
    assert "response_format" not in body


async def test_a_free_text_reply_cached_under_off_is_not_replayed_as_a_schema_reply(
    server, tmp_path
):
    server.queue(Reply(RANKED), Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured="off") as client:
        assert (await ask(client)).ok
    async with client_for(server.base_url, tmp_path, structured="schema") as client:
        reply = await ask(client)
    assert reply.ok and not reply.completions[0].cached
    assert len(server.requests) == 2
    async with client_for(server.base_url, tmp_path, structured="schema") as client:
        assert (await ask(client)).completions[0].cached  # same mode: a hit


async def test_a_callers_own_response_format_is_kept(server, tmp_path):
    server.queue(Reply(RANKED))
    async with client_for(server.base_url, tmp_path, structured="off") as client:
        await ask_json(client.bind("target"), USER, RANK_SHAPE, response_format={"type": "text"})
    assert server.requests[0].body["response_format"] == {"type": "text"}


def test_an_unknown_mode_is_a_one_line_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        loopback_config("http://127.0.0.1:9/v1", tmp_path, role={"structured": "grammar"})
    message = str(err.value)
    assert "structured" in message and "'grammar' is not allowed" in message
    assert "\n" not in message


async def test_schema_mode_on_a_coding_agent_is_refused_on_first_call(tmp_path):
    config = loopback_config(
        "http://127.0.0.1:9/v1", tmp_path, backend="claude_code", role={"structured": "schema"}
    )
    client = build_model_client(config, environ=ENV)
    with pytest.raises(BadRequestError, match=r"models\.target\.structured is schema"):
        await client.complete(USER, role="target")


def test_auto_resolves_per_backend(tmp_path):
    def mode(**role):
        config = loopback_config("http://127.0.0.1:9/v1", tmp_path, role=role)
        return build_model_client(config, environ=ENV).runtime("target").structured

    assert mode() == "off"  # a custom OpenAI-compatible server
    assert mode(backend="local", base_url=None) == "schema"
    assert mode(backend="openai", base_url=None) == "schema"  # api.openai.com
    assert mode(backend="anthropic", base_url=None) == "schema"
    assert mode(backend="codex") == "off"
    assert mode(backend="codex", structured="json") == "json"


def test_analyst_shape_carries_a_schema():
    assert ANALYST_SHAPE.response_format["json_schema"]["name"] == "analyst"


def test_the_embedded_model_gets_a_bounded_schema_and_no_one_line_stop():
    # The embedded backend's default stop ends a one-line answer; a JSON reply may break
    # lines between values, so a schema call goes without it (the grammar ends the reply).
    settings = {
        "max_tokens": 512,
        "stop": ["\n"],
        "response_format": ANALYST_SHAPE.response_format,
    }
    sent = structured.apply(settings, "schema", "local")
    assert "stop" not in sent
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["analysis"]["maxLength"] > 0
    assert schema["properties"]["edits"]["maxItems"] >= 1
    assert structured.apply(settings, "off", "local") == {"max_tokens": 512, "stop": ["\n"]}
    assert structured.apply(settings, "json", "local")["response_format"] == {"type": "json_object"}
