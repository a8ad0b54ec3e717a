"""Diff lines as styled text, with the changed words inside a changed line picked out.

A run of removed lines followed by a run of added lines is paired line by line; within a
pair, words that differ get a stronger style, so a one-word edit in a long rule is easy to
see. Pure functions: the diff view and the hunk list both use them.
"""

from __future__ import annotations

import difflib
import re

from rich.text import Text

ADDED = "green"
REMOVED = "red"
ADDED_WORD = "bold black on green"
REMOVED_WORD = "bold black on red"
HEADER = "bold cyan"
FILE = "bold"
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def word_spans(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans that changed in `old` and in `new` (whole words, never half)."""
    a, b = tokens(old), tokens(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    a_pos = _offsets(a)
    b_pos = _offsets(b)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((a_pos[i1], a_pos[i2]))
        if j2 > j1:
            new_spans.append((b_pos[j1], b_pos[j2]))
    return old_spans, new_spans


def _offsets(toks: list[str]) -> list[int]:
    out = [0]
    for tok in toks:
        out.append(out[-1] + len(tok))
    return out


def styled_lines(lines: list[str]) -> list[Text]:
    """Unified-diff lines (with their +/-/space prefixes) as Text, word-highlighted."""
    out: list[Text] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("-") and not line.startswith("---"):
            removed = _run(lines, i, "-")
            added = _run(lines, i + len(removed), "+")
            out.extend(_paired(removed, added))
            i += len(removed) + len(added)
            continue
        out.append(_plain(line))
        i += 1
    return out


def _run(lines: list[str], start: int, prefix: str) -> list[str]:
    run = []
    for line in lines[start:]:
        if not line.startswith(prefix) or line.startswith(prefix * 3):
            break
        run.append(line)
    return run


def _paired(removed: list[str], added: list[str]) -> list[Text]:
    old_texts = [Text(r, style=REMOVED) for r in removed]
    new_texts = [Text(a, style=ADDED) for a in added]
    for old, new in zip(old_texts, new_texts, strict=False):
        old_spans, new_spans = word_spans(old.plain[1:], new.plain[1:])
        for start, end in old_spans:
            old.stylize(REMOVED_WORD, start + 1, end + 1)
        for start, end in new_spans:
            new.stylize(ADDED_WORD, start + 1, end + 1)
    return old_texts + new_texts


def _plain(line: str) -> Text:
    if line.startswith(("+++", "---")):
        return Text(line, style=FILE)
    if line.startswith("@@"):
        return Text(line, style=HEADER)
    if line.startswith("+"):
        return Text(line, style=ADDED)
    if line.startswith("-"):
        return Text(line, style=REMOVED)
    return Text(line)


def styled_diff(diff: str) -> Text:
    """A whole unified diff as one Text."""
    return Text("\n").join(styled_lines(diff.splitlines()))
