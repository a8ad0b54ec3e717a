"""Words as a person reads them: counts ("1 step", "2 steps", never "1 steps"), and cut
text that says it was cut."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, singular for exactly one; `plural` where adding an s is wrong."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def cut_marked(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters, ending with "…" where it was cut:
    a silent cut can read as something else ("mined checks" for "mined checks 5/5
    passed", issue 37)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
