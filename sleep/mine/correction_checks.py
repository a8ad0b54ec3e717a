"""The checks a correction or a stated constraint implies, built from its meaning.

A correction is mechanical when a replay can be tested for it without a judge; this reads
the common shapes and leaves the rest to the judge (and the miner model):
- a replacement or a ban ("use logging instead of print", "use logging, not print",
  "don't use print", "never use float for money"): the wanted and the unwanted *code
  terms*: on the diff for a task that changes the project (`diff_adds` /
  `diff_not_adds`), on the reply for advice (`contains`, and `not_contains` only for a
  term that reads as code, `print(`: prose explaining the choice names both words);
- no new dependencies ("don't add dependencies", "standard library only"): `no_new_import`;
- verification ("did you run the tests?", "run the tests before you tell me it's done"):
  `ran` the command the session then ran, or any usual test runner;
- the answer's form ("just yes or no?"): `answer_starts_with` yes|no; ("one line please",
  "that's a lot to read", "too long"): `answer_first_line_max`.
A code term is a word that reads as code, not as English: in backticks, with code
characters (`print()`, `os.path`, `snake_case`, `--flag`), named as a module, library or
package ("the logging module"), or a well-known one. "use the logging module" never
gives a check on "the"; "use plain string formatting" gives none at all.
"""

from __future__ import annotations

import re

from sleep.mine.check_rules import DOCSTRING, TYPE_HINTS
from sleep.mine.tasks import Check

# Well-known code terms and what their use looks like in added code.
_CODE_PATTERNS = {
    "print": r"\bprint\(",
    "logging": r"\blogging\b|\blogger\.",
    "logger": r"\blogger\b",
    "raise": r"\braise\b",
    "raising": r"\braise\b",
    "raised": r"\braise\b",
    "raises": r"\braise\b",
    "exception": r"\braise\b",
    "exceptions": r"\braise\b",
    "f-string": r"\bf[\"']",
    "f-strings": r"\bf[\"']",
    "fstrings": r"\bf[\"']",
    "decimal": r"\bDecimal\b",
    "float": r"\bfloat\b",
    "floats": r"\bfloat\b",
    "pathlib": r"\bpathlib\b|\bPath\(",
    "os.path": r"\bos\.path\b",
    # timestamps in UTC: an aware time in code ("all timestamps in UTC please")
    "utc": r"\btimezone\.utc\b|\bUTC\b|\btz(?:info)?=",
    "assert": r"\bassert\b",
    "dataclass": r"@dataclass\b|\bdataclasses\b",
    "dataclasses": r"@dataclass\b|\bdataclasses\b",
    "type hints": TYPE_HINTS,
    # a docstring or doc comment opening: Python's triple quotes, JSDoc/Javadoc's /**
    "docstring": DOCSTRING,
    "docstrings": DOCSTRING,
}
_KNOWN_TERMS = frozenset(
    [
        *_CODE_PATTERNS, "requests", "httpx", "urllib", "subprocess", "argparse", "click", "typer", "pydantic",
        "json", "yaml", "toml", "csv", "sqlite", "sqlite3", "pytest", "unittest", "npm", "pnpm",
        "yarn", "bun", "uv", "pip", "poetry", "ruff", "black", "mypy", "make", "docker", "tabs",
        "spaces", "async", "asyncio", "threads", "regex", "re", "enum", "enums", "typing",
        "structlog", "loguru", "rich", "tqdm", "numpy", "pandas", "polars", "sqlalchemy", "fetch",
        "axios", "lodash", "jest", "vitest",
    ]
)  # fmt: skip
_NOT_TERMS = frozenset(
    [
        "the", "a", "an", "plain", "simple", "just", "only", "proper", "real", "our", "my",
        "your", "this", "that", "it", "them", "these", "those", "some", "any", "more", "less",
        "better", "good", "way", "instead", "something", "one", "same", "and", "also",
    ]
)  # fmt: skip
_TERM = r"`[^`]{1,60}`|[\w.()/:@+-]{1,60}"
# "use X (instead of | rather than | , not | not) Y"
_REPLACE = re.compile(
    rf"\b(?:use|using|switch to|go with|stick (?:to|with)|prefer|keep)\s+(?P<want>(?:{_TERM})"
    rf"(?:\s+(?:{_TERM})){{0,3}}?)\s*(?:,\s*)?(?:\binstead of\b|\brather than\b|\bnot\b|\bover\b)"
    rf"\s+(?:the\s+|a\s+|an\s+)?(?P<avoid>{_TERM})",
    re.IGNORECASE,
)
_BARE_PAIR = re.compile(rf"^\s*(?P<want>{_TERM}),?\s+not\s+(?P<avoid>{_TERM})\W*$", re.I)
_USE = re.compile(
    rf"\b(?:use|using|switch to|go with|stick (?:to|with))\s+(?P<want>(?:{_TERM})(?:\s+(?:{_TERM})){{0,3}})",
    re.IGNORECASE,
)
# A term the answer left out: "add type hints", "missing type hints again", "and type
# hints pls", "the rest of the file is pathlib" (a well-known term only: "add a retry" is
# no check).
_WANTED = re.compile(
    rf"\b(?:add|missing|forgot(?:ten)?|need|needs)\s+(?:the\s+|some\s+|any\s+)?"
    rf"(?P<want>(?:{_TERM})(?:\s+(?:{_TERM}))?)"
    rf"|(?P<asked>(?:{_TERM})(?:\s+(?:{_TERM}))?)\s+(?:pls|plz|please)\b"
    rf"|\b(?:the rest|everything else|everywhere else)\b[^.?!]{{0,30}}?\b(?:is|uses|has)\s+"
    rf"(?P<usual>(?:{_TERM}))",
    re.IGNORECASE,
)
# A term the answer left out, asked after: "where's the docstring?", "no docstring again..",
# "docstring?", "and the type hints?" (a well-known term only, as for `_WANTED`).
_ASKED_AFTER = re.compile(
    rf"\bwhere(?:'s|s| is| are)\s+(?:the\s+|my\s+|our\s+|your\s+)?(?P<where>(?:{_TERM})(?:\s+(?:{_TERM}))?)"
    rf"|^\s*(?:and\s+)?no\s+(?P<again>(?:{_TERM})(?:\s+(?:{_TERM}))?)\s+again\b"
    rf"|^\s*(?:and\s+|also\s+)?(?:the\s+|any\s+)?(?P<bare>(?:{_TERM})(?:\s+(?:{_TERM}))?)\s*\?+\s*$",
    re.IGNORECASE,
)
# "… and f-strings, not %": a wanted term paired with a refused one inside a longer text.
_PAIR_INSIDE = re.compile(
    rf"(?:^|[.;:,]\s*|\band\s+)(?P<want>(?:{_TERM})(?:\s+(?:{_TERM}))?),\s+not\s+\S", re.I
)
# The agent's own commits refused: "dont commit for me", "why did you commit??", "leave
# committing to me", "never commit without asking".
_NO_COMMIT = re.compile(
    r"\b(?:don'?t|dont|do not|never|stop|no|why did you|why'd you|without)\s+(?:\w+\s+){0,2}?"
    r"(?:commit|committing|commits)\b|\bleave (?:the )?commit(?:s|ting)? to me\b",
    re.IGNORECASE,
)
# Files a "leave the tests alone" correction protects: test folders and test modules.
TEST_FILES = (
    r"(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$"
)
# Changes beyond what was asked: "I didnt ask for that", "keep the diff small", "why is X
# reformatted", "you rewrapped the signature for no reason".
_UNASKED_CHANGE = re.compile(
    r"\b(?:i|we) (?:didn'?t|didnt|did not|never) ask(?:ed)? for\b|\bfor no reason\b|"
    r"\bkeep (?:the |your |this )?(?:diff|change|changes|patch) (?:small|minimal|focused|tight)\b|"
    r"\b(?:re-?formatt?\w*|re-?wrap\w*|re-?flow\w*|unrelated (?:changes?|edits?))\b",
    re.IGNORECASE,
)
# A term the answer should not have used: "why os.path?", "os.path again..".
_QUESTIONED = re.compile(
    rf"\bwhy\s+(?:did you use\s+|use\s+|the\s+)?(?P<why>(?:{_TERM}))\s*\?"
    rf"|^\s*(?P<again>(?:{_TERM}))\s+again\b"
    # "is that click again?", "this os.path again.."
    rf"|\b(?:that|this)(?:'s|\s+is)?\s+(?P<back>(?:{_TERM}))\s+again\b",
    re.IGNORECASE,
)
# What refuses the term after it, or reports it where it should not be: "we dont use
# click", "never call", "avoid", "theres a float() in budget", "there's still a print".
REFUSING = (
    r"(?:\b(?:don'?t|dont|do not|never|avoid|no longer)\s+(?:use\s+|using\s+|call\w*\s+|"
    r"add\w*\s+)?|\bthere(?:'s|s| is| are)\s+(?:still\s+)?)(?:the\s+|any\s+|a\s+|an\s+|some\s+)?"
)
_PRESENT = re.compile(
    rf"\bthere(?:'s|s| is| are)\s+(?:still\s+)?(?:a\s+|an\s+|some\s+)?(?P<present>{_TERM})", re.I
)
_NEGATED = re.compile(r"\b(?:don'?t|dont|do not|never|not|no longer|stop)\s*$", re.IGNORECASE)
_BAN = re.compile(
    rf"\b(?:don'?t|do not|never|stop|avoid|no more|no|without)\s+(?:use\s+|using\s+|add\w*\s+|"
    rf"call\w*\s+)?(?:the\s+|any\s+|a\s+)?(?P<avoid>{_TERM})"
    rf"|\b(?:instead of|rather than)\s+(?:the\s+|a\s+|an\s+)?(?P<instead>{_TERM})",
    re.IGNORECASE,
)
_NO_DEPENDENCIES = re.compile(
    r"\b(?:no|don'?t add|do not add|without|never add|avoid)\s+(?:any\s+)?(?:new\s+)?"
    r"(?:third[- ]party\s+)?(?:dependenc|deps\b|packages?\b|librar)"
    r"|\b(?:standard library|stdlib)(?: only)?\b|\bonly the standard library\b"
    r"|\bno third[- ]party\b",
    re.IGNORECASE,
)
_RUN_TESTS = re.compile(
    r"\b(?:run|ran|running|rerun|re-run)\s+(?:the\s+|all\s+the\s+|all\s+)?(?:unit\s+)?"
    r"(?:tests?|test suite|suite|checks?|linter|lint)\b|\bmake test\b|\btests? (?:pass|first)\b"
    r"|\b(?:run|ran|running|rerun|re-run)\s+(?:the\s+)?(?:pytest|tox|nox|"
    r"(?:npm|pnpm|yarn|bun|cargo|go)\s+(?:run\s+)?test)\b",
    re.IGNORECASE,
)
_COMMAND_IN_TEXT = re.compile(
    r"`([^`]{2,80})`|\b(make\s+(?:test|check|lint)|pytest(?:\s+-q)?|npm (?:run )?test|"
    r"cargo test|go test)\b",
    re.IGNORECASE,
)
ANY_TEST_RUNNER = (
    r"\bmake\s+(?:test|check)\b|\bpytest\b|\bunittest\b|\btox\b|\bnox\b|"
    r"\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|\bcargo test\b|\bgo test\b|"
    r"\b(?:jest|vitest|mocha|rspec)\b"
)
_YES_NO = re.compile(r"\byes(?: or |/)no\b|\byes-or-no\b", re.IGNORECASE)
_ONE_LINE = re.compile(
    r"\b(?:one|1|single)[- ](?:line|liner|sentence)\b|\bin a sentence\b|\bbriefly\b|"
    r"\bkeep it (?:short|brief)\b|\ba lot to read\b|\btoo (?:long|verbose|much)\b|"
    r"\b(?:shorter|tl;?dr)\b|\bjust tell me\b|\bthe long version\b|\bshort answer\b",
    re.IGNORECASE,
)
ONE_LINE_WORDS = "40 words"
# "one line" that describes the code asked for, not the reply: "a function that formats
# one line for the alert log", "prints a single line per reading".
_DESCRIBED_LINE = re.compile(
    r"\b(?:formats|prints|writes|returns|outputs|logs|emits|produces|renders|reads|parses)"
    r"\s+(?:a |an |the |only |just |exactly )?(?:one|1|single)[- ](?:line|sentence)\b|"
    r"\b(?:one|1|single)[- ](?:line|sentence)\s+(?:for|per|of|into|from|at)\s+(?!me\b)",
    re.IGNORECASE,
)


def asks_brief_reply(text: str) -> bool:
    """A demand on the reply's length ("one line please", "too long"), not a line of
    output the code should make ("a function that formats one line for the log")."""
    return any(
        not _DESCRIBED_LINE.search(text, max(0, m.start() - 40), m.end() + 12)
        for m in _ONE_LINE.finditer(text)
    )


def is_plain_word(value: str) -> bool:
    """A word of English no check should test for ("the", "plain", "instead")."""
    return _clean(value).lower() in _NOT_TERMS | {"use", "not", "no", "and", "or", "of", "to"}


def _clean(term: str) -> str:
    return term.strip().strip("`'\"").rstrip(".,;:!?").strip()


def code_term(phrase: str) -> str | None:
    """The code term a noun phrase names ("the logging module" → logging), or None when
    it names none ("plain string formatting")."""
    words = [_clean(w) for w in re.findall(_TERM, phrase)]
    words = [w for w in words if w]
    if not words:
        return None
    if phrase.strip().startswith("`"):
        return _clean(phrase.strip().split("`")[1]) or None
    for i, word in enumerate(words):
        low = word.lower()
        if low in _NOT_TERMS:
            continue
        following = words[i + 1].lower() if i + 1 < len(words) else ""
        if low in _KNOWN_TERMS or " ".join([low, following]) in _KNOWN_TERMS:
            return " ".join([low, following]) if f"{low} {following}" in _KNOWN_TERMS else low
        if following in ("module", "library", "package", "crate", "function", "method", "flag"):
            return word
        if re.search(r"[()_.]|^--?\w|[a-z][A-Z]", word):
            return word
        return None  # the first content word is English: not a code term
    return None


def _diff_pattern(term: str) -> str:
    low = term.lower()
    low = low.removesuffix("()") if low.removesuffix("()") in _CODE_PATTERNS else low
    if low in _CODE_PATTERNS:
        return _CODE_PATTERNS[low]
    if term.endswith("()"):
        return re.escape(term[:-1])
    head = r"\b" if term[:1].isalnum() or term[:1] == "_" else ""
    tail = r"\b" if term[-1:].isalnum() or term[-1:] == "_" else ""
    return head + re.escape(term) + tail


def _text_literal(term: str, avoid: bool) -> str | None:
    """What a reply must (not) mention. An avoided term only when it reads as code: prose
    that explains "logging rather than print" names print, and is right to."""
    if not avoid:
        return term.removesuffix("()")
    if term.lower() in ("print", "print()"):
        return "print("
    return term if re.search(r"[()]", term) else None


def _terms(text: str) -> tuple[list[str], list[str]]:
    want: list[str] = []
    avoid: list[str] = []
    for m in [*_REPLACE.finditer(text), *_BARE_PAIR.finditer(text)]:
        want.append(code_term(m.group("want")) or "")
        avoid.append(code_term(m.group("avoid")) or "")
    if not want:
        # "use click" wants it; "we dont use click anywhere" refuses it (`_BAN`)
        want += [code_term(m.group("want")) or "" for m in _USE.finditer(text)
                 if not _NEGATED.search(text[: m.start()])]  # fmt: skip
    for m in _WANTED.finditer(text):
        term = code_term(m.group("want") or m.group("asked") or m.group("usual")) or ""
        want.append(term if term.lower() in _KNOWN_TERMS else "")
    for m in [*_ASKED_AFTER.finditer(text), *_PAIR_INSIDE.finditer(text)]:
        term = code_term(next(g for g in m.groups() if g)) or ""
        want.append(term if term.lower() in _KNOWN_TERMS else "")
    for m in _BAN.finditer(text):
        term = code_term(m.group("avoid") or m.group("instead")) or ""
        if term.lower() not in {w.lower() for w in want}:  # "no docstring again..": missing
            avoid.append(term)
    for m in _QUESTIONED.finditer(text):
        avoid.append(code_term(m.group("why") or m.group("again") or m.group("back")) or "")
    # reported where it should not be: "theres a float() in budget"
    present = [code_term(m.group("present")) or "" for m in _PRESENT.finditer(text)]
    avoid = [a for a in dict.fromkeys(avoid + present) if a]
    want = [w for w in dict.fromkeys(want) if w and w.lower() not in {a.lower() for a in avoid}]
    if not want and not _REFUSED.search(text) and (not avoid or any(present)):
        refused = {_concept_term(a) for a in avoid}
        want = [p for p in practices_named(text) if _concept_term(p) not in refused]
    return want, avoid


def practices_named(text: str) -> list[str]:
    """The well-known practices a text names (`_CODE_PATTERNS`: "type hints", "pathlib",
    "logging"), longest first: what a correction names without refusing anything, it asks
    for ("and type hints on new functions from now on"; not "put it back, the old assert
    was right")."""
    found = []
    for term in sorted(_CODE_PATTERNS, key=len, reverse=True):
        if re.search(rf"(?<![\w.-]){re.escape(term)}(?![\w-])", text, re.IGNORECASE) and not any(
            term in longer for longer in found
        ):
            found.append(term)
    return found


def _literal_pattern(command: str) -> str:
    """A command as a pattern that reads as the command (spaces left unescaped)."""
    return r"\b" + re.escape(command).replace("\\ ", " ")


def _ran_pattern(text: str, commands_after: list[str]) -> str:
    named = _COMMAND_IN_TEXT.search(text)
    if named:
        command = _clean(named.group(1) or named.group(2))
        return _literal_pattern(command)
    if commands_after:
        return _literal_pattern(commands_after[0])
    return ANY_TEST_RUNNER


def checks_for(text: str, *, agentic: bool, commands_after: list[str] = ()) -> list[Check]:
    """The checks a correction or a constraint implies for a task (`agentic`: one that
    changes the project, whose replay has a diff and commands). `commands_after`: the
    verification commands the session ran answering it, the likeliest meaning of "run the
    tests"."""
    checks: list[Check] = []
    if _NO_DEPENDENCIES.search(text):
        if agentic:  # advice that names no package is for the judge
            checks.append(Check("no_new_import", ""))
    else:
        want, avoid = _terms(text)
        for term in want:
            if agentic:
                checks.append(Check("diff_adds", _diff_pattern(term)))
            elif (literal := _text_literal(term, avoid=False)) is not None:
                checks.append(Check("contains", literal))
        for term in avoid:
            if agentic:
                checks.append(Check("diff_not_adds", _diff_pattern(term)))
            elif (literal := _text_literal(term, avoid=True)) is not None:
                checks.append(Check("not_contains", literal))
    if agentic and runs_tests(text):
        checks.append(Check("ran", _ran_pattern(text, list(commands_after))))
    if agentic and _NO_COMMIT.search(text):
        checks.append(Check("no_commit", ""))
    if agentic and _DOUBLE_ASKED.search(text):
        checks.append(Check("diff_adds", TEST_DOUBLE))
    if agentic and _tests_left_alone(text):
        checks.append(Check("diff_leaves", TEST_FILES))
    if _YES_NO.search(text):
        checks.append(Check("answer_starts_with", "yes|no"))
    elif asks_brief_reply(text) or _COMMAND_ONLY.search(text):
        checks.append(Check("answer_first_line_max", ONE_LINE_WORDS))
    return list(dict.fromkeys(checks))


def concepts(text: str) -> frozenset[str]:
    """What a correction or constraint asks for, as a set two wordings share: "use
    logging, not print" and "no print() calls — the logging module please" are both
    {want:logging, avoid:print}. Empty when it has no mechanical shape (the words decide
    then, sleep/mine/preferences.py)."""
    found: set[str] = set()
    if _NO_DEPENDENCIES.search(text):
        found.add("no-new-dependencies")
    else:
        want, avoid = _terms(text)
        found |= {f"want:{_concept_term(t)}" for t in want}
        found |= {f"avoid:{_concept_term(t)}" for t in avoid}
    if _LOG_IT.search(text):
        found.add("want:logging")
    if runs_tests(text):
        found.add("run-the-tests")
    if _EMOJI.search(text):
        found.add("no-emoji")
    if _tests_left_alone(text):
        found.add("tests-unchanged")
    if _NO_COMMIT.search(text):
        found.add("no-commit")
    if _DOUBLE_ASKED.search(text):
        found.add("test-double")
    if _UNASKED_CHANGE.search(text):
        found.add("only-what-was-asked")
    if _YES_NO.search(text) or asks_brief_reply(text):
        found.add("brief")
    if _COMMAND_ONLY.search(text):
        found.add("command-only")
    if _ASK_BEFORE_DELETING.search(text):
        found.add("ask-before-deleting")
    if _COMPATIBLE.search(text):
        found.add("keep-compatible")
    return frozenset(found)


def runs_tests(text: str) -> bool:
    """It asks for the tests to be run: "run the tests before …", "you ran make test
    right?", or "and the tests? did you even run them" (the tests named, then a run)."""
    return bool(_RUN_TESTS.search(text)) or bool(_TEST_WORD.search(text) and _RUN_WORD.search(text))


def _tests_left_alone(text: str) -> bool:
    """It says the tests are not to be changed ("don't touch the tests", "leave the tests
    alone", "why did you change test_shelf.py??", "the tests should pass without
    changes", "I said no test changes"): in one clause, the tests, a change, and a
    refusal of it."""
    for clause in re.split(r"[.;!?]+\s*|,\s+|\s[-—–]\s", text):
        if _TEST_WORD.search(clause) and _ALTERED.search(clause) and _REFUSED.search(clause):
            return True
    return False


_TEST_WORD = re.compile(r"\btests?\b|\btest_\w+|\b\w+_test\b|\bspecs?\b", re.IGNORECASE)
_RUN_WORD = re.compile(r"\b(?:run|ran|rerun|re-run|running)\b", re.IGNORECASE)
_ALTERED = re.compile(
    r"\b(?:touch\w*|chang\w+|modif\w+|edit\w*|rewr\w+|weaken\w*|alone|back)\b", re.I
)
_REFUSED = re.compile(r"\b(?:don'?t|dont|do not|never|not|no|without|why|alone|back)\b", re.I)
# A test double asked for, said as a verb: "mock urlopen", "patch it out", "monkeypatch
# fetch_rate", "stub the network" (not "the patch is wrong", "a fake name").
_DOUBLE_ASKED = re.compile(
    r"(?:^|[,.;:!?-]\s*|\b(?:and|just|pls|please|then)\s+)(?:mock|stub|fake|monkeypatch)\s+"
    r"(?:out\s+)?[`\w.()]+|\b(?:patch|stub|mock|fake) (?:it|them|that|this|\w+) out\b",
    re.IGNORECASE,
)
# What a test double looks like in the test code it adds.
TEST_DOUBLE = r"\b(?:[Mm]ock|MagicMock|patch|monkeypatch|stub|[Ff]ake)"
# The bare command for a how-do-I question: "just the command pls", "command only, no
# essay", "cmd pls", "whats the command".
_COMMAND_ONLY = re.compile(
    r"\b(?:just|only)\s+(?:the\s+)?(?:command|cmd)\b|\b(?:command|cmd)\s+only\b|"
    r"^\s*(?:the\s+)?(?:command|cmd)\s+(?:pls|plz|please)\b|\bwhat'?s the (?:command|cmd)\b",
    re.IGNORECASE,
)
# Files go only with the person's say-so: "ask before removing files", "dont delete
# anything without asking", "check with me before deleting".
_ASK_BEFORE_DELETING = re.compile(
    r"\b(?:ask|check with me)\b[^.?!\n]{0,20}\bbefore\s+(?:you\s+)?(?:delet|remov|rm\b|wip)\w*"
    r"|\b(?:delet|remov|wip)\w*\b[^.?!\n]{0,30}\bwithout (?:asking|checking)\b",
    re.IGNORECASE,
)
_EMOJI = re.compile(r"\bemoji(?:s)?\b|\bemoticons?\b", re.IGNORECASE)
# "log it at debug level": the logging module, said as a verb
_LOG_IT = re.compile(r"\blog (?:it|them|that|this|those|these|at|as|instead)\b", re.I)
# Keeping what callers rely on: the public API, an old name or import path, callers.
_COMPATIBLE = re.compile(
    r"\b(?:public api|api unchanged|callers?|backwards?[- ]compat\w*|old (?:name|function|"
    r"import path|path|signature)s?|import path|still (?:use|import|call)s?|breaking change|"
    r"keep (?:it|them|the \w+(?: \w+)?) working)\b",
    re.IGNORECASE,
)


def _concept_term(term: str) -> str:
    low = term.lower().removesuffix("()")
    return {"raising": "raise", "raised": "raise", "raises": "raise", "floats": "float",
            "f-strings": "f-string", "fstrings": "f-string", "dataclasses": "dataclass",
            "logger": "logging",
            "docstrings": "docstring"}.get(low, low)  # fmt: skip
