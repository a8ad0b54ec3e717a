"""Secrets named in prose ("access key AKIA… and secret wJalr…"), the ordinary prose that
must stay, and every rule bounded in time on hostile input.

Test secrets are assembled at run time from pieces (`J(...)`), as in test_redact.py."""

import pytest

from sleep.redact import Redactor
from tests.sleep.bounded import run_bounded

J = "".join
R = Redactor()
B40 = J(["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY"])
A20 = J(["Ab3dEf5hIj", "7kLm9nOp1q"])
HEX64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

# (text, kind, the secret that must disappear)
PROSE_SECRETS = [
    (f"my access key is AKIA{'IOSFODNN7EXAMPLE'} and secret {B40}.", "secret_in_prose", B40),
    (f"aws secret key: {B40}", "secret_in_prose", B40),
    (f"the AWS secret access key is {B40}", "secret_in_prose", B40),
    (f"Secret Key -> {B40}", "secret_in_prose", B40),
    (f"here is my api key {A20}, keep it safe", "secret_in_prose", A20),
    (f"my github token was {A20}xyz yesterday", "secret_in_prose", f"{A20}xyz"),
    (f"the session token {HEX64} expired", "secret_in_prose", HEX64),
    (f"client secret\n{A20}", "secret_in_prose", A20),
    (f"the token is ({A20})", "secret_in_prose", A20),
    (f"Credentials: {A20}", "assigned_secret", A20),  # a `name: value` form wins
    (f"use the refresh token {A20} for now", "secret_in_prose", A20),
    ("the db password is hunter22", "password_in_prose", "hunter22"),
    (J(["password for prod is ", "Tr0ub4dor&3!"]), "password_in_prose", "Tr0ub4dor&3!"),
    (J(["my root passphrase was ", "c0rrect-h0rse"]), "password_in_prose", "c0rrect-h0rse"),
    (J(["Password \u2192 ", "Zx9qW2eR"]), "password_in_prose", "Zx9qW2eR"),
]

PROSE_THAT_STAYS = [
    "the token is in ~/.config/gh/hosts.yml",
    "the token budget is 2000000",
    "the secret is to use a cache",
    "the password is incorrect",
    "the password is stored in Vault",
    "use the api key from settings.py",
    "the secret key is stored in /etc/app/secret-key-2024.pem",
    "the token refresh uses TokenRefreshHandler",
    "password reset for user_42 sent",
    "password = user_input",
    "the access key column is nullable",
    "the token is https://example.test/tokens/latest",
    "the secret is $AWS_SECRET_ACCESS_KEY",
    "the api key is <your-key-here>",
    "token counting in src/tokenizer/bpe_merges_v2.py is slow",
    "the secret sauce is internationalization",
    f"commit {HEX64[:40]} fixed the token refresh",
    "the credentials file at ~/.aws/credentials has two profiles",
    "set the password to changeme for the demo",
    "tokens per second went from 41.5 to 87.25",
    "a refresh token is valid for 30 days",
    "see /usr/lib/python3.11/site-packages/requests/auth.py for the token logic",
    "Supercalifragilisticexpialidocious is the secret word",
    "internationalization-2024-03-26-release-candidate and token limits",
]


@pytest.mark.parametrize(("text", "kind", "secret"), PROSE_SECRETS)
def test_a_secret_named_in_prose_is_redacted(text, kind, secret):
    result = R.redact(text)
    assert secret not in result.text, result.text
    assert kind in [f.kind for f in result.findings]
    assert all(secret not in f.context for f in result.findings)


@pytest.mark.parametrize("text", PROSE_THAT_STAYS)
def test_ordinary_prose_stays(text):
    result = R.redact(text)
    assert result.text == text, result.findings


def test_only_the_value_goes_and_the_sentence_stays():
    text = f"my access key is AKIA{'IOSFODNN7EXAMPLE'} and secret {B40}."
    assert R.redact(text).text == (
        "my access key is [REDACTED:aws_access_key_id] and secret [REDACTED:secret_in_prose]."
    )


# 200 KB runs after a secret's name: the name patterns used to restart at every `.` or
# `-` and rescan the run (62 s on 32 KB, so hours here); linear rules take milliseconds.
HOSTILE = [
    "'token ' + 'a.' * 100_000",
    "'secret ' + '-a' * 100_000",
    "'password ' + 'a-' * 100_000",
    "'://' + 'a+' * 100_000",
    "'token' * 40_000",
    "'token=' * 40_000",
    "'secret key ' + 'Ab1/' * 50_000",
    "'password is ' + 'a1!' * 70_000",
    "'token is ' * 20_000",
]


@pytest.mark.parametrize("expr", HOSTILE)
def test_redaction_is_bounded_in_time_on_hostile_text(expr):
    out = run_bounded(
        f"from sleep.redact import Redactor\nprint(len(Redactor().redact({expr}).text))"
    )
    assert int(out) > 0
