"""`livemath`: LiveMathematicianBench, multiple-choice questions about recent theorems, as the
published method runs it: one chat call, the skill inside the published harness's system
prompt (env.options.harness); the choices shuffled per item in a seeded order and
relabelled A, B, ...; the reply's label matched by a cascade (answer tag or, untagged, its
last line; then the exact choice text; then the first token). Hard = soft = label match.

Data: `<data_dir>/{train,val,test}/items.json` of
`{id, question, choices: [{label, text}], correct_choice: {label, text}, theorem_type}` (what
`skillopt data materialize livemath` writes from the monthly `qa_*_final.json` files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, RetriesExhausted, TransientError
from envs.harness import HARNESSES, PUBLISHED, framed_system, skill_only_system, untagged_answer
from envs.livemath.choices import read_choice, shuffle_choices
from envs.scoring import explain_model_error, score_label
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result


def render_question(question: str, choices: list[dict[str, str]]) -> str:
    lines = [question.strip(), ""]
    lines += [f"{c['label']}. {c['text']}" for c in choices]
    return "\n".join(lines)


SYSTEM_TEMPLATE = Path(__file__).parent / "prompts" / "target_system.md"


def build_messages(item: TaskItem, skill_text: str, harness: str = PUBLISHED) -> list[Message]:
    """`published`: the harness system prompt with the skill inside it (an expert; mind
    quantifiers, hypotheses, extremal wording and equality conditions; step by step, only
    the label in the tags, an example), then `## Question` and `## Choices`. `skill_only`
    (configs/features/livemath_skill_only.yaml): the skill alone, the tag instruction in
    the user turn."""
    if harness == PUBLISHED:
        choices = "\n".join(f"{c['label']}. {c['text']}" for c in item.data["choices"])
        user = f"## Question\n{item.data['stem']}\n\n## Choices\n{choices}"
        return [
            {"role": "system", "content": framed_system(SYSTEM_TEMPLATE, skill_text)},
            {"role": "user", "content": user},
        ]
    user = (
        f"{item.question}\n\nChoose one option. Give its letter inside <answer></answer>, "
        "for example <answer>B</answer>."
    )
    return [*skill_only_system(skill_text), {"role": "user", "content": user}]


class LiveMathEnvironment(SplitDirEnvironment):
    name = "livemath"
    version = "livemath-1"
    source_hint = "a folder holding LiveMathematicianBench's qa_*_final.json files"
    OPTIONS = {"shuffle_choices": True, "choice_seed": 42, "harness": PUBLISHED}
    CHOICES = {"harness": HARNESSES}

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        try:
            choices = [{"label": str(c["label"]), "text": str(c["text"])} for c in row["choices"]]
            correct = str(row["correct_choice"]["label"])
            question = str(row["question"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"livemath item {row.get('id')!r}: missing field {exc}") from None
        if correct not in {c["label"] for c in choices}:
            raise EnvError(
                f"livemath item {row['id']!r}: correct label {correct!r} is not a choice"
            )
        if self.options["shuffle_choices"]:
            choices, correct = shuffle_choices(
                row["id"], choices, correct, self.options["choice_seed"]
            )
        types = row.get("theorem_type") or []
        return TaskItem(
            id=row["id"],
            task_type=str(types[0]) if types else "livemath",
            question=render_question(question, choices),
            answer=correct,
            data={"choices": choices, "stem": question.strip()},
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        untagged = untagged_answer(self.options["harness"])
        label, how = read_choice(prediction, item.data["choices"], untagged)
        return score_label(prediction, label, item.answer, how)

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        messages = build_messages(item, skill_text, self.options["harness"])
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            return model_error_result(
                item, messages, exc, explain_model_error(item.answer, (), str(exc))
            )
        reply = completion.text.strip()
        trajectory = [*messages, {"role": "assistant", "content": completion.text}]
        return scored_result(item, reply, self.score(item, reply), trajectory, [completion])
