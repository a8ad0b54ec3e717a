"""`models.<role>.stream` (issue 15): the auto rule, the config's validation and the
backends that cannot stream. The wire behaviour is in test_streaming_loopback.py."""

from __future__ import annotations

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.models.streaming import STREAM_FROM_TOKENS, wants_stream
from core.models.types import BadRequestError
from tests.core.models.helpers import ENV, USER


@pytest.mark.parametrize(
    ("mode", "max_tokens", "streams"),
    [
        ("auto", STREAM_FROM_TOKENS, True),
        ("auto", STREAM_FROM_TOKENS - 1, False),
        ("auto", 32_768, True),
        ("auto", None, False),  # no budget set: nothing says the reply is long
        ("always", 16, True),
        ("never", 32_768, False),
    ],
)
def test_the_rule(mode, max_tokens, streams):
    assert wants_stream(mode, max_tokens) is streams


def test_defaults_stream_target_optimizer_and_miner_but_not_the_judge():
    config = config_from_dict({})
    # The target's published 16,384-token budget: a long answer must not hit timeout_s.
    assert wants_stream("auto", config.models.target.max_tokens)
    assert not wants_stream("auto", config.models.judge.max_tokens)
    assert config.models.optimizer.stream == "auto"
    assert wants_stream("auto", config.models.optimizer.max_tokens)
    assert wants_stream("auto", config.models.miner.max_tokens)


def test_an_unknown_value_is_a_one_line_error_naming_the_key():
    with pytest.raises(ConfigError) as info:
        config_from_dict({"models": {"optimizer": {"stream": "sometimes"}}})
    message = str(info.value)
    assert "models.optimizer.stream" in message and "'auto', 'always' or 'never'" in message
    assert "\n" not in message


@pytest.mark.parametrize("mode", ["auto", "never"])
def test_backends_that_cannot_stream_never_do(mode):
    config = config_from_dict({"models": {"target": {"backend": "local", "stream": mode}}})
    assert build_model_client(config).runtime("target").stream == "never"


async def test_always_on_a_backend_that_cannot_stream_is_refused_at_its_first_call():
    config = config_from_dict(
        {
            "models": {"target": {"backend": "local", "stream": "always"}},
            "cache": {"enabled": False},
        }
    )
    async with build_model_client(config, environ=ENV) as client:
        with pytest.raises(
            BadRequestError, match=r"models\.target\.stream is always but the local"
        ):
            await client.complete(USER, role="target")
