"""TEST DOUBLE for the preference gate's night (tests/sleep/test_preference_night.py): one
deterministic brain for every role, so the night's decision can be asserted exactly. Not
a model.

- target: asked for a debug message, it writes `print(...)` unless its instruction file
  (the system message) says to use logging; asked what a module is for, it says so in a
  sentence, or in one word when its instruction file asks for one-word answers;
- judge: a rubric about logging passes (1.0) a reply that logs and does not print, else
  0.2; a rubric about a module passes a reply that says what it "is for", else 0.2;
- optimizer: proposes rules, fixed per brain: `brain_rule` the preference's,
  `brain_irrelevant` one that changes no reply, `brain_guard_breaker` the preference's
  plus one that breaks the module answers (a guard), `brain_rule_and_irrelevant` the
  preference's and the irrelevant one as two edits, `brain_rule_and_claimed` the
  preference's and one that changes no reply but names the same preference (as an
  analyst might tie a generic rule to a moved item), `brain_two_rules` the logging rule and
  the yes-or-no rule, `brain_project_facts` the preference's rule worded with a file of
  the project. As an analyst following sleep/prompts/analyst_guide.md would, an edit for a
  preference names the id the prompt showed next to that preference's request
  (`preference p-…`), or, in a merge prompt, the id its proposed edit already names; the
  irrelevant rule names none.
- target, also: asked whether a part's tests pass, it answers "Yes, …" when its
  instruction file asks for yes or no first, else at length; the judge passes a reply to
  that rubric only when it starts with yes or no.
Load by import path, e.g. `tests.sleep.preference_double:brain_rule`.
"""

from __future__ import annotations

import json
import re

from core.models.scripted import last_user_text

PREFERENCE_RULE = "Use the logging module for debug output; never print()."
IRRELEVANT_RULE = "Write commit messages in the imperative mood."
GUARD_BREAKER = PREFERENCE_RULE + "\nKeep every answer to one word."
YES_NO_RULE = "Answer a yes-or-no question with yes or no first, then one line of why."
FACTS_RULE = "Use the logging module for debug output in app.py; never print()."
CLAIMED_RULE = "Never hedge: say the likely answer."  # changes no reply, claims the logging id
DEBUG_PROMPT = "add a debug message when the {part} module starts"
EXPLAIN_PROMPT = "explain what the {part} module is for, in a sentence"
TESTS_PROMPT = "do the {part} module tests pass?"
# what each rule's rationale says after its preference's id, and the request it is for
_TAGS = {PREFERENCE_RULE: ("logging", "debug message"), YES_NO_RULE: ("yes-or-no", "tests pass")}
_TAGS[FACTS_RULE] = _TAGS[GUARD_BREAKER] = _TAGS[CLAIMED_RULE] = _TAGS[PREFERENCE_RULE]
_ID = r"(p-[0-9a-f]{10})"


def _target(messages) -> str:
    skill = next((m["content"] for m in messages if m["role"] == "system"), "")
    question = messages[-1]["content"]
    found = re.search(r"the (\S+) module", question)
    part = found.group(1) if found else "main"
    if "tests pass" in question:
        if "yes or no first" in skill:
            return f"Yes, the {part} tests pass."
        return f"I ran the {part} module's tests with the project's runner and every one passed."
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
    if "yes or no" in rubric:
        ok = reply.strip().lower().startswith(("yes", "no"))
        why = "yes or no first" if ok else "does not start with yes or no"
    elif "logging" in rubric:
        ok = "logging" in reply and "print(" not in reply
        why = "logs, no print" if ok else "prints instead of logging"
    else:
        ok = "is for" in reply
        why = "says what it is for" if ok else "does not say what it is for"
    return json.dumps({"score": 1.0 if ok else 0.2, "reason": why})


def _named(text: str, rule: str) -> str:
    """The rationale of `rule`'s edit: its preference's id where the prompt shows one."""
    tag, request = _TAGS.get(rule, ("", ""))
    found = tag and (
        re.search(_ID + ": " + re.escape(tag), text)  # a merge prompt: the proposed edit's
        # an analyst prompt: the item's question, its prediction, then the id
        or re.search(re.escape(request) + r"[^\n]*\nprediction: [^\n]*\npreference " + _ID, text)
    )
    return f"{found.group(1)}: {tag}, what the person corrected" if found else "a general habit"


class Brain:
    def __init__(self, *rules: str) -> None:
        self.rules = rules

    def __call__(self, request) -> str:
        text = last_user_text(request)
        if "You are grading one reply" in text:
            return _judge(text)
        if "Rank candidate edits" in text:
            return json.dumps({"order": list(range(len(self.rules)))})
        if '"edits"' in text:
            edits = [
                {"op": "append", "content": rule, "rationale": _named(text, rule)}
                for rule in self.rules
            ]
            return json.dumps({"analysis": "the user corrects the agent", "edits": edits})
        return _target(request.messages)


def brain_rule() -> Brain:
    return Brain(PREFERENCE_RULE)


def brain_irrelevant() -> Brain:
    return Brain(IRRELEVANT_RULE)


def brain_guard_breaker() -> Brain:
    return Brain(GUARD_BREAKER)


def brain_rule_and_irrelevant() -> Brain:
    return Brain(PREFERENCE_RULE, IRRELEVANT_RULE)


def brain_rule_and_claimed() -> Brain:
    return Brain(PREFERENCE_RULE, CLAIMED_RULE)


def brain_two_rules() -> Brain:
    return Brain(PREFERENCE_RULE, YES_NO_RULE)


def brain_project_facts() -> Brain:
    return Brain(FACTS_RULE)
