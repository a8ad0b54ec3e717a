"""What a session says a good answer to a task is: the evidence the judge and the gate use.

- **rubric**: the person's constraints in the request itself ("Keep the old name as an
  alias", "don't touch the tests") and their later corrections (sleep/mine/heuristic.py);
- **reference**: what the person accepted — the assistant's last answer before an
  acknowledgement or the next request (an excerpt; the harvest redacted it);
- **command checks**: a verification command the assistant ran (`make test`, `pytest …`,
  `npm test`, `cargo test`, a linter), to run again in the replay workspace;
- **context**: the earlier turns a follow-up ("these changes", "also", "now") refers to.
"""

from __future__ import annotations

import re

from sleep.harvest.file_edits import FileEdit
from sleep.mine.correction_checks import asks_brief_reply, checks_for
from sleep.mine.tasks import MAX_CONTEXT_CHARS, Check, Turn

MAX_REFERENCE_CHARS = 1500
MAX_TURN_ANSWER_CHARS = 800
MAX_CONTEXT_TURNS = 3
MAX_COMMAND_CHECKS = 3

_CONSTRAINT = re.compile(
    r"^(?:keep|don'?t|do not|never|always|make sure|ensure|must|only|without|avoid|use|"
    r"no\s|prefer|leave|preserve|stick to|be sure)\b",
    re.IGNORECASE,
)
# "without" a thing described ("names without a date", "rows without an id") describes
# the data; "without breaking the API", "without new dependencies" constrains the work.
# The clause ends at a sentence end, a colon or a spaced dash: "dont delete anything
# without asking - add an archive subcommand …" is constrained by "without asking" only.
_INLINE_CONSTRAINT = re.compile(
    r"\b(?:without(?!\s+(?:a|an)\b)|but (?:don'?t|do not|keep|leave)|and (?:keep|don'?t|do not)|"
    r"making sure|so that)\b(?:(?!\s[-—–]\s)(?:[^.;:!?\n]|\.(?=\w)))*",
    re.IGNORECASE,
)
# Constraints that may stand anywhere, even inside the request's own sentence: "refactor
# billing.py (keep the public API unchanged)", "parse it, standard library only", "one
# line please", "run the tests before you tell me it's done", "dont touch the tests for
# this one: …", "leave the tests alone - …".
_CONSTRAINT_PHRASE = re.compile(
    r"\b(?:keep (?:the |its |their )?(?:public )?(?:api|interface|signature|behaviou?r|"
    r"old name|name)s?\b|(?:standard library|stdlib)(?: only)?|only the standard library|"
    r"no (?:new |extra )?(?:dependenc\w*|deps|third[- ]party)|"
    r"(?:don'?t|do not|never) (?:add|introduce|pull in) (?:any )?(?:new )?(?:dependenc\w*|"
    r"packages?|librar\w*)|(?:one|1|single)[- ](?:line|liner|sentence)|"
    r"run (?:the |all the )?(?:tests?|make test|pytest|(?:npm|cargo|go) test)\b[^.?!,;]{0,40}?"
    r"\b(?:before|first|after)\b|tests? (?:must|should) pass|"
    # leaving something as it is: "don't touch the tests", "leave the tests alone"
    r"(?:don'?t|dont|do not|never) (?:touch|change|modify|edit)\b|leave [\w ]{1,30}? alone\b|"
    r"(?:just |only )?(?:yes or no|yes/no)|keep it (?:short|brief)|"
    # the agent's own git work: "dont commit anything, just make the change"
    r"(?:don'?t|dont|do not|never) (?:commit|push)\b|"
    # a standing demand on all new code: "add docstrings to anything new", "type hints on
    # every new function"
    r"\b(?:on|to|for|in) (?:anything|everything|every|each|all(?: the)?) new\b)",
    re.IGNORECASE,
)
# A dot inside a word ("alerts.py", "os.path", "v1.2") or after an abbreviation ("e.g.",
# "i.e.") ends no sentence.
_NO_END = r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)"
_CLAUSE = re.compile(rf"\.(?!\w){_NO_END}|[;!?\n()]|\s[—–-]\s|[,:]\s")
_SENTENCE = re.compile(rf"(?<=[.!?]){_NO_END}\s+|\n+")
_VERIFY = re.compile(
    r"^(?:(?:uv run|poetry run|pipenv run|npx|pnpm exec|bundle exec)\s+)?(?:"
    r"make\s+(?:test|tests|check|lint|verify|ci)\b"
    r"|(?:python3?\s+-m\s+)?pytest\b"
    r"|(?:python3?\s+-m\s+)?(?:unittest|tox|nox|mypy|ruff\s+check|ruff\b|flake8|pylint|black\s+--check)\b"
    r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|lint|check|typecheck)\b"
    r"|cargo\s+(?:test|clippy|check|fmt\s+--check)\b"
    r"|go\s+(?:test|vet)\b|golangci-lint\b"
    r"|(?:eslint|tsc|jest|vitest|mocha|rspec|rubocop|shellcheck)\b"
    r"|(?:\./)?gradlew?\s+(?:test|check)\b|mvn\s+(?:test|verify)\b"
    r")",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(
    r"^\s*(?:also|and|now|then|next|great|good|nice|ok(?:ay)?|thanks|perfect|one more thing|"
    r"same|again|after that|as well)\b"
    r"|\b(?:these|those|the above|the same|that change|this change|the changes|it again|"
    r"as before|like before|previous|earlier|you just|you did|them)\b",
    re.IGNORECASE,
)


def constraints_in(text: str) -> list[str]:
    """The constraint sentences and clauses of a request, beyond what it asks for."""
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    found = [s for s in sentences[1:] if _CONSTRAINT.match(s)]
    first = sentences[0] if sentences else ""
    if not first.rstrip().endswith("?"):  # a question's own "without" is what it asks about
        found += [m.group(0).strip() for m in _INLINE_CONSTRAINT.finditer(first)]
    phrases = [(m.group(0), _clause_at(text, m.start())) for m in _CONSTRAINT_PHRASE.finditer(text)]
    found += [clause for phrase, clause in phrases if _constrains(phrase, clause)]
    kept: list[str] = []
    for c in (c[:300] for c in found if c):
        if not any(c in k for k in kept):
            kept = [k for k in kept if k not in c] + [c]
    return kept


def _constrains(phrase: str, clause: str) -> bool:
    """ "one line" in a clause asks for a short reply, unless it describes the code
    ("… that formats one line for the alert log")."""
    return not _ONE_LINE_PHRASE.match(phrase) or asks_brief_reply(clause)


_ONE_LINE_PHRASE = re.compile(r"(?:one|1|single)[- ]", re.IGNORECASE)


def _clause_at(text: str, at: int) -> str:
    """The clause around a constraint phrase (between parentheses, dashes, commas or
    sentence ends)."""
    starts = [m.end() for m in _CLAUSE.finditer(text, 0, at)]
    end = _CLAUSE.search(text, at)
    return text[(starts[-1] if starts else 0) : end.start() if end else len(text)].strip()


def constraint_checks(text: str, *, agentic: bool, commands_after: list[Check]) -> list[Check]:
    """The checks the request's own constraints imply (sleep/mine/correction_checks.py)."""
    verified = [c.value for c in commands_after if c.kind == "command"]
    out: list[Check] = []
    for constraint in constraints_in(text):
        out += checks_for(constraint, agentic=agentic, commands_after=verified)
    return list(dict.fromkeys(out))


def constraint_note(constraint: str) -> str:
    return f"The person asked: {constraint!r}"


def is_follow_up(text: str) -> bool:
    return bool(_FOLLOW_UP.search(text))


# A prompt that points back at what the turn before it made or said: "and a test for it
# pls", "does that function handle None?", "the test fails".
_POINTS_BACK = re.compile(
    r"\b(?:it|its|that|this|them|they|these|those)\b(?!\s+(?:is|was)\s+(?:a|an)\b)|"
    r"\bthe (?:test|tests|function|method|class|file|script|change|fix|helper|flag|command)\b",
    re.IGNORECASE,
)


def points_back(text: str) -> bool:
    """Whether a prompt refers to an earlier turn (then it needs at least that turn)."""
    return is_follow_up(text) or bool(_POINTS_BACK.search(text))


# Builds verify too (a build that breaks is a failure); searches and listings do not.
_BUILD = re.compile(
    r"^(?:make(?:\s+(?:all|build))?\s*$|(?:npm|pnpm|yarn|bun)\s+run\s+build\b"
    r"|cargo\s+build\b|go\s+build\b|python3?\s+-m\s+(?:build|compileall)\b)",
    re.IGNORECASE,
)


def is_verification(command: str) -> bool:
    """A command the person runs to check work (tests, a build, a linter): its failure is
    evidence that the work is wrong. A `grep` that finds nothing exits 1 and is not."""
    parts = re.split(r"\s*(?:&&|;|\|\|?)\s*", command.strip())
    return any(_VERIFY.match(p) or _BUILD.match(p) for p in parts)


def verification_commands(commands: list[str]) -> list[Check]:
    """The verification commands among the shell commands the assistant ran, as checks."""
    out: list[Check] = []
    for command in commands:
        first = re.split(r"\s*(?:&&|;|\|\|?)\s*", command.strip())
        found = next((c for c in first if _VERIFY.match(c)), None)
        if found and "[REDACTED:" not in found:
            check = Check("command", found.strip())
            if check not in out:
                out.append(check)
    return out[:MAX_COMMAND_CHECKS]


# Words of a reply that says only that the work was done ("…done.", "All set!").
_FILLER = frozenset(
    [
        "done", "all", "set", "finished", "fixed", "updated", "complete", "completed", "ok",
        "okay", "there", "you", "go", "it", "it's", "is", "that's", "that", "now", "i", "i've",
        "have", "made", "the", "change", "changes", "applied", "sure", "here", "as", "asked",
        "requested", "ran", "command", "commands", "successfully", "task", "work",
    ]
)  # fmt: skip


def has_content(answer: str) -> bool:
    """Whether a reply says anything a judge could compare with ("…done." does not)."""
    words = re.findall(r"[\w']+", answer.lower())
    return any(w not in _FILLER for w in words)


def reference_of(answer: str, edits: list[FileEdit] = ()) -> str:
    """What the person accepted: the reply, or where it says nothing ("…done."), the
    edits the turn made; "" when neither has content (no reference is shown then)."""
    answer = answer.strip()
    if not has_content(answer):
        answer = _edits_text(edits)
    if len(answer) <= MAX_REFERENCE_CHARS:
        return answer
    return answer[: MAX_REFERENCE_CHARS - 1] + "…"


def _edits_text(edits: list[FileEdit]) -> str:
    if not edits:
        return ""
    lines = ["(the reply said only that it was done; its changes:)"]
    for edit in edits:
        lines.append(f"{edit.describe()}:")
        lines += [f"+ {ln}" for ln in edit.new.splitlines()][:20]
    return "\n".join(lines)[:MAX_REFERENCE_CHARS]


# A name a follow-up can share with the turn it refers to: a file, a path, an identifier.
_NAME = re.compile(r"[\w-]+\.\w{1,5}\b|\b\w+/[\w/.-]+|\b[a-z]\w*_\w+|\b\w+\(\)|\b[a-z]+[A-Z]\w*")


_THE_CHANGES = re.compile(
    r"\b(?:these|those|the|that|this|your|my) (?:changes?|edits?|diff|fix|refactor\w*)\b", re.I
)


class SessionTurns:
    """The session so far, each turn with whether it was agentic and its thread (a
    request and the corrections and fragments that continue it). A follow-up refers to
    the latest thread, to the latest one that worked on the project when it speaks of
    "these changes", and to an earlier one when it names the same file or identifier:
    never to every earlier turn (an unrelated one may hold another secret)."""

    def __init__(self) -> None:
        self.items: list[tuple[Turn, bool, int]] = []
        self.threads = 0

    def add(self, turn: Turn, agentic: bool, *, new_thread: bool = False) -> None:
        if new_thread or not self.threads:
            self.threads += 1
        self.items.append((turn, agentic, self.threads))

    def context_for(self, text: str, *, latest: bool = True) -> tuple[list[Turn], bool]:
        """The turns `text` refers to (bounded) and whether any of them was agentic.
        `latest`: it follows up on the latest thread ("also …"); without, only the turns
        it names a file or identifier of are referred to."""
        names = set(_NAME.findall(text))
        wanted = {self.threads} if latest else set()
        if _THE_CHANGES.search(text):
            wanted |= {max((n for _t, a, n in self.items if a), default=self.threads)}
        chosen = [
            (turn, agentic)
            for turn, agentic, thread in self.items
            if thread in wanted or names & set(_NAME.findall(turn.prompt))
        ]
        context = bounded_context([t for t, _a in chosen])
        kept = {t.prompt for t in context}
        return context, any(a for t, a in chosen if t.prompt in kept)


def bounded_context(turns: list[Turn]) -> list[Turn]:
    """The last turns before a follow-up, newest kept first, within MAX_CONTEXT_CHARS."""
    kept: list[Turn] = []
    room = MAX_CONTEXT_CHARS
    for turn in reversed(turns[-MAX_CONTEXT_TURNS:]):
        answer = turn.answer[:MAX_TURN_ANSWER_CHARS]
        size = len(turn.prompt) + len(answer)
        if size > room:
            if not kept:
                kept.append(Turn(turn.prompt[:room], ""))
            break
        kept.append(Turn(turn.prompt, answer))
        room -= size
    return list(reversed(kept))


def context_text(turns: list[Turn]) -> str:
    """The context as one block of text (for a prompt that has no message history)."""
    lines = ["Earlier in this session:"]
    for turn in turns:
        lines.append(_indented(f"- The person asked: {turn.prompt}", "  "))
        if turn.answer:
            lines.append(_indented(f"  The assistant answered: {turn.answer}", "    "))
    return "\n".join(lines)


def _indented(text: str, indent: str) -> str:
    """A multi-line prompt or answer under its bullet, each later line indented as written."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(indent + line if line.strip() else "" for line in rest)])
