"""`searchqa`: SearchQA (Jeopardy! clues with search-engine snippets) as the published method
runs it: one chat call over the supplied context, the skill inside the published harness's
system prompt (env.options.harness, docs/how-it-works/fidelity.md), the answer in an
`<answer>` tag (else the reply's last line), scored
by SQuAD-normalised exact match (hard) and token F1 (soft), each the best over the gold
answers.

Data: `<data_dir>/{train,val,test}/items.json`, each a JSON array of
`{id, question, context, answers}` (what `skillopt data materialize searchqa` writes from
the public `lucadiliello/searchqa` rows). The context is cut at `[DOC]` boundaries to
`max_context_chars` (6,000, as published) before it reaches the target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, RetriesExhausted, TransientError
from envs.answer_tag import extract_answer
from envs.harness import HARNESSES, PUBLISHED, framed_system, skill_only_system, untagged_answer
from envs.scoring import explain_model_error, score_answer, squad_normalise
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result

DOC_MARK = "[DOC]"
TASK_TYPE = "searchqa"


def trim_context(context: str, max_chars: int) -> str:
    """Whole `[DOC]` passages from the start while they fit in `max_chars`; if not even the
    first fits, its first `max_chars` characters. Never a passage cut in the middle
    otherwise: a half snippet can state a wrong fact."""
    if len(context) <= max_chars:
        return context
    kept = ""
    for index, passage in enumerate(context.split(DOC_MARK)):
        candidate = passage if index == 0 else f"{kept}{DOC_MARK}{passage}"
        if len(candidate) > max_chars:
            break
        kept = candidate
    return kept if kept.strip() else context[:max_chars]


SYSTEM_TEMPLATE = Path(__file__).parent / "prompts" / "target_system.md"


def build_messages(
    item: TaskItem, skill_text: str, max_context_chars: int, harness: str = PUBLISHED
) -> list[Message]:
    """What the target sees; never the gold answers. `published`: the harness system prompt
    with the skill inside it, then `## Context` and `## Question`. `skill_only`
    (configs/features/searchqa_skill_only.yaml, our earlier framing): the skill alone as
    the system prompt (none if empty), the answer-format instruction in the user turn."""
    context = trim_context(item.data["context"], max_context_chars)
    if harness == PUBLISHED:
        return [
            {"role": "system", "content": framed_system(SYSTEM_TEMPLATE, skill_text)},
            {"role": "user", "content": f"## Context\n{context}\n\n## Question\n{item.question}"},
        ]
    user = (
        f"Context:\n{context}\n\nQuestion: {item.question}\n"
        "Give the final answer inside <answer></answer>."
    )
    return [*skill_only_system(skill_text), {"role": "user", "content": user}]


def score_prediction(prediction: str, answers: list[str]) -> Score:
    return score_answer(prediction, answers[0], answers[1:], normalise=squad_normalise)


class SearchQAEnvironment(SplitDirEnvironment):
    name = "searchqa"
    version = "searchqa-1"
    source_hint = "your local copy of the lucadiliello/searchqa rows (Parquet or JSON Lines)"
    OPTIONS = {"max_context_chars": 6000, "harness": PUBLISHED}
    CHOICES = {"harness": HARNESSES}

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        try:
            answers = [str(a) for a in row["answers"]]
            question, context = str(row["question"]), str(row["context"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"searchqa item {row.get('id')!r}: missing field {exc}") from None
        if not answers:
            raise EnvError(f"searchqa item {row['id']!r} has no gold answers")
        return TaskItem(
            id=row["id"],
            task_type=TASK_TYPE,
            question=question,
            answer=answers[0],
            data={"context": context, "answers": answers},
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_prediction(prediction, item.data["answers"])

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        harness = self.options["harness"]
        messages = build_messages(item, skill_text, self.options["max_context_chars"], harness)
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            why = explain_model_error(item.answer, item.data["answers"][1:], str(exc))
            return model_error_result(item, messages, exc, why)
        untagged = untagged_answer(harness)
        prediction, _tagged = extract_answer(completion.text, untagged=untagged)
        trajectory = [*messages, {"role": "assistant", "content": completion.text}]
        return scored_result(
            item, prediction, self.score(item, prediction), trajectory, [completion]
        )
