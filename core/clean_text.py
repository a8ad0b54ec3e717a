"""Text that can always be written as UTF-8, whatever a transcript held.

Why: JSON allows an escape such as `\\ud83d` with no partner, and Python reads it into a
str that every UTF-8 encode refuses (UnicodeEncodeError), so one stray escape in one
transcript would stop every later write of what we harvested: tasks.json, the night's
files, `--json` output. We replace such lone surrogates (and the halves of a pair that
came apart) with U+FFFD, at the harvest boundary and again in every writer of ours.
"""

from __future__ import annotations

from typing import Any


def clean_text(text: str) -> str:
    """`text` itself when it encodes as UTF-8, else with each lone surrogate as U+FFFD
    (a pair of halves written apart is joined back into its character)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_strings(value: Any) -> Any:
    """`value` (JSON-shaped: dicts, lists, strings, numbers) with every string, keys
    included, passed through `clean_text`; a value needing nothing comes back as it is."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_strings(k): clean_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean_strings(v) for v in value)
    return value


def utf8(text: str) -> bytes:
    """`text` as UTF-8 bytes, a lone surrogate written as U+FFFD instead of failing."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return clean_text(text).encode("utf-8")
