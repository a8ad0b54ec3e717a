"""`bigbench`: slices of three BIG-bench tasks, shipped with the project (Apache-2.0, see
NOTICE.md), on which the embedded 135M model's accuracy can move: `sports_understanding`
(is a sports sentence plausible?), `date_understanding` (pick the date, multiple choice) and
`object_counting` (how many objects?). Chosen with `env.options.task`.

One chat call per item: the skill as the system message (when non-empty), the question as
the user message. The question is the task's own prefix and input; multiple-choice tasks
list their options. Scored like capitals: normalised exact match (hard) and token F1
(soft), best over the accepted answers (object counting accepts "three" and "3").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.environment.contract import SPLITS, CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, RetriesExhausted, TransientError
from envs.scoring import explain_model_error, score_answer
from envs.split_data import manifest_ids
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result

DATA_DIR = Path(__file__).resolve().parent / "data"
TASKS = ("sports_understanding", "date_understanding", "object_counting")


def render(task: str, row: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(question, reference, aliases) of one vendored example."""
    text = " ".join(row["input"].split())
    if "target_scores" in row:
        options = list(row["target_scores"])
        reference = next(o for o, s in row["target_scores"].items() if s == 1)
        if task == "sports_understanding":
            return f"Is this sentence plausible or implausible? {text}", reference, []
        return f"{text} Options: {', '.join(options)}.", reference, []
    targets = [str(t) for t in row["target"]]
    return text, targets[0], targets[1:]


class BigBenchEnvironment(SplitDirEnvironment):
    name = "bigbench"
    version = "bigbench-1"
    source_hint = "(shipped with the project)"
    OPTIONS = {"task": "sports_understanding"}
    CHOICES = {"task": TASKS}

    def __init__(
        self,
        manifest_dir: Path,
        data_dir: Path | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        super().__init__(manifest_dir, data_dir if data_dir is not None else DATA_DIR, options)
        self.task = self.options["task"]
        self._rows: dict[str, dict[str, Any]] | None = None

    def _all_rows(self) -> dict[str, dict[str, Any]]:
        if self._rows is None:
            path = self.data_dir / f"{self.task}.jsonl"
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:
                raise EnvError(f"bigbench: data file not found: {path}") from None
            self._rows = {}
            for number, line in enumerate(lines, 1):
                try:
                    row = json.loads(line)
                    self._rows[row["id"]] = row
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise EnvError(f"{path}:{number}: malformed example ({exc})") from None
        return self._rows

    def load_split(self, split: str) -> list[TaskItem]:
        # The manifests use the published layout; the shipped data is one file per task.
        rows = self._all_rows()
        manifest = self.manifest_dir / self.task
        if split not in SPLITS:
            raise EnvError(f"bigbench: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
        ids = manifest_ids(manifest, split)
        missing = [i for i in ids if i not in rows]
        if missing:
            raise EnvError(
                f"{manifest}/{split}: {len(missing)} id(s) not in the data, e.g. {missing[0]!r}"
            )
        return [self.to_item(rows[i]) for i in ids]

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        question, reference, aliases = render(self.task, row)
        return TaskItem(
            id=row["id"],
            task_type=self.task,
            question=question,
            answer=reference,
            data={"aliases": aliases},
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_answer(prediction, item.answer, item.data["aliases"])

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        messages: list[Message] = []
        if skill_text.strip():
            messages.append({"role": "system", "content": skill_text})
        messages.append({"role": "user", "content": item.question})
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            why = explain_model_error(item.answer, item.data["aliases"], str(exc))
            return model_error_result(item, messages, exc, why)
        prediction = completion.text.strip()
        trajectory = [*messages, {"role": "assistant", "content": completion.text}]
        return scored_result(
            item, prediction, self.score(item, prediction), trajectory, [completion]
        )
