"""`docvqa`: DocVQA questions about a scanned document page, as the published method runs
them: one multimodal chat call with the page image inline (a base64 data URI), the skill
inside the published harness's system prompt (env.options.harness; an untagged reply's last
line is its answer), scored by
normalised exact match (hard) and ANLS (soft), each the best over the gold answers.

A text-only target backend (the embedded model) refuses the image request with a clear
error before anything is sent (the model client checks every request's parts).

Data: `<data_dir>/{train,val,test}/items.json` of `{id, question, answers, image_path,
topic}`, `image_path` relative to the data directory (what `skillopt data materialize
docvqa` writes, images under `images/`).
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, RetriesExhausted, TransientError
from envs.answer_tag import extract_answer
from envs.docvqa.anls import anls
from envs.harness import HARNESSES, PUBLISHED, framed_system, skill_only_system, untagged_answer
from envs.scoring import explain_model_error, score_answer
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result


def image_data_uri(path: Path) -> str:
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EnvError(f"docvqa: cannot read page image {path}: {exc.strerror}") from None
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


SYSTEM_TEMPLATE = Path(__file__).parent / "prompts" / "target_system.md"


def build_messages(
    item: TaskItem, skill_text: str, image_uri: str, harness: str = PUBLISHED
) -> list[Message]:
    """`published`: the harness system prompt with the skill inside it (an expert reader;
    ground the answer in the page, exact spans, nothing made up, the best-supported of
    near matches; the answer in tags), the question and the tag instruction beside the
    image. `skill_only` (configs/features/docvqa_skill_only.yaml): the skill alone."""
    if harness == PUBLISHED:
        system = [{"role": "system", "content": framed_system(SYSTEM_TEMPLATE, skill_text)}]
        text = f"{item.question}\n\nGive the final answer inside <answer>...</answer>."
    else:
        system = skill_only_system(skill_text)
        text = (
            f"Question about the document page in the image: {item.question}\n"
            "Give the answer as it is written on the page, inside <answer></answer>."
        )
    parts = [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": image_uri}},
    ]
    return [*system, {"role": "user", "content": parts}]


def score_prediction(prediction: str, answers: list[str]) -> Score:
    exact = score_answer(prediction, answers[0], answers[1:])
    similarity = anls(prediction, answers)
    return Score(
        hard=exact.hard, soft=similarity, explanation=f"{exact.explanation}; ANLS {similarity:.2f}"
    )


class DocVQAEnvironment(SplitDirEnvironment):
    name = "docvqa"
    version = "docvqa-1"
    source_hint = (
        "your local copy of lmms-lab/DocVQA's DocVQA validation rows (Parquet or JSON Lines)"
    )
    OPTIONS = {"harness": PUBLISHED}
    CHOICES = {"harness": HARNESSES}

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        try:
            answers = [str(a) for a in row["answers"]]
            image = self.data_dir / str(row["image_path"])
            question = str(row["question"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"docvqa item {row.get('id')!r}: missing field {exc}") from None
        if not answers:
            raise EnvError(f"docvqa item {row['id']!r} has no gold answers")
        return TaskItem(
            id=row["id"],
            task_type=str(row.get("topic") or "docvqa").split("|")[0],
            question=question,
            answer=answers[0],
            data={"answers": answers, "image": str(image)},
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_prediction(prediction, item.data["answers"])

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        harness = self.options["harness"]
        uri = image_data_uri(Path(item.data["image"]))
        messages = build_messages(item, skill_text, uri, harness)
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            why = explain_model_error(item.answer, item.data["answers"][1:], str(exc))
            return model_error_result(item, _without_image(messages), exc, why)
        untagged = untagged_answer(harness)
        prediction, _ = extract_answer(completion.text, untagged=untagged)
        trajectory = [*_without_image(messages), {"role": "assistant", "content": completion.text}]
        return scored_result(
            item, prediction, self.score(item, prediction), trajectory, [completion]
        )


def _without_image(messages: list[Message]) -> list[Message]:
    """The trajectory keeps a placeholder, not megabytes of base64 per rollout."""
    out = []
    for m in messages:
        if isinstance(m["content"], list):
            parts = [
                {"type": "text", "text": "[page image]"} if p.get("type") == "image_url" else p
                for p in m["content"]
            ]
            m = {**m, "content": parts}
        out.append(m)
    return out
