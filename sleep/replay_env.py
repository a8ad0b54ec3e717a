"""Mined tasks as an environment of the engine (core.environment.contract).

A night's tasks are replayed through the ordinary training loop: `load_split` serves the
tasks of a split, `rollout` asks the target with the skill as its system prompt, then has
the **judge** role grade the reply against the task's rubric (score in [0, 1] and a
reason), and runs the literal checks. The rubric outweighs the checks: soft =
0.75·judge + 0.25·checks (judge alone when there are no checks); hard = soft ≥ pass mark.

The judge's reply must be the JSON the prompt asks for; one repair re-ask, then the
rollout fails with a model error (the night stops loudly), never a silent 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.environment.contract import SPLITS, CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Message, ModelError, RetriesExhausted, TransientError
from core.optimizer.json_reply import OptimizerOutputError, Shape, ask_json
from sleep.prompt_files import render_sleep_prompt
from sleep.tasks import Check, MinedTask

NAME = "sleep"
VERSION = "1"
RUBRIC_WEIGHT = 0.75
DEFAULT_PASS_MARK = 0.7


def _check_verdict(obj: dict) -> dict:
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise OptimizerOutputError('"score" must be a number from 0 to 1')
    if not 0 <= float(score) <= 1:
        raise OptimizerOutputError(f'"score" must be from 0 to 1, got {score}')
    reason = obj.get("reason", "")
    if not isinstance(reason, str):
        raise OptimizerOutputError('"reason" must be a string')
    return {"score": float(score), "reason": reason}


VERDICT_SHAPE = Shape("judge", '{"score": 0.5, "reason": "..."}', _check_verdict)


class JudgeFailed(ModelError):
    """The judge's reply was unusable after a repair: the night must not score on it."""

    exit_code = 1


def task_item(task: MinedTask) -> TaskItem:
    return TaskItem(
        id=task.id,
        task_type=task.kind,
        question=task.intent,
        answer=task.rubric or "(no rubric: judge the reply against the request)",
        data={"checks": [[c.kind, c.value] for c in task.checks], "skill": task.skill},
    )


def checks_of(item: TaskItem) -> list[Check]:
    return [Check(kind, value) for kind, value in item.data.get("checks", [])]


def replay_messages(item: TaskItem, skill_text: str) -> list[Message]:
    messages: list[Message] = []
    if skill_text.strip():
        messages.append({"role": "system", "content": skill_text})
    messages.append({"role": "user", "content": item.question})
    return messages


class ReplayEnvironment:
    name = NAME
    version = VERSION

    def __init__(
        self,
        splits: Mapping[str, list[MinedTask]],
        judge: CompleteFn,
        *,
        pass_mark: float = DEFAULT_PASS_MARK,
    ) -> None:
        self._items = {s: [task_item(t) for t in splits.get(s, [])] for s in SPLITS}
        self.judge = judge
        self.pass_mark = pass_mark

    def load_split(self, split: str) -> list[TaskItem]:
        if split not in SPLITS:
            raise EnvError(f"sleep: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
        return list(self._items[split])

    def score(self, item: TaskItem, prediction: str) -> Score:
        """Checks only (the judge is asynchronous): used where no judge is at hand."""
        checks = checks_of(item)
        passed = sum(c.passes(prediction) for c in checks)
        share = passed / len(checks) if checks else 0.0
        return Score(hard=float(share >= self.pass_mark), soft=share, explanation="checks only")

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        messages = replay_messages(item, skill_text)
        try:
            completion = await complete(messages)
            reply = completion.text.strip()
            verdict = await self._judge(item, reply)
        except (TransientError, RetriesExhausted) as exc:
            return self._failed(item, messages, str(exc))
        checks = checks_of(item)
        failed = [c for c in checks if not c.passes(reply)]
        soft = verdict["score"]
        if checks:
            share = (len(checks) - len(failed)) / len(checks)
            soft = RUBRIC_WEIGHT * soft + (1 - RUBRIC_WEIGHT) * share
        explanation = f"judge {verdict['score']:.2f}: {verdict['reason']}"
        if checks:
            explanation += f"; checks {len(checks) - len(failed)}/{len(checks)} passed"
            if failed:
                explanation += " (failed: " + ", ".join(c.describe() for c in failed) + ")"
        explanation += f"; rubric: {item.answer}"
        return RolloutResult(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            reference=item.answer,
            prediction=reply,
            hard=float(soft >= self.pass_mark),
            soft=round(soft, 6),
            explanation=explanation,
            trajectory=[*messages, {"role": "assistant", "content": completion.text}],
            input_tokens=completion.usage.input_tokens,
            output_tokens=completion.usage.output_tokens,
            latency_s=completion.latency_s,
            cached=completion.cached,
        )

    async def _judge(self, item: TaskItem, reply: str) -> dict:
        prompt = render_sleep_prompt("judge", intent=item.question, rubric=item.answer, reply=reply)
        answer = await ask_json(self.judge, [{"role": "user", "content": prompt}], VERDICT_SHAPE)
        if not answer.ok:
            raise JudgeFailed(
                f"the judge's reply for task {item.id} is unusable ({answer.error}); the night "
                "stops without staging: check models.judge (a stronger model, more max_tokens)"
            )
        return answer.value

    def _failed(self, item: TaskItem, messages: list[Message], error: str) -> RolloutResult:
        return RolloutResult(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            reference=item.answer,
            prediction="",
            hard=0.0,
            soft=0.0,
            explanation=f"model error: {error}",
            trajectory=list(messages),
            error=error,
        )
