"""A server that answers HTTP 200 with garbage (not JSON, HTML, JSON of the wrong shape,
no choices / no content blocks / no text, token counts that are not counts) has not
answered, unstreamed or streamed: the reply is retried as a
transient error that says what was wrong, the call then fails as a model error, and
nothing is cached, so the next call (and a fresh run) asks the server again."""

from __future__ import annotations

import pytest

from core.models.factory import build_model_client
from core.models.types import ModelError
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply

SERVERS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}
ANY_BACKEND = [
    Fault.raw_bytes(200, b"not json at all"),
    Fault.raw_bytes(200, b"<html><body>proxy login</body></html>", "text/html"),
    Fault.raw_bytes(200, b"", "application/json"),
    Fault.raw(200, "a bare string"),
    Fault.raw(200, [1, 2, 3]),
    Fault.raw(200, {}),
    Fault.raw(200, {"id": "x", "error": None}),
    Fault.raw(200, {"error": {"message": "model overloaded", "type": "server_error"}}),
]
OPENAI_SHAPES = [
    Fault.raw(200, {"choices": []}),
    Fault.raw(200, {"choices": [{}]}),
    Fault.raw(200, {"choices": [{"message": {"role": "assistant"}}]}),
    Fault.raw(200, {"choices": [{"message": {"role": "assistant", "content": 42}}]}),
    Fault.raw(200, {"choices": "nope"}),
    Fault.raw(
        200, {"choices": [{"message": {"content": "Paris"}}], "usage": {"prompt_tokens": "many"}}
    ),
    Fault.raw(
        200, {"choices": [{"message": {"content": "Paris"}}], "usage": {"completion_tokens": -5}}
    ),
]
ANTHROPIC_SHAPES = [
    Fault.raw(200, {"type": "message", "role": "assistant", "content": []}),
    Fault.raw(200, {"type": "message", "content": [{"type": "text"}]}),
    Fault.raw(200, {"type": "message", "content": "a string"}),
    Fault.raw(200, {"type": "message", "content": [{"type": "text", "text": 7}]}),
    Fault.raw(200, {"content": [{"type": "text", "text": "Paris"}], "usage": {"input_tokens": -9}}),
]
CASES = [("openai", f) for f in ANY_BACKEND + OPENAI_SHAPES] + [
    ("anthropic", f) for f in ANY_BACKEND + ANTHROPIC_SHAPES
]


@pytest.mark.parametrize("stream", ["never", "always"])
@pytest.mark.parametrize(("backend", "garbage"), CASES, ids=lambda v: str(getattr(v, "body", v)))
async def test_garbage_200_is_retried_said_and_never_cached(tmp_path, backend, garbage, stream):
    with SERVERS[backend]() as server:
        server.queue(garbage, garbage, garbage)
        role = {"stream": stream}
        config = loopback_config(server.base_url, tmp_path, backend=backend, role=role)
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            with pytest.raises(ModelError) as caught:
                await client.complete(USER, role="target")
            said = str(caught.value)
            assert "gave up after 3 attempts" in said, said  # retried as a transient error
            assert any(why in said for why in ("malformed", "no text", "stream ended")), said
        # A fresh client on the same cache (a new run) asks the server again.
        server.queue(Reply("Paris"))
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            healthy = await client.complete(USER, role="target")
    # Not from the cache: the server was asked (request counts are not read here: the
    # loopback server may record a request after its reply has reached the client).
    assert healthy.text == "Paris" and not healthy.cached
