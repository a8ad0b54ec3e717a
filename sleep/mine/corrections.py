"""Which prompts correct the answer before them, and what a correction asks for.

A correction is the person's test of the request it corrects, so recognising one decides
what a night learns. It is recognised by its shape, not by one opening word:
- a refusal or redirection: "no, …", "don't …", "never …", "instead, …", "actually …";
- a question that implies a miss: "did you run the tests?", "why did you …?";
- a report of what went wrong: "you dropped the old function, callers still use it",
  "it still fails", "that's a lot to read — just yes or no?";
- a bare replacement: "use logging, not print", "use logging instead of print";
- a pointer to the project's own convention: "pls use pathlib, like everywhere else",
  "could you add type hints? everything else in there has them";
- a reminder or a standing rule: "I said no test changes", "type hints from now on";
- a short report of a repeated miss: "os.path again..", "missing type hints again";
- a check on what was done: "you ran make test right?".
A short opening ("yes ok.", "and the tests?", "hmm") does not decide: the sentence after
it does; "please", "pls", "can you" before any of these change nothing.
A new request that merely contains "instead of" ("export it as JSON instead of the
table") is not one: it asks for something else, it does not reject the last answer. Nor
is a constraint that heads a new request ("don't touch the tests for this one: make
caption() say …"); a correction followed by the next request ("thx. type hints from now
on pls. next: add …") is both (`correction_and_request`).

Whether a prompt corrects the answer before it is decided by its structure
(sleep/mine/follow_up.py); these shapes are one of its signals.
"""

from __future__ import annotations

import re

_START = (
    r"(?:(?:ok(?:ay)?|yes|yeah|thanks|great|nice|sure|good|fine),?\s+but\b|"
    r"no\b|nope\b|nah\b|not quite\b|not that\b|not what\b|wrong\b|that'?s wrong|"
    r"don'?t\b|do not\b|stop\b|instead\b|actually\b|please don'?t\b|never\b|"
    r"never ?mind\b|nevermind\b|wait\b|hmm+\b|hold on\b|undo\b|revert (?:that|it|this)\b|"
    r"put (?:it|that|them|the \w+(?: \w+)?) back\b|roll (?:that|it) back\b|leave (?:it|them|the)\b|"
    # a reminder of what was asked before: "I said no test changes"
    r"(?:i|we) (?:said|told you|asked(?: you)?|already said)\b|as i said\b|"
    # a short report of a miss: "missing type hints again", "forgot the docstring"
    r"missing\b|forgot\b|"
    # keeping what the answer broke: "keep the old import path working"
    r"keep\b[^.?!\n]*\b(?:working|unchanged|intact|the same|compatible|old|existing)\b|"
    # keeping the change to what was asked: "keep the diff small", "keep changes minimal"
    r"keep (?:the |your |this )?(?:diff|change|changes|patch|edit|edits) (?:small|minimal|"
    r"focused|tight|short|to a minimum)\b|"
    # a question that says something was missed
    r"(?:did|have|has|didn'?t|haven'?t|hasn'?t|why did|why didn'?t|where did|how come)\s+"
    r"(?:you|it)\b|why (?:are|is) (?:you|it still)\b|"
    # a report of what the answer did wrong
    r"(?:you|it|this|that)\s+(?:still\s+)?(?:forgot|missed|dropped|removed|deleted|broke|"
    r"ignored|skipped|left|used|added|changed|renamed|didn'?t|did not|doesn'?t|does not|"
    r"fails?|failed|breaks?|is still|are still|still)\b|"
    r"(?:the )?tests? (?:still )?(?:fail|fails|failing|broke|are broken|don'?t pass)\b|"
    r"still (?:fails|failing|broken|wrong|the same)\b|"
    # about the answer's form
    r"(?:that'?s|that is|this is|it'?s|way)\s+(?:too|a lot|not|way too|far too|overkill|"
    r"more than|much too)\b|too (?:long|verbose|much)\b|"
    r"(?:shorter|less verbose|more concise|be (?:brief|concise)|keep it short|tl;?dr)\b|"
    r"just (?:tell|give|say|answer|yes|the (?:answer|command|name|number)|one (?:line|word))\b)"
)
# Politeness and its abbreviations change nothing: "pls use pathlib", "can you stop …"; nor
# does a conjunction that adds to what was said before ("also why is …", "and dont …").
_POLITE = (
    r"(?:(?:and|also|plus|oh|oh and|btw|and also)\s+)?"
    r"(?:(?:please|pls|plz|can (?:you|u)|could (?:you|u)|would (?:you|u)|will you)\s+)?"
)
_CORRECTION_START = re.compile(r"^\s*" + _POLITE + _START, re.IGNORECASE)
# "use logging instead of print", "switch to pathlib rather than os.path", "use X, not Y"
_REPLACEMENT = re.compile(
    r"^\s*" + _POLITE + r"(?:use|switch to|go with|stick (?:to|with)|prefer|make it|keep)\b"
    r"[^.?!\n]*?(?:\binstead of\b|\brather than\b|,\s*not\b|\bnot\b)",
    re.IGNORECASE,
)
# "logging, not print" — a bare pair, nothing else asked
_BARE_PAIR = re.compile(r"^\s*[`'\"]?[\w.()-]+[`'\"]?,?\s+not\s+[`'\"]?[\w.()-]+[`'\"]?\W*$", re.I)
# a short "use X" on its own ("use the standard library"): it redirects the last answer
_SHORT_USE = re.compile(r"^\s*" + _POLITE + r"(?:use|switch to|go with|stick (?:to|with))\b", re.I)
_SHORT_USE_WORDS = 6
_SHORT_DEMAND_WORDS = 12


# "one line please", "in one sentence": a short demand on the last answer's form
_BRIEFER = re.compile(
    r"^\s*(?:in |answer in )?(?:(?:one|1|a single)[- ](?:line|sentence|word)|short(?:er)? "
    r"(?:answer|version)|plain text|no (?:emojis?|markdown|formatting))\b",
    re.I,
)
# The project's own convention, which the last answer broke: "like everywhere else", "the
# rest of the file is pathlib", "everything else in there has them", "like fetch_rates does".
_CONVENTION = re.compile(
    r"\b(?:like|as) (?:everywhere|anywhere|everything) else\b|\b(?:everything|everywhere) else\b"
    r"[^.?!]{0,30}\b(?:has|have|uses?|does|is)\b|\bthe rest of (?:the|this|that|our) (?:file|code|"
    r"module|project|repo|codebase)\b|\bwe (?:have|use) (?:them|it|those|that) everywhere\b"
    # "every other function in units.py has one", "all the other handlers use it"
    r"|\b(?:every|each|all (?:the|of the)) other \w+\b[^?!\n]{0,40}\b(?:has|have|uses?|does|do|is|"
    r"are)\b"
    # the house rule, said as what "we" (no longer) do: "we dont do % formatting anymore"
    r"|\bwe (?:don'?t|dont|do not|never|no longer|stopped|always|only) (?:do|use|write|"
    r"doing|using|writing|commit|add)\b",
    re.IGNORECASE,
)
# A standing rule said about the last answer: "type hints on new functions from now on".
_STANDING = re.compile(r"\b(?:from now on|going forward|in (?:the )?future|next time)\b", re.I)
# What the person did not ask for, said of the last answer: "I didnt ask for that",
# "you rewrapped the signature for no reason", "nobody asked for a refactor".
_UNASKED = re.compile(
    r"\b(?:i|we) (?:didn'?t|didnt|did not|never) ask(?:ed)? (?:for|you to)\b|\bnobody asked\b|"
    r"\bfor no reason\b|\bwasn'?t (?:asked for|needed)\b|"
    # disbelief at what the answer did: ".format() in new code, really?"
    r",\s*(?:really|seriously)\s*\?",
    re.IGNORECASE,
)
# "docstring?", "and the tests?", "type hints?": a thing named as a question, nothing else
# said: where is it? (Not a question word on its own: "why?", "really?", "done?".)
_BARE_QUESTION = re.compile(
    r"^\s*(?:and\s+|also\s+)?(?:the\s+|any\s+|no\s+)?(?P<thing>[\w.()/-]+(?:\s+[\w.()/-]+)?)"
    r"\s*\?+\s*$",
    re.IGNORECASE,
)
_NOT_A_THING = frozenset(
    [
        "why",
        "what",
        "how",
        "when",
        "where",
        "who",
        "which",
        "really",
        "sure",
        "done",
        "ok",
        "okay",
        "huh",
        "seriously",
        "right",
        "yes",
        "no",
        "so",
        "and",
        "then",
        "again",
        "correct",
        "true",
        "hm",
        "hmm",
        "eh",
        "finished",
        "ready",
        "it",
        "that",
        "this",
        "well",
    ]
)
# "you ran make test right?": checking what the answer claims or skipped.
_TAG_QUESTION = re.compile(r"^\s*(?:so\s+)?you\b[^?]{0,80}\b(?:right|correct|yes)\s*\?\s*$", re.I)
# "os.path again..", "print again?": a short report that a miss came back.
_AGAIN = re.compile(r"^\s*(?:[^\s?!]+\s+){1,3}again\b\s*(?:[.?!…]|$)", re.I)
# A short opening that does not decide: "yes ok.", "and the tests?", "hmm,".
_OPENING = re.compile(r"^\s*(?P<head>[^.?!\n]{0,24}?(?:[.?!]+|\.\.+))\s+(?P<rest>\S.*)$", re.S)
_OPENING_WORDS = 3
# A constraint heading a new request: "don't touch the tests for this one: make caption()
# say …", "leave the tests alone - make organize.py skip …".
_HEADED = re.compile(r"^(?P<head>[^:\n]{3,80}?)(?::\s+|\s+[-—–]\s+)(?P<tail>.+)$", re.S)
# The tail opens as a request: a verb of work, or the code it is about ("caption() in
# album.py should say …"); not an explanation ("no, use pnpm: npm install breaks …").
_OPENS_REQUEST = re.compile(
    r"^\s*(?:(?:please|pls)\s+)?(?:add|make|write|fix|move|rename|remove|delete|create|update|"
    r"change|refactor|implement|give|let|have|split|extract|convert|replace|port|wire)\b|"
    r"^\s*(?:[\w-]+\.(?:py|js|ts|tsx|go|rs|rb|java|kt|c|h|cpp|md|toml|json|ya?ml|sh|sql)\b|"
    r"\w+\(\))",
    re.IGNORECASE,
)
_REQUEST_WORDS = 5
# What starts the next request after a correction: "… from now on pls. next: add …".
_NEXT = re.compile(r"(?<=[.!?])\s+(?:ok(?:ay)?,?\s+)?(?:next|now|then|and now)\s*[:,-]\s*", re.I)
# "run make test before you say it's done": a demand on how the last answer was reached
_BEFORE_YOU_SAY = re.compile(
    r"\bbefore (?:you )?(?:say|tell|claim|report|call)\w*\b[^.?!]*\bdone\b", re.IGNORECASE
)


def is_correction(text: str) -> bool:
    """Whether `text` corrects the answer before it (by its shape; see the module doc)."""
    if heads_a_request(text) or correction_and_request(text) is not None:
        return False
    if _shaped_as_correction(text):
        return True
    opening = _OPENING.match(text)
    if opening and len(opening.group("head").split()) <= _OPENING_WORDS:
        return _shaped_as_correction(opening.group("rest"))
    return False


def heads_a_request(text: str) -> bool:
    """A constraint followed by a new request of its own ("don't touch the tests for this
    one: make caption() say (undated)"): the request is new, the constraint its own."""
    headed = _HEADED.match(text)
    if headed is None:
        return False
    tail = headed.group("tail")
    return (
        len(tail.split()) >= _REQUEST_WORDS
        and bool(_OPENS_REQUEST.match(tail))
        and not _shaped_as_correction(tail)
    )


def correction_and_request(text: str) -> tuple[str, str] | None:
    """A correction of the last answer followed by the next request in one prompt ("thx.
    and type hints from now on pls. next: give index_lines a month filter"): (the
    correction, the request), or None."""
    split = head_and_next(text)
    if split is None or not is_correction(split[0]):
        return None
    return split


def head_and_next(text: str) -> tuple[str, str] | None:
    """A prompt that goes on to a next request ("… pls. next: add …"): (what comes before
    it, the request), or None; whether the head corrects is for the caller to say."""
    found = _NEXT.search(text)
    if found is None:
        return None
    head, tail = text[: found.start()].strip(), text[found.end() :].strip()
    if len(tail.split()) < _REQUEST_WORDS:
        return None
    return head, tail


def _shaped_as_correction(text: str) -> bool:
    words = len(text.split())
    if _CORRECTION_START.match(text) or _REPLACEMENT.match(text) or _BARE_PAIR.match(text):
        return True
    if _TAG_QUESTION.match(text) or _AGAIN.match(text) or _UNASKED.search(text):
        return True
    bare = _BARE_QUESTION.match(text)
    if bare and not set(bare.group("thing").lower().split()) & _NOT_A_THING:
        return True
    if (_CONVENTION.search(text) or _STANDING.search(text)) and words <= _SHORT_DEMAND_WORDS * 2:
        return True
    if _BEFORE_YOU_SAY.search(text) and words <= _SHORT_DEMAND_WORDS:
        return True
    if _BRIEFER.match(text) and words <= _SHORT_DEMAND_WORDS:
        return True
    return bool(_SHORT_USE.match(text)) and words <= _SHORT_USE_WORDS
