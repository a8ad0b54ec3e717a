"""Commit messages: a subject, a free body, and a final paragraph of `Key: value` trailers.

We write trailers ourselves and read them back with the same rule (the last paragraph, every
line `Key: value`), so parsing never depends on the user's `trailer.*` git config.
"""

from __future__ import annotations

import re

from core.clean_text import clean_text
from core.words import cut_marked

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")
_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*): ?(.*)$")


def one_line(value: object) -> str:
    return " ".join(str(value).split())


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def quoted_line(value: object, limit: int) -> str:
    """Text from a transcript (a request, a correction) as one line of a commit body: at
    most `limit` characters, control characters (git refuses a NUL) and lone surrogates
    replaced, so hostile text can never stop a staging."""
    return _clean_line(value)[:limit]


def marked_line(value: object, limit: int) -> str:
    """`quoted_line` that ends with "…" where it was cut (a cut verdict reads as another)."""
    return cut_marked(_clean_line(value), limit)


def _clean_line(value: object) -> str:
    return one_line(_CONTROL.sub(" ", clean_text(str(value))))


def build(subject: str, trailers: dict[str, str], body: str = "") -> str:
    subject = one_line(subject) or "(no summary)"
    parts = [subject]
    body = body.strip("\n")
    if body.strip():
        parts.append(body)
    if trailers:
        for key in trailers:
            if not _KEY.match(key):
                raise ValueError(f"bad trailer key {key!r}")
        parts.append("\n".join(f"{k}: {one_line(v)}" for k, v in trailers.items()))
    return "\n\n".join(parts) + "\n"


def parse(message: str) -> tuple[str, str, dict[str, str]]:
    """(subject, body, trailers) of a commit message."""
    text = message.replace("\r\n", "\n").strip("\n")
    paragraphs = re.split(r"\n\s*\n", text)
    subject = paragraphs[0].strip() if paragraphs else ""
    rest = paragraphs[1:]
    trailers: dict[str, str] = {}
    if rest:
        lines = rest[-1].split("\n")
        matches = [_LINE.match(ln) for ln in lines]
        if all(matches):
            trailers = {m.group(1): m.group(2) for m in matches if m}
            rest = rest[:-1]
    return subject, "\n\n".join(rest), trailers
