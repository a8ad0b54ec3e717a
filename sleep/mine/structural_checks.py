"""Checks a correction implies, read from what it names against what the answer did.

The phrase rules (sleep/mine/correction_checks.py) know the common wordings ("use X, not
Y"); these read the correction's *code terms* against the exchange it corrects, so they
carry to wordings nobody listed:
- an API the answer's diff used (call-like or dotted: `datetime.now()`, `os.path`,
  `utcnow()`), questioned or pushed back on in the correction ("datetime.now() with no
  tz??", "utcnow() is naive too"): the replay's diff must not add it (`diff_not_adds`); a
  name the answer defined is the thing made, never a term to avoid;
- an API the correction names that the exchange has not used (`Path.is_symlink()`,
  `datetime.now(timezone.utc)`, `ValueError`): the diff must add it (`diff_adds`), unless
  the correction refuses it or reports it there ("we dont use click.group()", "theres a
  float() in budget"): then the diff must not add it (`diff_not_adds`), never the reverse;
- tests asked after a code change ("test?", "and a test for it", "tests with every
  change"): whichever the answer lacked, a test added to the diff or a test run (`ran`);
- a short demand for a bare answer after advice ("just the number"): a one-line reply.
Plain English words never become a check: only code-shaped terms do.
"""

from __future__ import annotations

import re

from sleep.mine.correction_checks import ANY_TEST_RUNNER, ONE_LINE_WORDS, REFUSING, TEST_FILES
from sleep.mine.follow_up import FILE_NAME, PUSHBACK, TESTS, Before
from sleep.mine.tasks import Check

# Code-shaped terms a check can be made of: backticked, call-like (with or without
# arguments), dotted, or a CamelCase name (an exception or class: ValueError).
_API = re.compile(
    r"`(?P<quoted>[^`\n]{1,60})`"
    r"|(?P<call>\b[A-Za-z_][\w.]*\((?:[^()\n]{0,40})\))"
    r"|(?P<dotted>\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b)(?!\()"
    r"|(?P<camel>\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\b)"
)
_DEFINES = r"(?:def|class|function|func|fn|const|let|var)\s+{name}\b|\b{name}\s*="
# Besides a push back (sleep/mine/follow_up.py) and a question mark, a clause doubts
# what it names by calling it bad.
_BAD = re.compile(r"\b(?:naive|deprecated|unsafe|broken|bad)\b", re.IGNORECASE)
# Sentence ends split clauses; the dot inside `datetime.now()` does not.
_CLAUSE_END = re.compile(r"(?<=[.;!?])\s+")
_RUN = re.compile(r"\b(?:run|ran|rerun|running|pass(?:es|ed)?)\b", re.IGNORECASE)
# The tests to be left as they are ("don't touch the tests", "no test changes"): no test
# to add (sleep/mine/correction_checks.py checks the tests are left alone).
_LEFT = re.compile(
    r"\b(?:don'?t|dont|do not|never|no|leave|without|touch\w*|alone|unchanged|changes)\b", re.I
)
# A test added in the diff: a test function or block in the common frameworks.
TEST_ADDED = (
    r"^\s*(?:async\s+)?def test_\w*|\bfunc Test\w*\(|#\[test\]|@Test\b"
    r"|\b(?:it|test|describe)\(\s*['\"`]"
)
# "just the number", "only the name", "just yes or no": a bare answer is wanted.
_BARE_ANSWER = re.compile(r"^\s*(?:just|only)\s+(?:the|a|an)\s+\w+", re.IGNORECASE)
_SHORT_WORDS = 6


def structural_checks(
    text: str, before: Before | None, *, agentic: bool, besides: list[Check] = ()
) -> list[Check]:
    """The checks `text` implies by structure: a correction of the answer in `before`, or,
    with `before` None, a constraint stated up front ("always add a test with the change");
    none that repeats one of `besides` (the phrase rules' checks of the same text)."""
    checks: list[Check] = []
    if agentic and before is None:
        wants_tests = TESTS.search(text) and not (_RUN.search(text) or _LEFT.search(text))
        checks += [Check("diff_adds", TEST_ADDED)] if wants_tests else []
    elif agentic:
        checks += _api_checks(text, before, list(besides))
        checks += _test_checks(text, before)
    elif _BARE_ANSWER.match(text) and len(text.split()) <= _SHORT_WORDS:
        checks.append(Check("answer_first_line_max", ONE_LINE_WORDS))
    return list(dict.fromkeys(checks))


def _api_checks(text: str, before: Before, besides: list[Check]) -> list[Check]:
    out: list[Check] = []
    for clause in _CLAUSE_END.split(text):
        doubted = "?" in clause or bool(PUSHBACK.search(clause) or _BAD.search(clause))
        for match in _API.finditer(clause):
            term = next(g for g in match.groups() if g)
            name = term.split("(")[0]
            if FILE_NAME.search(name) or _defined(name, before.changes):
                continue  # a file, or the thing the answer made: not an API choice
            if any(_matches(b.value, term) for b in besides if b.kind.startswith("diff_")):
                continue  # the phrase rules checked it already
            if _used(term, before.changes):
                if _refused(term, clause, doubted):
                    out.append(Check("diff_not_adds", _pattern(term)))
            elif _refused(term, clause, doubted=False):
                # refused or reported present ("we dont use click.group()", "theres a
                # float() in budget"): whatever the answer wrote, the replay adds none of it
                out.append(Check("diff_not_adds", _any_call(term)))
            elif not _used(name, before.request):
                out.append(Check("diff_adds", _pattern(term)))
    return out


def _test_checks(text: str, before: Before) -> list[Check]:
    """Tests asked after a code change, not a run of them (sleep/mine/correction_checks.py
    reads "did you run the tests?"): the one the answer lacked, a test added, else a run."""
    if not TESTS.search(text) or _RUN.search(text) or _LEFT.search(text) or not before.paths():
        return []
    if not (
        re.search(TEST_ADDED, before.changes, re.MULTILINE)
        or any(re.search(TEST_FILES, p) for p in before.paths())
    ):
        return [Check("diff_adds", TEST_ADDED)]
    if not any(re.search(ANY_TEST_RUNNER, c) for c in before.commands()):
        return [Check("ran", ANY_TEST_RUNNER)]
    return []


def _refused(term: str, clause: str, doubted: bool) -> bool:
    """The clause refuses the term itself, not something about it: the bare call in a
    doubting clause ("datetime.now() with no tz??": the call without an argument), or the
    term beside a refusal ("why os.path?", "os.path again", "not print"); not "json.loads
    with no error handling" (it wants json.loads kept, with handling)."""
    if doubted and term.endswith("()"):
        return True
    near = re.escape(term)
    return bool(
        re.search(
            rf"\b(?:why|not|no|instead of|rather than|stop using)\s+(?:the\s+)?{near}", clause, re.I
        )
        or re.search(rf"{REFUSING}\s*{near}", clause, re.I)
        or re.search(
            rf"{near}\s*(?:again|is (?:naive|deprecated|unsafe|wrong|broken))\b", clause, re.I
        )
    )


def _any_call(term: str) -> str:
    """A refused call as a pattern for any call of it (`float()` refuses `float(x)` too)."""
    term = term.strip("`")
    return _pattern(term[:-1]) if term.endswith("()") else _pattern(term)


def _matches(pattern: str, term: str) -> bool:
    try:
        return re.search(pattern, term.strip("`")) is not None
    except re.error:
        return False


def _used(term: str, code: str) -> bool:
    """The answer's code holds the term as written (`datetime.now()` with its empty
    parentheses: `datetime.now(timezone.utc)` is not it)."""
    return re.search(_pattern(term), code) is not None


def _defined(name: str, code: str) -> bool:
    """The answer's code defines the name (a dotted name is some module's, never)."""
    if "." in name:
        return False
    return re.search(_DEFINES.format(name=re.escape(name)), code) is not None


def _pattern(term: str) -> str:
    """A term as a pattern over added lines: a call with no arguments matches only such a
    call; one with arguments, those arguments; a bare call-like name, any call of it."""
    term = term.strip("`")
    head = r"\b" if term[:1].isalnum() or term[:1] == "_" else ""
    if term.endswith("()"):
        return head + re.escape(term)
    tail = r"\b" if term[-1:].isalnum() or term[-1:] == "_" else ""
    return head + re.escape(term) + tail
