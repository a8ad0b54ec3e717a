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
_INLINE_CONSTRAINT = re.compile(
    r"\b(?:without|but (?:don'?t|do not|keep|leave)|and (?:keep|don'?t|do not)|"
    r"making sure|so that)\b[^.;!?\n]*",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
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
    found += [
        m.group(0).strip() for m in _INLINE_CONSTRAINT.finditer(sentences[0] if sentences else "")
    ]
    return list(dict.fromkeys(c[:300] for c in found))


def constraint_rubric(text: str) -> str:
    return "\n".join(f"The person asked: {c!r}" for c in constraints_in(text))


def is_follow_up(text: str) -> bool:
    return bool(_FOLLOW_UP.search(text))


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


def reference_of(answer: str) -> str:
    answer = answer.strip()
    if len(answer) <= MAX_REFERENCE_CHARS:
        return answer
    return answer[: MAX_REFERENCE_CHARS - 1] + "…"


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
        lines.append(f"- The person asked: {turn.prompt}")
        if turn.answer:
            lines.append(f"  The assistant answered: {turn.answer}")
    return "\n".join(lines)
