"""Redaction tables: secrets that must go, and technical text that must stay.

Test secrets are assembled at run time from pieces (`J(...)`), so no committed file holds
a string that looks like a live credential to a secret scanner.
"""

import pytest

from sleep.redact import Redactor

J = "".join
R = Redactor()

A20 = "Ab3dEf5hIj7kLm9nOp1q"  # 20 mixed characters
B40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example secret shape
HEX40 = "7221ac0eac0f0cc9f50321217c57436ee8af605b"

# (text, kind that must be reported, the secret that must disappear)
TRUE_POSITIVES = [
    (J(["key: ", "sk-", A20, A20]), "openai_key", J(["sk-", A20, A20])),
    (
        J(["OPENAI_API_KEY=", "sk-", "proj-", A20, "_", A20, "-x9"]),
        "openai_key",
        J(["sk-", "proj-", A20, "_", A20, "-x9"]),
    ),
    (J(["use sk-", "svcacct-", A20, A20, " here"]), "openai_key", J(["sk-", "svcacct-", A20, A20])),
    (
        J(["sk-", "ant-", "api03-", A20, A20, "AA"]),
        "anthropic_key",
        J(["sk-", "ant-", "api03-", A20, A20, "AA"]),
    ),
    (
        J(["export ANTHROPIC_API_KEY='sk-", "ant-", "admin01-", A20, A20, "'"]),
        "anthropic_key",
        J(["sk-", "ant-", "admin01-", A20, A20]),
    ),
    (
        J(["aws id AKIA", "IOSFODNN7EXAMPLE", " ok"]),
        "aws_access_key_id",
        J(["AKIA", "IOSFODNN7EXAMPLE"]),
    ),
    (
        J(["ASIA", "Y34FZKBOKMUTVV7A", " is a session key"]),
        "aws_access_key_id",
        J(["ASIA", "Y34FZKBOKMUTVV7A"]),
    ),
    (J(["aws_secret_access_key = ", B40]), "aws_secret_key", B40),
    (J(["AWS_SECRET_ACCESS_KEY=", B40]), "aws_secret_key", B40),
    (J(['"SecretAccessKey": "', B40, '"']), "aws_secret_key", B40),
    (
        J(["token ghp_", A20, "Ab3dEf5hIj7kLm9nOp"]),
        "github_token",
        J(["ghp_", A20, "Ab3dEf5hIj7kLm9nOp"]),
    ),
    (J(["gho_", A20, A20]), "github_token", J(["gho_", A20, A20])),
    (
        J(["github_pat_", "11ABCDEFG0", "_", A20, A20]),
        "github_token",
        J(["github_pat_", "11ABCDEFG0", "_", A20, A20]),
    ),
    (J(["glpat-", A20]), "gitlab_token", J(["glpat-", A20])),
    (J(["CI uses glrt-", A20, "xy"]), "gitlab_token", J(["glrt-", A20, "xy"])),
    (
        J(["xoxb-", "1234567890-", "0987654321-", A20]),
        "slack_token",
        J(["xoxb-", "1234567890-", "0987654321-", A20]),
    ),
    (J(["xoxp-", "2222-3333-", A20]), "slack_token", J(["xoxp-", "2222-3333-", A20])),
    (
        J(
            [
                "https://hooks.slack.com/services/",
                "T00000000/",
                "B00000000/",
                "XXXXXXXXXXXXXXXXXXXXXXXX",
            ]
        ),
        "slack_webhook",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    (
        J(["AIza", "SyA", A20, "bcdefghijkl-"]),
        "google_api_key",
        J(["AIza", "SyA", A20, "bcdefghijkl-"]),
    ),
    (J(["ya29.", A20, A20]), "google_oauth_token", J(["ya29.", A20, A20])),
    (J(["sk_", "live_", A20, "1234"]), "stripe_key", J(["sk_", "live_", A20, "1234"])),
    (J(["rk_", "test_", A20]), "stripe_key", J(["rk_", "test_", A20])),
    (
        J(['curl -H "Authorization: Bearer ', "abc123DEF456ghi789", '" https://api.example.test']),
        "bearer_token",
        "abc123DEF456ghi789",
    ),
    (J(["Authorization: bearer ", A20, ".x"]), "bearer_token", J([A20, ".x"])),
    (J(["Authorization: Basic ", "dXNlcjpwYXNzd29yZA=="]), "basic_auth", "dXNlcjpwYXNzd29yZA=="),
    (
        J(["-H 'authorization: basic ", "YWxhZGRpbjpvcGVuc2VzYW1l", "'"]),
        "basic_auth",
        "YWxhZGRpbjpvcGVuc2VzYW1l",
    ),
    (
        J(
            [
                "eyJ",
                "hbGciOiJIUzI1NiJ9",
                ".",
                "eyJ",
                "zdWIiOiIxMjM0NTY3ODkwIn0",
                ".",
                "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ]
        ),
        "jwt",
        J(["eyJ", "zdWIiOiIxMjM0NTY3ODkwIn0"]),
    ),
    (
        J(
            [
                "cookie=",
                "eyJ",
                "0eXAiOiJKV1Qi",
                ".",
                "eyJ",
                "1c2VyIjoiYm9iIn0",
                ".",
                "sig_ABC123def",
            ]
        ),
        "jwt",
        "1c2VyIjoiYm9iIn0",
    ),
    (
        J(
            [
                "-----BEGIN ",
                "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
                A20,
                "\n-----END ",
                "RSA PRIVATE KEY-----",
            ]
        ),
        "private_key",
        "MIIEpAIBAAKCAQEA",
    ),
    (
        J(
            [
                "-----BEGIN ",
                "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END ",
                "OPENSSH PRIVATE KEY-----",
            ]
        ),
        "private_key",
        "b3BlbnNzaC1rZXktdjE",
    ),
    (
        J(["-----BEGIN ", "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0 (pasted, cut off)"]),
        "private_key",
        "MIIEvQIBADANBgkqhkiG9w0",
    ),
    (J(["postgres://app:", "s3cretPass", "@db.internal:5432/app"]), "url_password", "s3cretPass"),
    (
        J(["git clone https://bob:", "ghtok3nVal", "@git.example.test/x.git"]),
        "url_password",
        "ghtok3nVal",
    ),
    (J(["redis://:", "hunter22pw", "@cache:6379"]), "url_password", None),
    (J(["DB_PASSWORD=", "Tr0ub4dor&3"]), "password", "Tr0ub4dor&3"),
    (J(["password: ", "hunter22"]), "password", "hunter22"),
    (J(["Server=db;User Id=sa;Password=", "P4ssw0rd!", ";"]), "password", "P4ssw0rd!"),
    (J(['"passwd": "', "correct horse"[:7], 'battery"']), "password", "correctbattery"),
    (J(["PGPASSWORD=", "Zx9qW2eR"]), "password", "Zx9qW2eR"),
    (J(["api_token = '", "a8f3K2m9Q1x7Z4c6", "'"]), "assigned_secret", "a8f3K2m9Q1x7Z4c6"),
    (J(["CLIENT_SECRET=", "9fK2mQ8xR4vT1zW7"]), "assigned_secret", "9fK2mQ8xR4vT1zW7"),
    (J(["secret: ", "Hq7Lm2Np9Rs4Tv8X"]), "assigned_secret", "Hq7Lm2Np9Rs4Tv8X"),
    (
        J(["SENTRY_AUTH_TOKEN=", "d41d8cd98f00b204e9800998ecf8427e"]),
        "assigned_secret",
        "d41d8cd98f00b204e9800998ecf8427e",
    ),
]

# Ordinary technical text that must come out unchanged.
FALSE_POSITIVES = [
    "kiosk-terminal-config",
    "the kiosk-terminal-config-2024 file",
    "sk-learn-2024-release-notes-v2",
    "risk-assessment-framework-v3-final-draft",
    f"commit {HEX40}",
    f"git show {HEX40[:7]}",
    "uuid 01e77688-4b8a-48f6-9f86-673ecad76dc5",
    "thread 019eb255-d964-7f90-bba7-b7c366b902db",
    "image data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "![shot](data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDA0NDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDQ)",
    "/Users/sam/projects/weather_cli/weather_cli/api.py",
    "C:\\Users\\sam\\src\\app\\main.py",
    "/home/alex/.claude/projects/-home-alex-src-todo-web/01e77688.jsonl",
    "version 2.1.84 of claude, codex 0.137.0, python 3.11.7",
    "numpy==1.26.4 and torch>=2.3.0+cu121",
    "the slug quiet-amber-otter-42",
    "branch feat/units-flag-2026-06",
    "release-2026-03-26-rc1",
    "max_tokens=4096",
    "max_tokens: 8192",
    "token_type=bearer",
    "token budget is 200000 tokens",
    "password_min_length = 12",
    "password = getpass()",
    "password = user_input",
    'password = os.environ["DB_PASSWORD"]',
    "password: ${DB_PASSWORD}",
    "PASSWORD=changeme",
    "API_KEY=your-key-here",
    "OPENAI_API_KEY=$OPENAI_API_KEY",
    "export GITHUB_TOKEN=<token>",
    "the secret is to use a cache",
    "secret_key_base is generated by rails",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "use basic auth over https",
    "https://user@example.test/path",
    "https://example.test:8443/api?x=1",
    "ssh://git@github.com:22/org/repo.git",
    "postgres://app:${DB_PASS}@db/app",
    "AKIA is the prefix of AWS access key ids",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "msg_01Yq1Stz0gmFAoCWlOICqKd5 and toolu_01T67eYhnq8yteScEe1IyXVv",
    "call_tPHjNjLbmpwJHHLRKNCbwifN",
    "eyJhbGciOi is the start of a JWT header",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEw\n-----END PUBLIC KEY-----",
    "run `pytest -k test_token_refresh_42`",
    "TOKEN_TTL_SECONDS=3600",
    "the access_key column is nullable",
]


@pytest.mark.parametrize(("text", "kind", "secret"), TRUE_POSITIVES)
def test_secret_is_redacted(text, kind, secret):
    result = R.redact(text)
    assert kind in [f.kind for f in result.findings]
    assert f"[REDACTED:{kind}]" in result.text
    if secret:
        assert secret not in result.text
        for finding in result.findings:
            assert secret not in finding.context


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_technical_text_survives(text):
    result = R.redact(text)
    assert result.text == text, result.findings
    assert result.findings == []


def test_tables_are_big_enough():
    assert len(TRUE_POSITIVES) >= 40 and len(FALSE_POSITIVES) >= 40


def test_only_the_value_is_replaced_and_the_name_stays():
    text = J(["AWS_SECRET_ACCESS_KEY=", B40, "\nAWS_REGION=eu-north-1"])
    assert (
        R.redact(text).text
        == "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]\nAWS_REGION=eu-north-1"
    )


def test_a_preview_context_never_shows_a_neighbouring_secret():
    one, two = J(["ghp_", A20, A20]), J(["glpat-", A20])
    result = R.redact(f"first {one} then {two} done")
    assert [f.kind for f in result.findings] == ["github_token", "gitlab_token"]
    for finding in result.findings:
        assert one not in finding.context and two not in finding.context
    assert result.findings[0].hint == "…(44 chars)"


def test_the_hint_shows_none_of_a_secrets_characters():
    """Issue 35: a 16+ character secret's first three characters were shown."""
    secret = "Tr0ub4dor&3-horse-battery"
    result = R.redact(f"the db password={secret} please")
    assert result.findings, "the password is found"
    for finding in result.findings:
        assert finding.hint == f"…({len(secret)} chars)"
        assert not any(secret[:n] in finding.hint for n in (1, 2, 3))


def test_multiline_private_key_is_one_redaction():
    pem = J(["-----BEGIN ", "EC PRIVATE KEY-----\nAAA\nBBB\n-----END ", "EC PRIVATE KEY-----"])
    result = R.redact(f"key:\n{pem}\nafter")
    assert result.text == "key:\n[REDACTED:private_key]\nafter"
