"""What a secret looks like: one rule per kind, each a pattern plus a check on the value.

Our own rules, not a detector library. detect-secrets 1.5.0 (the best-known Python one,
last released May 2024) was run on the tables in tests/sleep/redact/test_redact.py: it
found 28 of the 43 secrets (no JWTs, URL passwords, bearer/basic headers, connection
string passwords) and flagged 6 of the 50 harmless texts (`password = getpass()`,
`PASSWORD=changeme`, a sha256 digest). It also scans files, not strings, reports secret
values per line without spans, and keeps its settings in process-global state. The kinds
it knows are all covered below.
Each rule names the group that is the secret, so only the value is replaced and the name
around it stays readable (`AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from sleep.redact.starts import Starts, name_starts, word_starts


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    accept: Callable[[str], bool] | None = None
    # Lower-case strings one of which every match contains: the pattern runs only on a
    # text holding one (most prompts hold none, and the regexes are the harvest's cost).
    needles: tuple[str, ...] = ()
    # Where a match can begin, given the lower-cased text of an ASCII text: every start
    # `pattern.finditer` could report, and maybe more (the redactor tries each with
    # `pattern.match`). For the rules that open with a look-behind, which keeps Python's
    # regex engine from skipping ahead: it tries the whole pattern at every character, and
    # the two `token`/`key` rules were most of a harvest's time (sleep/redact/starts.py).
    starts: Starts | None = None


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )


def _keylike(value: str) -> bool:
    """Random-looking: upper, lower and digits (a slug such as `sk-terminal-config-2` is
    not)."""
    return _classes(value) == 3


PLACEHOLDERS = {
    "changeme",
    "change-me",
    "password",
    "secret",
    "redacted",
    "example",
    "your-key-here",
    "your_api_key",
    "yourpassword",
    "none",
    "null",
    "true",
    "false",
    "xxx",
    "xxxx",
    "xxxxxx",
    "...",
    "***",
    "******",
}


def _not_placeholder(value: str) -> bool:
    v = value.strip("'\"")
    if not v or v.lower() in PLACEHOLDERS or set(v) <= set("x*.-_<>"):
        return False
    return not v.startswith(("$", "{", "<", "%", "[REDACTED"))


def _password_value(value: str) -> bool:
    v = value.strip("'\"")
    if len(v) < 6 or not _not_placeholder(v) or v.isdigit():
        return False
    quoted = value[:1] in "'\""
    # A bare lower_snake identifier without digits is code (`password = user_input`).
    code_like = re.fullmatch(r"[a-z_][a-z0-9_]*", v) and ("_" in v or not any(map(str.isdigit, v)))
    return quoted or not code_like


def _token_value(value: str) -> bool:
    v = value.strip("'\"")
    return (
        len(v) >= 12
        and _not_placeholder(v)
        and not v.isdigit()
        and _classes(v) >= 2
        and any(c.isdigit() for c in v)
        and entropy(v) >= 3.0
    )


def _prose_value(value: str) -> bool:
    """Not a path, a URL, a file name or a variable: what follows a secret's name in
    prose is often the place it is kept ("the token is in ~/.config/gh/hosts.yml")."""
    return (
        _not_placeholder(value)
        and not value.startswith(("/", "~", "."))
        and "://" not in value
        and re.search(r"\.[a-z]{1,5}\Z", value) is None
    )


def _prose_token(value: str) -> bool:
    """Random-looking and long: 16+ characters, letters and digits, 3.5 bits per
    character (a word, a CamelCase name or a version number is not)."""
    return (
        len(value) >= 16
        and _prose_value(value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.5
    )


_SYMBOLS = frozenset("!@#$%^&*+=/~")


def _prose_password(value: str) -> bool:
    """A password said in prose ("the db password is hunter22"): letters with digits or
    symbols; an English word ("the password is incorrect") is not."""
    return (
        len(value) >= 8
        and _prose_value(value)
        and any(c.isalpha() for c in value)
        and any(c.isdigit() or c in _SYMBOLS for c in value)
        and entropy(value) >= 2.5
    )


# "access key AKIA… and secret wJalr…", "my password for prod is hunter22": a secret's
# kind, then at most four filler words, then the value. The filler words are a closed
# list so "the token budget is 2000000" or "the secret is to use a cache" stay.
_PROSE_FILLER = (
    r"(?:is|was|are|be|been|now|here|reads|of|to|as|set|it's|its|it|would|will|should|then"
    r"|for|the|my|our|your|this|that|db|database|server|account|user|root|admin|prod"
    r"|production|staging|dev|test|value|new|old|actual|real|just|again|i|we|use|used"
    r"|gave|got|changed|updated)"
)
_PROSE_LINK = (
    r"(?:\s*(?:[:=]|->|=>|\u2192))?"
    + r"(?:\s+"
    + _PROSE_FILLER
    + r"){0,4}"
    + r"(?:\s*(?:[:=]|->|=>|\u2192))?[\s\"'`(]+"
)
# The value: up to 200 characters that may hold symbols, ending on anything but sentence
# punctuation, followed by optional punctuation and a space or the end.
_PROSE_VALUE = (
    r"(?P<value>[A-Za-z0-9/+=_~.!@#$%^&*-]{5,199}[A-Za-z0-9/+=!@#$%^&*])(?=[.,;:!?)\"'`]*(?:\s|\Z))"
)
_PROSE_TOKEN_KIND = (
    r"(?:aws\s+secret(?:\s+access)?(?:\s+key)?|secret(?:\s+access)?\s+key|access\s+key"
    r"|api\s*key|(?:access|auth|api|bearer|refresh|session|personal\s+access)\s+token"
    r"|client\s+secret|token|secret|credentials?)"
)
_PROSE_PASSWORD_KIND = r"(?:password|passwd|passphrase|pwd)"
# The words each alternative of the kinds above and of the names below begins with (so
# every match of those rules begins at, or in the name holding, one of these).
_PROSE_TOKEN_WORDS = (
    "aws", "secret", "access", "api", "auth", "bearer", "refresh", "session", "personal",
    "client", "token", "credential",
)  # fmt: skip
_SECRET_WORDS = ("token", "secret", "api", "access", "private", "client", "auth", "credential")
_PASSWORD_WORDS = ("pass", "pwd")


_B = r"(?<![A-Za-z0-9_-])"  # a token boundary on the left
_E = r"(?![A-Za-z0-9_-])"  # ... and on the right


def _name(words: str) -> str:
    """A variable name holding one of `words`. It starts only where a name can start and
    is read once (`++`); which word it holds is a bounded look-ahead. The plain
    `[A-Za-z0-9_.-]*(?:words)[A-Za-z0-9_.-]*` was tried from every `.` or `-` of a run
    and rescanned it each time: 62 s on 32 KB of `a.a.a.` after "token"."""
    return r"(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]{0,100}?(?:" + words + r"))[A-Za-z0-9_.-]++"


_SECRET_NAME = _name(
    r"token|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|client[_-]?secret|auth[_-]?key|credential"
)
_PASSWORD_NAME = _name(r"password|passwd|passphrase|pwd")
_VALUE = r"""(?P<value>"[^"\s]{1,200}"|'[^'\s]{1,200}'|[^\s"'`,;()\[\]{}<>]{1,200})"""
_ASSIGN = r"""["']?\s*(?::|=|:=|=>)\s*"""
_NOT_CALL = r"(?![(\[.\w])"

RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END (?P=label)PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
        needles=("private key",),
    ),
    Rule(
        "jwt",
        re.compile(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*" + _E),
        needles=("eyj",),
    ),
    Rule(
        "anthropic_key",
        re.compile(_B + r"sk-ant-(?:[a-z]{2,6}\d{2}-)?[A-Za-z0-9_-]{20,}" + _E),
        needles=("sk-ant-",),
    ),
    Rule(
        "openai_key",
        re.compile(_B + r"sk-(?:proj-|svcacct-|admin-|None-)?(?P<body>[A-Za-z0-9_-]{20,})" + _E),
        accept=_keylike,
        needles=("sk-",),
    ),
    Rule(
        "aws_access_key_id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|AGPA|ANPA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])"
        ),
        needles=("akia", "asia", "abia", "acca", "aroa", "aida", "agpa", "anpa", "aipa"),
    ),
    Rule(
        "aws_secret_key",
        re.compile(
            r"(?i:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)"
            + _ASSIGN
            + r"""["']?(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"""
        ),
        group="value",
        needles=("secret",),
    ),
    Rule(
        "github_token",
        re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _E),
        needles=("gh", "github_pat_"),
    ),
    Rule(
        "gitlab_token",
        re.compile(_B + r"gl(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,}" + _E),
        needles=("gl",),
    ),
    Rule("slack_token", re.compile(_B + r"xox[abposr]-[A-Za-z0-9-]{10,}" + _E), needles=("xox",)),
    Rule(
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
        needles=("hooks.slack.com",),
    ),
    Rule("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E), needles=("aiza",)),
    Rule(
        "google_oauth_token", re.compile(_B + r"ya29\.[0-9A-Za-z_-]{20,}" + _E), needles=("ya29.",)
    ),
    Rule(
        "stripe_key",
        re.compile(_B + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}" + _E),
        needles=("_live_", "_test_"),
    ),
    Rule(
        "bearer_token",
        re.compile(r"(?i:\bbearer)\s+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)(?![A-Za-z0-9._~+/=-])"),
        group="value",
        accept=lambda v: _classes(v) >= 2 and any(c.isdigit() for c in v),
        needles=("bearer",),
    ),
    Rule(
        "basic_auth",
        re.compile(r"(?i:\bbasic)\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        group="value",
        accept=lambda v: v.endswith("=") or (_classes(v) >= 2 and len(v) >= 12),
        needles=("basic",),
    ),
    Rule(
        "url_password",
        re.compile(
            r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*+://[^\s:/?#@]*+:(?P<value>[^\s@/?#]++)@[^\s@]"
        ),
        group="value",
        accept=_not_placeholder,
        needles=("://",),
    ),
    Rule(
        "password",
        re.compile(r"(?i:" + _PASSWORD_NAME + r")" + _ASSIGN + _VALUE + _NOT_CALL),
        group="value",
        accept=_password_value,
        needles=("pass", "pwd"),
        starts=name_starts(_PASSWORD_WORDS),
    ),
    Rule(
        "assigned_secret",
        re.compile(r"(?i:" + _SECRET_NAME + r")" + _ASSIGN + _VALUE + _NOT_CALL),
        group="value",
        accept=_token_value,
        needles=("token", "secret", "key", "credential"),
        starts=name_starts(_SECRET_WORDS),
    ),
    # In prose, after every `name = value` form had its turn.
    Rule(
        "secret_in_prose",
        re.compile(
            r"(?<![A-Za-z0-9_-])" + _PROSE_TOKEN_KIND + r"s?" + _PROSE_LINK + _PROSE_VALUE,
            re.IGNORECASE,
        ),
        group="value",
        accept=_prose_token,
        needles=("token", "secret", "key", "credential"),
        starts=word_starts(_PROSE_TOKEN_WORDS),
    ),
    Rule(
        "password_in_prose",
        re.compile(
            r"(?<![A-Za-z0-9_-])" + _PROSE_PASSWORD_KIND + r"s?" + _PROSE_LINK + _PROSE_VALUE,
            re.IGNORECASE,
        ),
        group="value",
        accept=_prose_password,
        needles=("pass", "pwd"),
        starts=word_starts(_PASSWORD_WORDS),
    ),
)
