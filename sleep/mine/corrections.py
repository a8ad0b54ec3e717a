"""Which prompts correct the answer before them, and what a correction asks for.

A correction is the person's test of the request it corrects, so recognising one decides
what a night learns. It is recognised by its shape, not by one opening word:
- a refusal or redirection: "no, …", "don't …", "never …", "instead, …", "actually …";
- a question that implies a miss: "did you run the tests?", "why did you …?";
- a report of what went wrong: "you dropped the old function, callers still use it",
  "it still fails", "that's a lot to read — just yes or no?";
- a bare replacement: "use logging, not print", "use logging instead of print".
A new request that merely contains "instead of" ("export it as JSON instead of the
table") is not one: it asks for something else, it does not reject the last answer.

`redirected` marks an interrupted request followed by such a correction: the person
stopped the answer and said what they wanted of it ("never mind the long version, just
tell me …"), so that request is a task after all (sleep/mine/heuristic.py, sleep/mine/interrupted.py).
"""

from __future__ import annotations

import re
from typing import Any

_START = (
    r"(?:(?:ok(?:ay)?|yes|yeah|thanks|great|nice|sure|good|fine),?\s+but\b|"
    r"no\b|nope\b|nah\b|not quite\b|not that\b|not what\b|wrong\b|that'?s wrong|"
    r"don'?t\b|do not\b|stop\b|instead\b|actually\b|please don'?t\b|never\b|"
    r"never ?mind\b|nevermind\b|wait\b|hmm+\b|hold on\b|undo\b|revert (?:that|it|this)\b|"
    r"put (?:it|that|them) back\b|roll (?:that|it) back\b|leave (?:it|them|the)\b|"
    # keeping what the answer broke: "keep the old import path working"
    r"keep\b[^.?!\n]*\b(?:working|unchanged|intact|the same|compatible|old|existing)\b|"
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
_CORRECTION_START = re.compile(r"^\s*(?:please\s+)?" + _START, re.IGNORECASE)
# "use logging instead of print", "switch to pathlib rather than os.path", "use X, not Y"
_REPLACEMENT = re.compile(
    r"^\s*(?:please\s+)?(?:use|switch to|go with|stick (?:to|with)|prefer|make it|keep)\b"
    r"[^.?!\n]*?(?:\binstead of\b|\brather than\b|,\s*not\b|\bnot\b)",
    re.IGNORECASE,
)
# "logging, not print" — a bare pair, nothing else asked
_BARE_PAIR = re.compile(r"^\s*[`'\"]?[\w.()-]+[`'\"]?,?\s+not\s+[`'\"]?[\w.()-]+[`'\"]?\W*$", re.I)
# a short "use X" on its own ("use the standard library"): it redirects the last answer
_SHORT_USE = re.compile(r"^\s*(?:please\s+)?(?:use|switch to|go with|stick (?:to|with))\b", re.I)
_SHORT_USE_WORDS = 6
_SHORT_DEMAND_WORDS = 12


# "one line please", "in one sentence": a short demand on the last answer's form
_BRIEFER = re.compile(
    r"^\s*(?:in |answer in )?(?:one|1|a single)[- ](?:line|sentence|word)\b", re.I
)
# "run make test before you say it's done": a demand on how the last answer was reached
_BEFORE_YOU_SAY = re.compile(
    r"\bbefore (?:you )?(?:say|tell|claim|report|call)\w*\b[^.?!]*\bdone\b", re.IGNORECASE
)


def is_correction(text: str) -> bool:
    """Whether `text` corrects the answer before it (by its shape; see the module doc)."""
    if _CORRECTION_START.match(text) or _REPLACEMENT.match(text) or _BARE_PAIR.match(text):
        return True
    if _BEFORE_YOU_SAY.search(text) and len(text.split()) <= _SHORT_DEMAND_WORDS:
        return True
    if _BRIEFER.match(text) and len(text.split()) <= _SHORT_USE_WORDS:
        return True
    return bool(_SHORT_USE.match(text)) and len(text.split()) <= _SHORT_USE_WORDS


def redirected(prompts: list[dict[str, Any]], index: int) -> bool:
    """An interrupted prompt the person followed with a correction of what they asked."""
    if not prompts[index].get("interrupted"):
        return False
    after = next(
        (p for p in prompts[index + 1 :] if (p.get("text") or "").strip()),
        None,
    )
    if after is None or after.get("interrupted"):
        return False
    return is_correction((after.get("text") or "").strip())
