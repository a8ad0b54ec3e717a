"""OfficeQA with a coding agent as the target (backend claude_code or codex).

The item's source files, and nothing else, are copied into the agent's fresh workspace;
the skill is placed where the agent reads it (like repo_tasks); the agent searches and
reads the files with its own tools and ends its last message with `<answer>...</answer>`.
That answer is scored by the same scorer as the tool loop. The agent is confined to its
workspace (`workspace_only`): the reference answers are on the same disk. It needs no
commands (`shell=False`), so Claude Code gets its file tools only.
"""

from __future__ import annotations

from core.agent_loop.refusal import ToolRefused
from core.environment.contract import AgentFn, EnvError, RolloutResult, TaskItem
from core.models.types import AgentTask, RetriesExhausted, TransientError
from envs.agent_rollout import agent_result, staged_files
from envs.answer_tag import extract_answer
from envs.officeqa.scoring import score_officeqa
from envs.officeqa.tools import ItemFiles
from envs.scoring import explain_model_error
from envs.split_env import model_error_result

SKILL_NAME = "officeqa"


def agent_prompt(item: TaskItem, names: tuple[str, ...]) -> str:
    listing = "\n".join(f"- {name}" for name in names)
    return (
        "Answer a question from U.S. Treasury Bulletin text files. They are in the current "
        f"directory:\n{listing}\n\nQuestion: {item.question}\n\n"
        "Find the figures in the files; do not change them. End your last message with "
        "the answer alone inside <answer></answer>."
    )


async def agent_rollout(
    item: TaskItem, files: ItemFiles, skill_text: str, run_agent: AgentFn
) -> RolloutResult:
    """`files`: the item's source files (what the tool loop's tools are confined to)."""
    try:
        sources = {name: files.resolve(name) for name in files.names}
    except ToolRefused as exc:
        raise EnvError(
            f"officeqa item {item.id}: {exc} in {files.root}; materialise the data again"
        ) from None
    prompt = agent_prompt(item, files.names)
    with staged_files(sources) as folder:
        task = AgentTask(
            prompt=prompt,
            files=folder,
            skill_name=SKILL_NAME,
            check=lambda workspace: None,
            workspace_only=True,
            shell=False,
        )
        try:
            outcome = await run_agent(task, skill_text)
        except (TransientError, RetriesExhausted) as exc:
            trajectory = [{"role": "user", "content": prompt}]
            return model_error_result(
                item, trajectory, exc, explain_model_error(item.answer, (), str(exc))
            )
    prediction = extract_answer(outcome.text)[0]
    return agent_result(item, prediction, score_officeqa(prediction, item.answer), prompt, outcome)
