"""The retry policy on its own: which errors retry, how long it waits."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from core.models.retry import RetryPolicy, error_for_status, parse_retry_after
from core.models.types import AuthError, BadRequestError, ModelError, TransientError
from tests.core.models.helpers import FakeSleep


def flaky(failures: list[Exception]):
    calls = []

    async def call():
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return "done"

    return call, calls


async def test_backoff_grows_and_is_jittered():
    sleep = FakeSleep()
    policy = RetryPolicy(max_retries=4, base_delay_s=1.0, sleep=sleep, rng=random.Random(1))
    call, calls = flaky([TransientError("x") for _ in range(4)])
    assert await policy.run(call) == "done"
    assert len(calls) == 5
    assert len(sleep.delays) == 4
    for attempt, delay in enumerate(sleep.delays):
        assert 0.5 * 2**attempt <= delay <= 2**attempt
    assert any(delay != 2**attempt for attempt, delay in enumerate(sleep.delays))  # jittered


async def test_retry_after_is_a_floor():
    sleep = FakeSleep()
    policy = RetryPolicy(sleep=sleep)
    call, _ = flaky([TransientError("429", retry_after_s=9.0)])
    await policy.run(call)
    assert sleep.delays[0] >= 9.0


@pytest.mark.parametrize("error", [AuthError("no"), BadRequestError("bad")])
async def test_permanent_errors_are_not_retried(error):
    sleep = FakeSleep()
    call, calls = flaky([error])
    with pytest.raises(type(error)):
        await RetryPolicy(sleep=sleep).run(call)
    assert len(calls) == 1 and sleep.delays == []


async def test_exhausted_retries_become_a_model_error():
    call, calls = flaky([TransientError("HTTP 503: busy") for _ in range(3)])
    with pytest.raises(ModelError, match="gave up after 3 attempts: HTTP 503: busy") as info:
        await RetryPolicy(max_retries=2, sleep=FakeSleep()).run(call)
    assert not isinstance(info.value, TransientError) and len(calls) == 3


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, TransientError),
        (500, TransientError),
        (502, TransientError),
        (503, TransientError),
        (504, TransientError),
        (529, TransientError),
        (400, BadRequestError),
        (401, AuthError),
        (403, AuthError),
        (404, BadRequestError),
        (422, BadRequestError),
    ],
)
def test_status_classification(status, kind):
    error = error_for_status(status, "d", retry_after_s=None, credential="K", model="m")
    assert type(error) is kind


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 20 < parse_retry_after({"retry-after": later}) <= 30
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
