"""The density term of the published gate: the share of a skill's words that belong to
imperative rules, protected blocks excluded (they are not the optimizer's text).

A sentence (a line, split further at sentence ends) is a rule when, past list and
emphasis marks, it starts with an imperative verb or a directive ("never", "always",
"do not", "don't", "only"), or says "must"/"should". Words are runs of letters, digits and
apostrophes. The measure is deterministic and free, so the gate can fold it into its
threshold exactly (core.training.candidate_gate.density_margin). Our own word list: the
term rewards skills written as instructions rather than commentary.
"""

from __future__ import annotations

import re

from core.skill.protected_blocks import protected_spans

IMPERATIVE_STARTS = frozenset(
    [
        "add",
        "answer",
        "apply",
        "ask",
        "avoid",
        "be",
        "begin",
        "call",
        "check",
        "choose",
        "cite",
        "compare",
        "compute",
        "confirm",
        "consider",
        "convert",
        "copy",
        "count",
        "define",
        "delete",
        "describe",
        "determine",
        "do",
        "double-check",
        "drop",
        "ensure",
        "estimate",
        "explain",
        "extract",
        "fill",
        "find",
        "follow",
        "format",
        "give",
        "identify",
        "ignore",
        "include",
        "keep",
        "label",
        "limit",
        "list",
        "look",
        "make",
        "mark",
        "match",
        "name",
        "never",
        "note",
        "omit",
        "only",
        "output",
        "pick",
        "place",
        "prefer",
        "print",
        "produce",
        "provide",
        "put",
        "quote",
        "read",
        "record",
        "reject",
        "remove",
        "repeat",
        "replace",
        "report",
        "respond",
        "restate",
        "return",
        "reply",
        "round",
        "say",
        "search",
        "select",
        "separate",
        "show",
        "skip",
        "sort",
        "spell",
        "start",
        "state",
        "stop",
        "summarise",
        "summarize",
        "take",
        "tell",
        "test",
        "think",
        "trim",
        "try",
        "turn",
        "use",
        "verify",
        "wrap",
        "write",
        "always",
    ]
)
DIRECTIVES = re.compile(r"\b(?:must|should|do not|don't|never|always)\b", re.IGNORECASE)
WORD = re.compile(r"[A-Za-z0-9']+")
LEAD = re.compile(r"^\s*(?:(?:[-*+>]|#{1,6}|\d+[.)])\s+)*(?:\*\*|__|\*|_)?")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def without_protected_blocks(text: str) -> str:
    out, at = [], 0
    for block, _ in sorted(protected_spans(text), key=lambda p: p[0].start):
        if block.start >= at:
            out.append(text[at : block.start])
            at = block.end
    out.append(text[at:])
    return "".join(out)


def is_rule(sentence: str) -> bool:
    body = LEAD.sub("", sentence)
    words = WORD.findall(body)
    if not words:
        return False
    return words[0].lower() in IMPERATIVE_STARTS or bool(DIRECTIVES.search(body))


def rule_density(text: str) -> float:
    """Words in imperative rules / all words, in [0, 1] (0.0 for a skill without words)."""
    total = rules = 0
    for line in without_protected_blocks(text).splitlines():
        for sentence in SENTENCE_END.split(line):
            n = len(WORD.findall(sentence))
            total += n
            if n and is_rule(sentence):
                rules += n
    return rules / total if total else 0.0
