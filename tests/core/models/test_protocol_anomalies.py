"""Issue 9: a reply with `content: null` or no text at all is a protocol anomaly, not an
empty answer: it is retried, then fails as a model error, and it is never cached (a cached
empty answer would be replayed by every later run without asking the server)."""

from __future__ import annotations

import pytest

from core.models.factory import build_model_client
from core.models.types import ModelError
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import LoopbackOpenAI, Reply

SERVERS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize("text", [None, ""])
async def test_empty_reply_is_retried_then_an_error_and_never_cached(tmp_path, backend, text):
    with SERVERS[backend]() as server:
        anomaly = Reply(text, input_tokens=5, output_tokens=0)
        server.queue(anomaly, anomaly, anomaly)
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            with pytest.raises(ModelError, match="no text"):
                await client.complete(USER, role="target")
            assert len(server.requests) == 3  # the first try and max_retries=2 retries
            server.queue(Reply("Paris"))
            healthy = await client.complete(USER, role="target")
    assert healthy.text == "Paris" and not healthy.cached
    assert len(server.requests) == 4  # the healthy server was asked, not the cache
