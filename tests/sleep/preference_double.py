"""TEST DOUBLE for the preference gate's night (tests/sleep/test_preference_night.py): one
deterministic brain for every role, so the night's decision can be asserted exactly. Not
a model.

- target: asked for a debug message, it writes `print(...)` unless its instruction file
  (the system message) says to use logging; asked what a module is for, it says so in a
  sentence, or in one word when its instruction file asks for one-word answers;
- judge: a rubric about logging passes (1.0) a reply that logs and does not print, else
  0.2; a rubric about a module passes a reply that says what it "is for", else 0.2;
- optimizer: proposes one rule, fixed per brain: `brain_rule` the preference's,
  `brain_irrelevant` one that changes no reply, `brain_guard_breaker` the preference's
  plus one that breaks the module answers (a guard).
Load by import path, e.g. `tests.sleep.preference_double:brain_rule`.
"""

from __future__ import annotations

import json
import re

from core.models.scripted import last_user_text

PREFERENCE_RULE = "Use the logging module for debug output; never print()."
IRRELEVANT_RULE = "Write commit messages in the imperative mood."
GUARD_BREAKER = PREFERENCE_RULE + "\nKeep every answer to one word."
DEBUG_PROMPT = "add a debug message when the {part} module starts"
EXPLAIN_PROMPT = "explain what the {part} module is for, in a sentence"


def _target(messages) -> str:
    skill = next((m["content"] for m in messages if m["role"] == "system"), "")
    question = messages[-1]["content"]
    found = re.search(r"the (\S+) module", question)
    part = found.group(1) if found else "main"
    if "debug message" in question:
        if "logging" in skill:
            return f"Added `logging.getLogger(__name__).debug('{part} starting')`."
        return f"Added `print('{part} starting')`."
    if "one word" in skill:
        return "Handlers."
    return f"The {part} module is for handling {part} requests."


def _judge(prompt: str) -> str:
    reply = prompt.split("## Reply", 1)[1].split("Answer with one JSON", 1)[0]
    rubric = prompt.split("## Rubric", 1)[1].split("## Reply", 1)[0]
    if "logging" in rubric:
        ok = "logging" in reply and "print(" not in reply
        why = "logs, no print" if ok else "prints instead of logging"
    else:
        ok = "is for" in reply
        why = "says what it is for" if ok else "does not say what it is for"
    return json.dumps({"score": 1.0 if ok else 0.2, "reason": why})


class Brain:
    def __init__(self, rule: str) -> None:
        self.rule = rule

    def __call__(self, request) -> str:
        text = last_user_text(request)
        if "You are grading one reply" in text:
            return _judge(text)
        if "Rank candidate edits" in text:
            return json.dumps({"order": [1]})
        if '"edits"' in text:
            edit = {"op": "append", "content": self.rule, "rationale": "what the user corrected"}
            return json.dumps({"analysis": "the user corrects print", "edits": [edit]})
        return _target(request.messages)


def brain_rule() -> Brain:
    return Brain(PREFERENCE_RULE)


def brain_irrelevant() -> Brain:
    return Brain(IRRELEVANT_RULE)


def brain_guard_breaker() -> Brain:
    return Brain(GUARD_BREAKER)
