"""Replace every secret in a text with `[REDACTED:<kind>]` and say what was replaced.

All rules look at the original text; where two matches overlap the earlier rule in
`RULES` wins (the specific kinds come before the generic `name = value` ones), and the
text is rebuilt once. Each finding carries the surrounding text of the *redacted* result,
so a preview never shows this secret or any other, only a hint (its first characters
and length) to recognise it by.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from sleep.redact.rules import RULES, Rule

CONTEXT_CHARS = 32


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Finding:
    kind: str
    context: str  # the redacted text around it, on one line
    hint: str  # e.g. "…(51 chars)": the length only, never a character of the secret


@dataclass
class Redacted:
    text: str
    findings: list[Finding] = field(default_factory=list)


def _hint(secret: str) -> str:
    """What a list of redactions may show of a secret: its length. Not its first
    characters: for a password (or a generic secret) they are part of what is secret,
    and the finding's kind already names what sort of key it was."""
    return f"…({len(secret)} chars)"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _matches(
    rule: Rule, text: str, lowered: str, ascii_text: bool, seen: dict[str, list[int]]
) -> Iterator[re.Match[str]]:
    """What `rule.pattern.finditer(text)` yields. With `rule.starts` (an ASCII text only)
    the pattern is tried only where a match can begin, in order, never inside the last
    match: the same leftmost, non-overlapping matches (none of these patterns matches the
    empty string), found without trying every character (sleep/redact/starts.py)."""
    if rule.starts is None or not ascii_text:
        yield from rule.pattern.finditer(text)
        return
    match, end = rule.pattern.match, 0
    for at in rule.starts(lowered, seen):
        if at < end:
            continue
        found = match(text, at)
        if found is not None:
            yield found
            end = found.end()


class Redactor:
    def __init__(self, rules: tuple[Rule, ...] = RULES) -> None:
        self.rules = rules
        # Each needle, and the rules it wakes; a text is looked at by the rules woken by
        # the needles it holds (and those without needles), in their order.
        self._needles = tuple(sorted({n for rule in rules for n in rule.needles}))
        self._woken = {n: [i for i, r in enumerate(rules) if n in r.needles] for n in self._needles}
        self._always = [i for i, r in enumerate(rules) if not r.needles]

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of each secret, without overlaps, in text order. The spans
        chosen so far are kept sorted (they never overlap one another), so whether a match
        overlaps one is a look at its two neighbours: comparing it with every span chosen
        was quadratic, 6.6 s for the 8,340 secrets of 300 KB."""
        chosen: list[tuple[int, int, str]] = []
        starts: list[int] = []
        lowered = text.lower()
        ascii_text = text.isascii()
        woken = set(self._always)
        for needle in self._needles:  # each looked for once, not once per rule
            if needle in lowered:
                woken.update(self._woken[needle])
        seen: dict[str, list[int]] = {}
        for index in sorted(woken):
            rule = self.rules[index]
            for match in _matches(rule, text, lowered, ascii_text, seen):
                start, end = match.span(rule.group)
                if start == end:
                    continue
                value = match.group(rule.group)
                if rule.accept is not None and not rule.accept(value):
                    continue
                at = bisect.bisect_right(starts, start)
                if at > 0 and chosen[at - 1][1] > start:
                    continue  # the span before it reaches into it
                if at < len(chosen) and chosen[at][0] < end:
                    continue  # it reaches into the span after it
                starts.insert(at, start)
                chosen.insert(at, (start, end, rule.kind))
        return chosen

    def redact(self, text: str) -> Redacted:
        spans = self.spans(text)
        if not spans:
            return Redacted(text)
        parts, where, pos = [], [], 0
        out_len = 0
        for start, end, kind in spans:
            parts.append(text[pos:start])
            out_len += start - pos
            mark = placeholder(kind)
            where.append((out_len, out_len + len(mark), kind, text[start:end]))
            parts.append(mark)
            out_len += len(mark)
            pos = end
        parts.append(text[pos:])
        result = "".join(parts)
        findings = []
        for s, e, kind, secret in where:
            left = result[max(0, s - CONTEXT_CHARS) : s]
            right = result[e : e + CONTEXT_CHARS]
            context = _one_line(f"{'…' if s > CONTEXT_CHARS else ''}{left}{result[s:e]}{right}")
            findings.append(Finding(kind, context, _hint(secret)))
        return Redacted(result, findings)
