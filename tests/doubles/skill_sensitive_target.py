"""TEST DOUBLE: a deterministic target model whose answers depend on the skill text.

It stands in for a real target where tests need exact, explainable scores (DESIGN §11); it
complements, never replaces, runs with the real embedded model.

Use it as a scripted backend's responder (`target(request) -> str`) or directly as an
environment's `complete` function (`await target.complete(messages)` -> Completion).

Documented behaviour, all of it deterministic:

* Skill = the content of the first system message ("" if there is none).
  Question = the content of the last user message.
* Facts. It knows only what the skill states, in either form:
    - a worked example: a line `Q: <question>` followed (on the next non-blank line) by
      `A: <answer>`; it applies when the normalised question (envs.scoring.normalise_answer)
      equals the normalised asked question;
    - a fact line `- <key>: <value>` (bullet "-" or "*"); it applies when the normalised
      key occurs as whole words in the normalised question; when several keys occur, the
      longest key wins (so "Equatorial Guinea" beats "Guinea"). Key = the country or
      capital the question is about, value = the answer.
  Worked examples take precedence over fact lines; among equals the first in the skill wins.
* Format. It answers tersely (just the answer) only if some skill line, lowercased,
  contains "answer with" and also the whole word "only" or the phrase "just the"
  (e.g. "Answer with only the city name." / "Answer with just the name."). Otherwise it
  answers in a sentence: "The answer is <answer>."
* Unknown facts: "I don't know." (in either format).
* Noise: with `noise_rate` r > 0, a known answer is replaced by WRONG_ANSWER ("Atlantis")
  when sha256("<seed>\\0<normalised question>") read as a fraction in [0, 1) is below r.
  The same (seed, question) always gets the same outcome, whatever the skill.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from core.models.types import Completion, Message, Request, Usage
from envs.scoring import normalise_answer

UNKNOWN = "I don't know."
WRONG_ANSWER = "Atlantis"
MODEL_NAME = "skill-sensitive-double"

_QA_Q = re.compile(r"^\s*Q:\s*(.+?)\s*$")
_QA_A = re.compile(r"^\s*A:\s*(.+?)\s*$")
_FACT = re.compile(r"^\s*[-*]\s+([^:]+?):\s+(.+?)\s*$")


def _text(content: Any) -> str:
    """Message content as text (multimodal lists: the text parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def has_format_rule(skill: str) -> bool:
    for line in skill.lower().splitlines():
        if "answer with" in line and (re.search(r"\bonly\b", line) or "just the" in line):
            return True
    return False


@lru_cache(maxsize=64)
def parse_facts(skill: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(worked examples as (normalised question, answer), fact lines as (normalised key,
    value)), both in skill order. Cached: a loop sends one skill to many rollouts."""
    examples: list[tuple[str, str]] = []
    facts: list[tuple[str, str]] = []
    pending_question: str | None = None
    for line in skill.splitlines():
        if not line.strip():
            continue
        q, a = _QA_Q.match(line), _QA_A.match(line)
        if q:
            pending_question = q.group(1)
            continue
        if a and pending_question is not None:
            examples.append((normalise_answer(pending_question), a.group(1)))
        elif (fact := _FACT.match(line)) and normalise_answer(fact.group(1)):
            facts.append((normalise_answer(fact.group(1)), fact.group(2)))
        pending_question = None
    return tuple(examples), tuple(facts)


def _contains_words(text: str, phrase: str) -> bool:
    return f" {phrase} " in f" {text} "


class SkillSensitiveTarget:
    """TEST DOUBLE target (see the module docstring for its exact behaviour)."""

    def __init__(self, noise_rate: float = 0.0, seed: int = 0):
        if not 0.0 <= noise_rate <= 1.0:
            raise ValueError(f"noise_rate must be in [0, 1], got {noise_rate}")
        self.noise_rate = noise_rate
        self.seed = seed
        self.calls = 0

    def known_answer(self, skill: str, question: str) -> str | None:
        examples, facts = parse_facts(skill)
        asked = normalise_answer(question)
        for example_question, answer in examples:
            if example_question == asked:
                return answer
        best: tuple[str, str] | None = None
        for key, value in facts:
            if _contains_words(asked, key) and (best is None or len(key) > len(best[0])):
                best = (key, value)
        return best[1] if best else None

    def is_noisy(self, question: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}\0{normalise_answer(question)}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.noise_rate

    def answer(self, skill: str, question: str) -> str:
        known = self.known_answer(skill, question)
        if known is None:
            return UNKNOWN
        if self.is_noisy(question):
            known = WRONG_ANSWER
        return known if has_format_rule(skill) else f"The answer is {known}."

    def reply(self, messages: list[Message]) -> str:
        self.calls += 1
        system = next((m for m in messages if m.get("role") == "system"), None)
        users = [m for m in messages if m.get("role") == "user"]
        skill = _text(system["content"]) if system else ""
        question = _text(users[-1]["content"]) if users else ""
        return self.answer(skill, question)

    def __call__(self, request: Request) -> str:
        """The scripted-backend responder form."""
        return self.reply(request.messages)

    async def complete(self, messages: list[Message], **settings: Any) -> Completion:
        """The environment `complete` form (core.environment.contract.CompleteFn); tokens = words."""
        text = self.reply(messages)
        prompt_words = sum(len(_text(m.get("content")).split()) for m in messages)
        return Completion(
            text=text,
            usage=Usage(input_tokens=prompt_words, output_tokens=len(text.split())),
            finish_reason="stop",
            latency_s=0.0,
            model=MODEL_NAME,
        )
