"""Where a match of a look-behind rule can begin, found fast.

Python's regex engine skips ahead to where a match can begin only when a pattern opens
with a literal or a character set. The name and prose rules open with a look-behind (`not
after a letter`), so `finditer` runs the whole pattern from every character of the text:
about 0.2 µs a character for each of the two rules that any text with "token" or "key"
wakes, most of a harvest's time. Their matches all begin at one of a few words (the
prose rules) or at the start of a name holding one within its first 100 characters (the
`name = value` rules). `str.find` finds those words quickly in the lower-cased text; the
redactor then tries the rule's own pattern at each of those places only
(sleep/redact/redactor.py).

Only for ASCII texts: there `text.lower()` keeps every index and a case-insensitive match
is a match of the lower-cased text. Elsewhere (`İ`.lower() is two characters, `ſ` matches
`s` without being its lower case) the redactor runs the pattern everywhere, as before.
"""

from __future__ import annotations

from collections.abc import Callable

# The characters a name is made of (rules._name), lower-cased.
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
# How far into a name its word may begin (the `{0,100}?` look-ahead of rules._name).
NAME_REACH = 100


def _checked(words: tuple[str, ...]) -> tuple[str, ...]:
    if not all(w and w.isascii() and w.isalpha() and w.islower() for w in words):
        raise ValueError("start words are lower-case ASCII letters")
    return words


def _occurrences(lowered: str, words: tuple[str, ...], seen: dict[str, list[int]]) -> list[int]:
    """Every index where one of the words begins, in order, overlapping ones too. With
    `str.find`: a regex alternation of the words is several times slower, as the engine
    tries them one by one at every letter one of them begins with. `seen` keeps each
    word's indices for the other rules looking at the same text."""
    found: list[int] = []
    for word in words:
        at_word = seen.get(word)
        if at_word is None:
            at_word = seen[word] = []
            at = lowered.find(word)
            while at >= 0:
                at_word.append(at)
                at = lowered.find(word, at + 1)
        found += at_word
    found.sort()
    return found


Starts = Callable[[str, dict[str, list[int]]], list[int]]


def word_starts(words: tuple[str, ...]) -> Starts:
    """Starts for a rule whose every match begins with one of `words`."""
    words = _checked(words)

    def starts(lowered: str, seen: dict[str, list[int]]) -> list[int]:
        return _occurrences(lowered, words, seen)

    return starts


def name_starts(words: tuple[str, ...]) -> Starts:
    """Starts for a rule whose every match begins where a name begins (not after a name
    character) and the name holds one of `words` within its first NAME_REACH characters:
    for each word found, the start of its name, if that is near enough. Walking back is
    bounded by NAME_REACH, so a long run of names costs linear time."""
    words = _checked(words)

    def starts(lowered: str, seen: dict[str, list[int]]) -> list[int]:
        found: list[int] = []
        for at in _occurrences(lowered, words, seen):
            begin, stop = at, max(0, at - NAME_REACH)
            while begin > stop and lowered[begin - 1] in _NAME_CHARS:
                begin -= 1
            if begin > 0 and lowered[begin - 1] in _NAME_CHARS:
                continue  # the name began further back: this word is out of its reach
            if not found or found[-1] != begin:  # words of one name share its start
                found.append(begin)
        return found

    return starts
