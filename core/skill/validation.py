"""Free structural checks on a candidate skill, run before any rollout is spent on it.

A candidate that fails here is rejected without scoring and the problems go into the
rejected-edit buffer, so the optimizer learns why.

With `original` given, the candidate is judged on what it *adds*: a problem the original
already had (an unclosed fence, unbalanced markers, a chatter line, an oversize skill that
the candidate does not grow) is not held against it — otherwise one flaw in the user's
skill would reject every candidate forever.

Optimizer chatter is text the optimizer meant for us, not for the target agent. The
patterns (CHATTER) are anchored at the start of a line (after Markdown list, quote or
heading marks), skip fenced code, and require a first-person or meta phrase, so ordinary
skill prose addressed to the agent ("As an AI assistant, you ...", "Here is an example:")
does not trip them.
"""

from __future__ import annotations

import re

from core.skill.document import SkillDocument, SkillError
from core.skill.protected_blocks import marker_problems

_SKILL_NOUN = (
    r"(?:skill|skill document|document|version|skill\.md|instructions|prompt|system prompt)"
)

# (label, pattern) — each pattern is matched against a line with leading Markdown marks stripped.
CHATTER: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.IGNORECASE))
    for label, pattern in (
        (
            "presents the result ('Here is the updated skill')",
            r"^(?:sure|certainly|of course|okay|ok)?[,!.]?\s*(?:here\s+is|here's|below\s+is|"
            r"i\s+have\s+(?:included|provided)\s+)\s*(?:the|your|an?|my)\s+"
            r"(?:updated|revised|improved|new|modified|edited|final|rewritten|refined|optimi[sz]ed)\s+"
            + _SKILL_NOUN
            + r"\b",
        ),
        (
            "describes its own changes ('I have made the following changes')",
            r"^(?:i\s+have|i've|i)\s+(?:made|applied|added|implemented|incorporated)\s+"
            r"(?:the\s+following|these|some|several|a\s+few|a\s+number\s+of|\d+)?\s*"
            r"(?:small\s+|minor\s+|key\s+|targeted\s+)?"
            r"(?:changes|edits|modifications|updates|revisions|improvements)\b"
            r"|^the\s+following\s+(?:changes|edits)\s+(?:were|have\s+been)\s+made"
            r"|^(?:i\s+have|i've)\s+(?:updated|revised|rewritten|modified|edited|improved)\s+"
            r"(?:the|your)\s+" + _SKILL_NOUN + r"\b",
        ),
        (
            "labels the output ('Updated skill:')",
            r"^(?:the\s+)?(?:updated|revised|improved|new|modified|final)\s+"
            + _SKILL_NOUN
            + r"\s*:\s*$",
        ),
        (
            "speaks as an AI ('As an AI language model')",
            r"\bas\s+an\s+ai(?:\s+language)?\s+model\b|^as\s+an\s+ai\s*,\s*i\b",
        ),
        ("offers follow-up ('Let me know if ...')", r"^(?:please\s+)?let\s+me\s+know\s+if\s+you\b"),
        (
            "hopes it helps ('I hope this helps')",
            r"^i\s+hope\s+(?:this|these|that)\s+(?:helps|changes|edits|is\s+helpful)",
        ),
        (
            "refuses ('I'm sorry, but I can't')",
            r"^i(?:'m|\s+am)\s+sorry,?\s+but\s+i\s+(?:can't|cannot|can\s+not)",
        ),
        (
            'leaks edit JSON (\'"op": "replace"\')',
            r"\"op\"\s*:\s*\"(?:insert_after|append|replace|delete)\"",
        ),
    )
)

_LINE_LEAD = re.compile(r"^\s*(?:(?:[-*+>]|#{1,6}|\d+[.)])\s+)*(?:\*\*|__)?")
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_WRAPPER_INFO = re.compile(r"^\s*(?:markdown|md)?\s*$", re.IGNORECASE)


# The checks kept when `train.prevalidate` is off (published: nothing is checked before
# scoring): a candidate whose frontmatter or protected-block markers are broken cannot be
# staged into a skills repository or carry its blocks, whatever it would score.
STRUCTURAL = ("frontmatter", "markers")


def validate_candidate(
    text: str, *, max_chars: int, original: str | None = None, full: bool = True
) -> list[str]:
    """Problems that make `text` unfit to be scored ([] = valid), one line each. `full`
    False (train.prevalidate off, published) keeps only the STRUCTURAL checks: no size
    budget, no chatter, fence or wrapper checks."""
    found = _problems(text, max_chars)
    if original is not None:
        before = {key for key, _ in _problems(original, max_chars)}
        found = [
            (key, msg)
            for key, msg in found
            if key not in before or (key == ("size",) and len(text) > len(original))
        ]
        found += _frontmatter_regressions(text, original)
    if not full:
        found = [(key, msg) for key, msg in found if key[0].split("-")[0] in STRUCTURAL]
    return [msg for _, msg in found]


def _problems(text: str, max_chars: int) -> list[tuple[tuple[str, ...], str]]:
    found: list[tuple[tuple[str, ...], str]] = []
    try:
        doc = SkillDocument.parse(text)
        body, body_line = doc.body, doc.to_text()[: doc.body_start].count("\n")
    except SkillError as exc:
        found.append((("frontmatter",), str(exc)))
        body, body_line = text, 0
    if len(text) > max_chars:
        found.append(
            (
                ("size",),
                f"skill is {len(text)} characters, over the budget of {max_chars}; make it shorter",
            )
        )
    lines = body.splitlines()
    fenced = _fenced_lines(lines)
    opened = _unclosed_fence(lines)
    if opened is not None:
        number, fence = opened
        found.append(
            (("fence",), f"code fence {fence} opened on line {number + body_line} is never closed")
        )
    if _wrapped_whole(lines):
        found.append(
            (
                ("wrapped",),
                "the whole skill is wrapped in a ```markdown code fence; remove the wrapper",
            )
        )
    for index, line in enumerate(lines):
        if index in fenced:
            continue
        label = _chatter(line)
        if label:
            found.append(
                (
                    ("chatter", line.strip()),
                    f"optimizer chatter {label} on line {index + 1 + body_line}: {_short(line)}",
                )
            )
    for problem in marker_problems(text):
        found.append((("markers", problem), problem))
    return found


def _frontmatter_regressions(text: str, original: str) -> list[tuple[tuple[str, ...], str]]:
    try:
        before = SkillDocument.parse(original)
        after = SkillDocument.parse(text)
    except SkillError:
        return []  # a candidate parse failure is already reported
    if before.frontmatter is None:
        return []
    if after.frontmatter is None:
        return [(("frontmatter-removed",), "the frontmatter block was removed; keep it")]
    lost = []
    for key in ("name", "description"):
        if before.frontmatter.get(key) not in (None, "") and after.frontmatter.get(key) in (
            None,
            "",
        ):
            lost.append((("frontmatter-key", key), f"the frontmatter lost its '{key}'; keep it"))
    return lost


def _fence_open(line: str) -> tuple[str, str] | None:
    match = _FENCE.match(line)
    if match is None:
        return None
    fence, info = match.group("fence"), match.group("info")
    if fence[0] == "`" and "`" in info:
        return None  # inline code such as ```x``` is not a fence (CommonMark)
    return fence, info


def _closes(line: str, fence: str) -> bool:
    match = _FENCE.match(line)
    return (
        match is not None
        and match.group("fence")[0] == fence[0]
        and len(match.group("fence")) >= len(fence)
        and not match.group("info").strip()
    )


def _scan_fences(lines: list[str]) -> tuple[set[int], tuple[int, str] | None]:
    """Indices of lines inside fenced code (fence lines included), and an unclosed opener."""
    inside: set[int] = set()
    current: tuple[int, str] | None = None
    for index, line in enumerate(lines):
        if current is None:
            opened = _fence_open(line)
            if opened is not None:
                current = (index, opened[0])
                inside.add(index)
        else:
            inside.add(index)
            if _closes(line, current[1]):
                current = None
    return inside, current


def _fenced_lines(lines: list[str]) -> set[int]:
    return _scan_fences(lines)[0]


def _unclosed_fence(lines: list[str]) -> tuple[int, str] | None:
    opened = _scan_fences(lines)[1]
    return None if opened is None else (opened[0] + 1, opened[1])


def _wrapped_whole(lines: list[str]) -> bool:
    """True if the whole text sits in one code fence, as an optimizer's reply often does."""
    content = [i for i, line in enumerate(lines) if line.strip()]
    if len(content) < 2:
        return False
    first = _fence_open(lines[content[0]])
    if first is None or not _WRAPPER_INFO.match(first[1]):
        return False
    if not _closes(lines[content[-1]], first[0]):
        return False
    if first[1].strip():
        return True  # ```markdown ... ``` around everything
    # A bare ``` fence: only if it really spans everything (a skill may simply start and
    # end with code examples).
    inside, unclosed = _scan_fences(lines)
    return (
        unclosed is None
        and all(i in inside for i in range(content[0], content[-1] + 1))
        and not any(_closes(lines[i], first[0]) for i in range(content[0] + 1, content[-1]))
    )


def _chatter(line: str) -> str | None:
    stripped = _LINE_LEAD.sub("", line, count=1).strip()
    if not stripped:
        return None
    for label, pattern in CHATTER:
        if pattern.search(stripped):
            return label
    return None


def _short(line: str, limit: int = 60) -> str:
    flat = line.strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")
