"""A test double asked for ("mock urlopen", "patch it out", "stub the network") is a check
on the test code the replay adds, and one need across its wordings (issue 37, round 6: on
the ledger corpus, a development corpus since then, none of the three "tests never go to
the network" corrections gave a check). Generic wordings written for this test beside the
corpus's."""

from __future__ import annotations

import re

import pytest

from sleep.mine.correction_checks import checks_for, concepts

ASKED = [
    "these tests call the real smtp server, mock smtplib.SMTP",
    "no sockets in unit tests, stub the network",
    "patch it out, the test shouldnt touch disk",
    "that test needs wifi to pass lol. monkeypatch fetch_rate",
    "no real http in tests, patch it out",
]
NOT_ASKED = ["the patch is wrong, it breaks the build", "use a fake name in the example"]


@pytest.mark.parametrize("text", ASKED)
def test_a_test_double_asked_for_is_a_check_on_the_added_code(text):
    """Fails on the old code: no check, and no shared need."""
    [check] = [c for c in checks_for(text, agentic=True) if c.kind == "diff_adds"]
    assert re.search(check.value, "    monkeypatch.setattr(rates, 'urlopen', fake_urlopen)")
    assert re.search(check.value, "@patch('smtplib.SMTP')")
    assert not re.search(check.value, "    assert total(rows) == 3")
    assert "test-double" in concepts(text)


@pytest.mark.parametrize("text", NOT_ASKED)
def test_a_patch_or_a_fake_said_otherwise_asks_for_none(text):
    """Guard: the noun is no request for a double."""
    assert checks_for(text, agentic=True) == [] and "test-double" not in concepts(text)
