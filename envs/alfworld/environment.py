"""`alfworld`: ALFWorld household text games as the published method plays them: an episode
of up to `max_steps` steps, one model call per step, the admissible actions listed in every
prompt; hard = soft = the won flag. The published harness (env.options.harness) puts the
skill in each step's user turn, shows the last two steps, and reads the action from an
<action> tag (`look` when there is none).

Data: `<data_dir>/{train,val,test}/items.json` of `{id, gamefile, task_type}` where
`gamefile` is absolute or relative to the data directory (what `skillopt data materialize
alfworld --source $ALFWORLD_DATA` writes after checking every game file exists). Episodes
come from envs/alfworld/episodes.py.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from core.environment.contract import (
    CompleteFn,
    EnvError,
    RolloutResult,
    Score,
    TaskItem,
)
from core.environment.verdicts import VERDICT_CORRECT, VERDICT_WRONG
from core.models.types import Completion, Message, RetriesExhausted, TransientError
from envs.alfworld.episodes import Observation, open_episode
from envs.harness import HARNESSES, PUBLISHED, prompt_file, skill_only_system
from envs.scoring import explain_model_error, shown_text
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result

HISTORY_STEPS = 10
PUBLISHED_HISTORY_STEPS = 2
_ACTION = re.compile(r"<action>(.*?)(?:</action>|$)", re.IGNORECASE | re.DOTALL)
_PUBLISHED_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
PROMPTS = Path(__file__).parent / "prompts"
SYSTEM = "You act as an expert agent in the ALFRED embodied household environment."
SKILL_INTRO = (
    "The skill document below holds strategies learned so far; let its guidelines inform "
    "your decisions:"
)


def read_action(reply: str, admissible: list[str]) -> str:
    """The action in an <action> tag, else the reply's first non-empty line; matched to an
    admissible action ignoring case and a trailing period when it can be."""
    match = _ACTION.search(reply)
    text = match.group(1) if match else next((ln for ln in reply.splitlines() if ln.strip()), "")
    text = text.strip().strip("`").removeprefix("Action:").removeprefix("> ").strip().rstrip(".")
    for action in admissible:
        if action.lower() == text.lower():
            return action
    return text


def build_prompt(
    task: str, history: list[tuple[str, str]], obs: Observation, step: int, max_steps: int
) -> str:
    lines = [task, ""]
    if history:
        lines.append("What happened so far:")
        for action, seen in history[-HISTORY_STEPS:]:
            lines.append(f"> {action}\n{seen}")
        lines.append("")
    lines.append(f"Now (step {step} of {max_steps}): {obs.text}")
    lines.append("Admissible actions: " + "; ".join(obs.admissible))
    lines.append("Reply with exactly one admissible action.")
    return "\n".join(lines)


def published_action(reply: str) -> str:
    """The published harness's action: the first <action> tag's text in lower case; a reply
    without one (or an empty reply) is taken as `look`."""
    match = _PUBLISHED_ACTION.search(reply)
    action = match.group(1).strip().lower() if match else ""
    return action or "look"


def published_messages(
    skill_text: str, task: str, history: list[tuple[str, str]], obs: Observation
) -> list[Message]:
    """The published harness's step: a one-line system prompt; the user turn holds the skill
    under `## Skill Knowledge`, then (from the second step) the task, the step count and the
    last two observations with the action taken at each, then the observation, the
    admissible actions, and the request to reason in <think> and act in <action> tags.
    `history`: (observation seen, action taken) pairs."""
    actions = "\n ".join(f"'{a}'" for a in obs.admissible if a != "help")
    if history:
        recent = history[-PUBLISHED_HISTORY_STEPS:]
        first = len(history) - len(recent) + 1
        lines = "\n".join(
            f"[Observation {first + n}: '{seen}', Action {first + n}: '{action}']"
            for n, (seen, action) in enumerate(recent)
        )
        step = prompt_file(PROMPTS / "target_later_step.md")
        step = step.format(
            task=task,
            taken=len(history),
            shown=len(recent),
            history=lines,
            step=len(history) + 1,
            observation=obs.text,
            actions=actions,
        )
    else:
        step = prompt_file(PROMPTS / "target_first_step.md")
        step = step.format(observation=obs.text, actions=actions)
    if skill_text.strip():
        step = f"## Skill Knowledge\n{SKILL_INTRO}\n\n{skill_text.strip()}\n\n{step}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": step}]


def explain(won: bool, steps: int, last_action: str) -> Score:
    verdict = VERDICT_CORRECT if won else f"{VERDICT_WRONG} (not won within {steps} steps)"
    explanation = (
        f'expected "the task completed"; got "{"won" if won else "not won"} after {steps} steps, '
        f'last action {shown_text(last_action)}" — verdict: {verdict}; exact match {int(won)}; '
        f"token F1 {float(won):.2f}"
    )
    return Score(hard=float(won), soft=float(won), explanation=explanation)


class ALFWorldEnvironment(SplitDirEnvironment):
    name = "alfworld"
    version = "alfworld-1"
    source_hint = "your ALFWorld data root ($ALFWORLD_DATA after `alfworld-download`)"
    READS_DATA_ON_WORKERS = True  # the game files
    OPTIONS = {"max_steps": 50, "harness": PUBLISHED}
    CHOICES = {"harness": HARNESSES}

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        try:
            gamefile = Path(str(row["gamefile"]))
        except KeyError:
            raise EnvError(f"alfworld item {row.get('id')!r} has no gamefile") from None
        task_type = str(row.get("task_type") or "alfworld")
        return TaskItem(
            id=row["id"],
            task_type=task_type,
            question=f"ALFWorld {task_type} episode {row['id']}",
            answer="the task completed",
            data={
                "gamefile": str(gamefile if gamefile.is_absolute() else self.data_dir / gamefile)
            },
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        """An episode is scored while it is played; a bare prediction cannot be re-scored."""
        return explain(prediction == "won", 0, "")

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        episode = await asyncio.to_thread(open_episode, Path(item.data["gamefile"]))
        try:
            obs = await asyncio.to_thread(episode.reset)
            task, _, first = obs.text.partition("Your task is to:")
            task_line = f"Your task is to:{first}".strip() if first else obs.text
            trajectory: list[Message] = [{"role": "user", "content": obs.text}]
            history: list[tuple[str, str]] = []
            seen: list[tuple[str, str]] = []  # (observation, the action taken at it)
            completions: list[Completion] = []
            action, max_steps = "", self.options["max_steps"]
            published = self.options["harness"] == PUBLISHED
            for step in range(1, max_steps + 1):
                if published:
                    messages = published_messages(skill_text, first.strip(), seen, obs)
                else:
                    prompt = build_prompt(
                        f"{task.strip()}\n{task_line}".strip(), history, obs, step, max_steps
                    )
                    messages = [*skill_only_system(skill_text), {"role": "user", "content": prompt}]
                try:
                    completion = await complete(messages)
                except (TransientError, RetriesExhausted) as exc:
                    why = explain_model_error(item.answer, (), str(exc))
                    return model_error_result(item, trajectory, exc, why)
                completions.append(completion)
                if published:
                    action = published_action(completion.text)
                else:
                    action = read_action(completion.text, obs.admissible)
                seen.append((obs.text, action))
                obs = await asyncio.to_thread(episode.step, action)
                history.append((action, obs.text))
                trajectory += [
                    {"role": "assistant", "content": action},
                    {"role": "user", "content": obs.text},
                ]
                if obs.won:
                    break
            score = explain(obs.won, len(completions), action)
            prediction = "won" if obs.won else "not won"
            return scored_result(item, prediction, score, trajectory, completions)
        finally:
            episode.close()
