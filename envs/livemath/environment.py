"""`livemath`: LiveMathematicianBench, multiple-choice questions about recent theorems, as the
published method runs it: one chat call; the choices shuffled per item in a seeded order and
relabelled A, B, ...; the reply's label matched by a cascade (answer tag, then the exact
choice text, then the first token). Hard = soft = label match.

Data: `<data_dir>/{train,val,test}/items.json` of
`{id, question, choices: [{label, text}], correct_choice: {label, text}, theorem_type}` (what
`skillopt data materialize livemath` writes from the monthly `qa_*_final.json` files).
"""

from __future__ import annotations

from typing import Any

from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, RetriesExhausted, TransientError
from envs.livemath.choices import read_choice, shuffle_choices
from envs.scoring import explain_model_error, score_label
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result


def render_question(question: str, choices: list[dict[str, str]]) -> str:
    lines = [question.strip(), ""]
    lines += [f"{c['label']}. {c['text']}" for c in choices]
    return "\n".join(lines)


def build_messages(item: TaskItem, skill_text: str) -> list[Message]:
    user = (
        f"{item.question}\n\nChoose one option. Give its letter inside <answer></answer>, "
        "for example <answer>B</answer>."
    )
    messages: list[Message] = []
    if skill_text.strip():
        messages.append({"role": "system", "content": skill_text})
    messages.append({"role": "user", "content": user})
    return messages


class LiveMathEnvironment(SplitDirEnvironment):
    name = "livemath"
    version = "livemath-1"
    source_hint = "a folder holding LiveMathematicianBench's qa_*_final.json files"
    OPTIONS = {"shuffle_choices": True, "choice_seed": 42}

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
            data={"choices": choices},
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        label, how = read_choice(prediction, item.data["choices"])
        return score_label(prediction, label, item.answer, how)

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        messages = build_messages(item, skill_text)
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            return model_error_result(
                item, messages, exc, explain_model_error(item.answer, (), str(exc))
            )
        reply = completion.text.strip()
        trajectory = [*messages, {"role": "assistant", "content": completion.text}]
        return scored_result(item, reply, self.score(item, reply), trajectory, [completion])
