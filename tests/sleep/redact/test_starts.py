"""The rules tried only where a match can begin (sleep/redact/starts.py) find exactly what
trying every character finds: same spans, same kinds, same redacted text.

Test secrets are assembled at run time from pieces (`J(...)`), as in test_redact.py."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleep.redact import Redactor
from sleep.redact.redactor import _matches
from sleep.redact.rules import RULES
from sleep.redact.starts import NAME_REACH, name_starts, word_starts

J = "".join
FAST = Redactor()
# The reference: the same rules with every pattern run from every character.
EVERYWHERE = Redactor(tuple(dataclasses.replace(r, starts=None) for r in RULES))
WITH_STARTS = [r for r in RULES if r.starts is not None]

# Secret names, their kinds' words in three cases, what links a name to its value, and
# values: key-like, password-like, paths, long runs of name characters.
WORDS = [
    "token", "TOKEN", "Token", "secret", "SECRET", "api", "API", "_key", "-key", "key", "KEY",
    "apikey", "access", "private", "client", "auth", "credential", "credentials", "aws",
    "AWS", "bearer", "refresh", "session", "personal", "password", "PASSWORD", "passwd",
    "passphrase", "pwd", "Pwd", "s", "tokens", "my", "is", "the", "for", "prod",
]  # fmt: skip
GLUE = [" ", "  ", "\n", "\t", "=", ":", ":=", "=>", "->", "\u2192", "'", '"', "`", "(", ")",
        ".", "-", "_", "/", ",", "!", "$", "{", "[REDACTED:x]"]  # fmt: skip
VALUES = [
    J(["Ab3dEf5hIj", "7kLm9nOp1q"]), J(["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY"]),
    J(["hunter", "22"]), J(["Tr0ub4dor", "&3!"]), "~/.config/gh/hosts.yml", "a" * 60,
    "a." * 40, "x" * NAME_REACH, "2000000", "changeme", "user_input",
]  # fmt: skip
# Each kind the prose rules name, as one piece, so that kind, link and value meet often.
KINDS = [
    "aws secret key", "AWS Secret Access Key", "secret access key", "access key", "api key",
    "session token", "personal access token", "bearer token", "Refresh Token", "auth token",
    "client secret", "credentials", "db password", "passphrase", "the token is",
    "github_token", "AWS_SECRET_ACCESS_KEY", "my.api-key", "x_private_key", "auth_key",
    "ACCESS-KEY", "client_secret",
]  # fmt: skip
ASCII_PIECES = WORDS + KINDS + GLUE + VALUES
# Characters where the fast path must stand aside: `ſ` matches `s` and `K` (Kelvin)
# matches `k` case-insensitively, `İ`.lower() is two characters.
OTHER_PIECES = ["\u017f", "\u212a", "\u0130", "\u00e9", "\u2014"]

ascii_texts = st.lists(st.sampled_from(ASCII_PIECES), max_size=30).map("".join)
any_texts = st.lists(st.sampled_from(ASCII_PIECES + OTHER_PIECES), max_size=30).map("".join)


def _spans(rule, text):
    return [m.span() for m in _matches(rule, text, text.lower(), text.isascii(), {})]


@settings(max_examples=400)
@given(ascii_texts)
def test_each_rule_finds_what_trying_every_character_finds(text):
    for rule in WITH_STARTS:
        assert _spans(rule, text) == [m.span() for m in rule.pattern.finditer(text)], rule.kind


@pytest.mark.parametrize("kind", KINDS + WORDS)
def test_each_kind_before_a_value_is_found_where_it_begins(kind):
    for link in (" ", " is ", ": ", " = ", "=", '="', " -> ", " for prod is "):
        for value in VALUES[:4]:
            text = f"say {kind}{link}{value} now"
            for rule in WITH_STARTS:
                expected = [m.span() for m in rule.pattern.finditer(text)]
                assert _spans(rule, text) == expected, (rule.kind, text)


@settings(max_examples=400)
@given(any_texts)
def test_the_redactor_finds_the_same_secrets(text):
    assert FAST.spans(text) == EVERYWHERE.spans(text)
    assert FAST.redact(text) == EVERYWHERE.redact(text)


@pytest.mark.parametrize("gap", [NAME_REACH - 1, NAME_REACH, NAME_REACH + 1])
def test_a_name_whose_word_is_just_within_or_beyond_reach(gap):
    text = f"{'a' * gap}token = {J(['Ab3dEf5hIj', '7kLm9nOp1q'])}"
    assert FAST.spans(text) == EVERYWHERE.spans(text)
    assert bool(FAST.spans(text)) == (gap <= NAME_REACH)


@pytest.mark.parametrize(
    "text",
    [
        "the \u017fecret key is {}",  # ſ: an `s` to the regex engine, not to str.lower()
        "api_\u212aey = {}",  # the Kelvin sign: a `k` to both
        "token: {} \u2014 do not share",
    ],
)
def test_non_ascii_text_is_searched_everywhere(text):
    text = text.format(J(["Ab3dEf5hIj", "7kLm9nOp1q"]))
    assert FAST.spans(text) == EVERYWHERE.spans(text) != []


def test_start_words_are_lower_case_letters():
    for make in (word_starts, name_starts):
        with pytest.raises(ValueError):
            make(("token", "api_key"))
        with pytest.raises(ValueError):
            make(("Token",))
