"""The gate's density term, two ways; protected blocks are excluded from both (they are
not the optimizer's text).

`leading_word_density` is the published one: the share of a skill's words (runs of
letters and digits, any case) that are one of eleven leading words (MUST, ALWAYS, NEVER,
ONLY, CRITICAL, IMPORTANT, RESOLVE, PREFER, ENSURE, STRICT, VERIFY); the published gate
adds weight x that share to the score.

`rule_density` is ours (configs/features/density_gate.yaml): the share of words that
belong to imperative rules.

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


LEADING_WORDS = frozenset(
    [
        "must",
        "always",
        "never",
        "only",
        "critical",
        "important",
        "resolve",
        "prefer",
        "ensure",
        "strict",
        "verify",
    ]
)
ALNUM_WORD = re.compile(r"[A-Za-z0-9]+")


def leading_word_density(text: str) -> float:
    """The published density: leading words / all words, in [0, 1] (0.0 without words)."""
    words = [w.lower() for w in ALNUM_WORD.findall(without_protected_blocks(text))]
    return sum(w in LEADING_WORDS for w in words) / len(words) if words else 0.0


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
