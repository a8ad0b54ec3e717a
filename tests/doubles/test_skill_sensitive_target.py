"""The skill-sensitive TEST DOUBLE behaves exactly as its docstring documents."""

import pytest

from core.config import EnvConfig
from core.environment.contract import TaskItem
from core.environment.verdicts import (
    VERDICT_CORRECT,
    VERDICT_EXTRA_WORDS,
    VERDICT_WRONG,
    verdict_of,
)
from core.models.types import Request
from envs import get_environment
from tests.doubles.skill_sensitive_target import (
    UNKNOWN,
    WRONG_ANSWER,
    SkillSensitiveTarget,
    has_format_rule,
    parse_facts,
)

FRANCE_Q = "What is the capital of France?"
RULE = "Answer with only the city name."
EXAMPLES = "Q: What is the capital of France?\nA: Paris\n\nQ: What is the capital of Peru?\nA: Lima"


def ask(target: SkillSensitiveTarget, skill: str, question: str) -> str:
    messages = [{"role": "user", "content": question}]
    if skill:
        messages.insert(0, {"role": "system", "content": skill})
    return target(Request(backend="scripted", model="double", messages=messages))


def test_knows_nothing_without_a_skill():
    assert ask(SkillSensitiveTarget(), "", FRANCE_Q) == UNKNOWN == "I don't know."


def test_worked_examples_are_known_in_sentence_form_without_a_rule():
    target = SkillSensitiveTarget()
    assert ask(target, EXAMPLES, FRANCE_Q) == "The answer is Paris."
    assert ask(target, EXAMPLES, "what is the capital of PERU") == "The answer is Lima."
    assert ask(target, EXAMPLES, "What is the capital of Chile?") == UNKNOWN


def test_format_rule_makes_answers_terse():
    target = SkillSensitiveTarget()
    assert ask(target, RULE + "\n\n" + EXAMPLES, FRANCE_Q) == "Paris"
    assert ask(target, RULE, FRANCE_Q) == UNKNOWN


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Answer with only the city name.", True),
        ("- Always answer with just the name, nothing else.", True),
        ("ANSWER WITH THE NAME ONLY", True),
        ("Answer with the name.", False),
        ("Answer only in English.", False),  # no "answer with"
        ("Answer with commonly known names.", False),  # "only" must be a whole word
    ],
)
def test_format_rule_trigger(line, expected):
    assert has_format_rule(line) is expected


def test_fact_lines_longest_key_wins():
    skill = "Facts:\n- Guinea: Conakry\n- Equatorial Guinea: Malabo\n* Paris: France"
    target = SkillSensitiveTarget()
    assert (
        ask(target, skill, "What is the capital of Equatorial Guinea?") == "The answer is Malabo."
    )
    assert ask(target, skill, "What is the capital of Guinea?") == "The answer is Conakry."
    assert ask(target, skill, "Paris is the capital of which country?") == "The answer is France."
    # whole words only: "Guinea" is not found inside "Guineas"
    assert ask(target, skill, "What is the capital of the Guineas?") == UNKNOWN


def test_worked_examples_beat_fact_lines_and_first_wins():
    skill = "- France: Lyon\nQ: What is the capital of France?\nA: Paris\n" + (
        "Q: What is the capital of France?\nA: Nice"
    )
    assert ask(SkillSensitiveTarget(), skill, FRANCE_Q) == "The answer is Paris."


def test_parse_facts_pairs_only_adjacent_q_and_a():
    examples, facts = parse_facts("Q: one?\nsome text\nA: lost\nQ: two?\n\nA: 2\n- k: v")
    assert examples == (("two", "2"),)
    assert facts == (("k", "v"),)


def test_reads_the_system_message_and_the_last_user_message():
    target = SkillSensitiveTarget()
    messages = [
        {"role": "system", "content": RULE + "\n" + EXAMPLES},
        {"role": "user", "content": "What is the capital of Chile?"},
        {"role": "assistant", "content": UNKNOWN},
        {"role": "user", "content": [{"type": "text", "text": FRANCE_Q}]},
    ]
    assert target(Request(backend="scripted", model="d", messages=messages)) == "Paris"
    assert target.calls == 1


def test_noise_is_seeded_and_flips_a_stable_subset():
    questions = [f"What is the capital of country {i}?" for i in range(400)]
    skill = RULE + "\n" + "\n".join(f"- country {i}: city {i}" for i in range(400))
    noisy = SkillSensitiveTarget(noise_rate=0.25, seed=7)
    answers = [ask(noisy, skill, q) for q in questions]
    flipped = {q for q, a in zip(questions, answers, strict=True) if a == WRONG_ANSWER}
    assert 60 < len(flipped) < 140  # about a quarter of 400
    assert all(a == f"city {i}" for i, a in enumerate(answers) if questions[i] not in flipped)
    again = SkillSensitiveTarget(noise_rate=0.25, seed=7)
    assert [ask(again, skill, q) for q in questions] == answers
    other_seed = SkillSensitiveTarget(noise_rate=0.25, seed=8)
    assert {q for q in questions if ask(other_seed, skill, q) == WRONG_ANSWER} != flipped
    assert all(ask(SkillSensitiveTarget(), skill, q) != WRONG_ANSWER for q in questions)
    with pytest.raises(ValueError):
        SkillSensitiveTarget(noise_rate=1.5)


async def test_drives_the_capitals_environment_with_documented_verdicts():
    env = get_environment(EnvConfig())
    item = TaskItem("cap-france", "country_to_capital", FRANCE_Q, "Paris", {"aliases": []})
    target = SkillSensitiveTarget()
    sentence = await env.rollout(item, EXAMPLES, target.complete)
    assert verdict_of(sentence.explanation) == VERDICT_EXTRA_WORDS
    terse = await env.rollout(item, RULE + "\n" + EXAMPLES, target.complete)
    assert (terse.hard, verdict_of(terse.explanation)) == (1.0, VERDICT_CORRECT)
    unknown = await env.rollout(item, "", target.complete)
    assert (unknown.hard, verdict_of(unknown.explanation)) == (0.0, VERDICT_WRONG)
    assert terse.output_tokens == 1  # the double counts words as tokens
