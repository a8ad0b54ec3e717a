"""Failures the SDKs let through from their HTTP stack: a bad base_url fails fast with a
one-line BadRequestError naming the setting; a refused connection stays transient."""

from __future__ import annotations

import socket

import pytest

from core.config import Config
from core.models.factory import build_model_client
from core.models.transport_errors import public_url, unexpected_error
from core.models.types import BadRequestError, RetriesExhausted, TransientError
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config

BAD_URLS = [
    "http://127.0.0.1:99999/v1",  # port out of range: anyio's ExceptionGroup(OverflowError)
    "http://127.0.0.1:abc/v1",  # httpx InvalidURL
    "ftp://127.0.0.1/v1",  # httpx UnsupportedProtocol, wrapped as a "connection error"
]


def with_base_url(config: Config, url: str) -> Config:
    """The config with models.target.base_url set WITHOUT validation: the config refuses
    these URLs up front; this exercises the backends' backstop behind it."""
    target = config.models.target.model_copy(update={"base_url": url})
    models = config.models.model_copy(update={"target": target})
    return config.model_copy(update={"models": models})


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize("url", BAD_URLS)
async def test_bad_base_url_is_a_one_line_bad_request_naming_the_setting(tmp_path, backend, url):
    sleep = FakeSleep()
    config = with_base_url(loopback_config("http://127.0.0.1:1/v1", tmp_path, backend=backend), url)
    async with build_model_client(config, environ=ENV, retry_sleep=sleep) as client:
        with pytest.raises(BadRequestError) as info:
            await client.complete(USER, role="target")
    message = str(info.value)
    assert f"models.target.base_url {url!r} is not a usable URL" in message
    assert "\n" not in message and "TaskGroup" not in message
    assert sleep.delays == []  # a configuration mistake is never retried


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_refused_connection_is_still_transient_and_retried(tmp_path, backend):
    sleep = FakeSleep()
    url = f"http://127.0.0.1:{free_port()}" + ("/v1" if backend == "openai" else "")
    config = loopback_config(url, tmp_path, backend=backend)  # max_retries=2
    async with build_model_client(config, environ=ENV, retry_sleep=sleep) as client:
        with pytest.raises(RetriesExhausted, match="gave up after 3 attempts: connection failed"):
            await client.complete(USER, role="target")
    assert len(sleep.delays) == 2


def test_exception_groups_are_classified_by_their_members():
    where = {"url": "http://h:1/v1", "setting": "models.judge.base_url"}
    refused = ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionRefusedError(111, "no")])
    assert isinstance(unexpected_error(refused, **where), TransientError)
    odd = ExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("event loop gone")])
    mapped = unexpected_error(odd, **where)
    assert isinstance(mapped, BadRequestError)
    assert str(mapped) == (
        "unexpected failure reaching http://h:1/v1 (RuntimeError: event loop gone); "
        "check models.judge.base_url"
    )


@pytest.mark.parametrize(
    "bug", [TypeError("bad kwarg"), ExceptionGroup("g", [AttributeError("x")])]
)
def test_programming_errors_are_not_mapped(bug):
    # None tells the backend to re-raise as is: a bug keeps its traceback.
    assert unexpected_error(bug, url="http://h/v1", setting="models.target.base_url") is None


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("http://user:pw@gpu-box:8000/v1/?key=s", "http://gpu-box:8000/v1"),
        ("http://user:pw@[bad/v1", "http://[bad/v1"),  # unparsable, still stripped
        ("http://127.0.0.1:99999/v1", "http://127.0.0.1:99999/v1"),
    ],
)
def test_public_url_drops_credentials_and_never_raises(url, public):
    assert public_url(url) == public
