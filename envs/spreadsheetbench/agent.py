"""SpreadsheetBench with a coding agent as the target (backend claude_code or codex).

Each test case's input workbook, and nothing else, is copied into the agent's fresh
workspace (`input.xlsx`, or `input_1.xlsx`, `input_2.xlsx`, ... for several cases); the
skill is placed where the agent reads it (like repo_tasks); the prompt names the output
workbook to save for each input and the Python that has openpyxl. After the run, each
output workbook in the workspace is compared with the answer workbook by the same cell
rules as the program target (compare.py, explain). The agent is confined to its
workspace plus read access to that Python (`workspace_only`, `readable`): the answer
workbooks are on the same disk.

One agent run per item: the agent tests its own work, so the program target's rounds,
limits and training-time cell feedback (`max_turns`, `exec_timeout_s`, `memory_mb`,
`train_cell_feedback`) do not apply; its turns and time are `models.target.max_turns` and
`timeout_s`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from core.environment.contract import AgentFn, RolloutResult, Score, TaskItem
from core.models.types import AgentTask, RetriesExhausted, TransientError
from envs.agent_rollout import agent_result, changes_and_text, staged_files
from envs.scoring import explain_model_error
from envs.split_env import model_error_result
from envs.spreadsheetbench.compare import Comparison, compare_workbooks, explain
from envs.spreadsheetbench.preview import preview

SKILL_NAME = "spreadsheetbench"


def workbook_names(cases: int) -> list[tuple[str, str]]:
    """(input, output) file names in the workspace, one pair per test case."""
    if cases == 1:
        return [("input.xlsx", "output.xlsx")]
    return [(f"input_{n}.xlsx", f"output_{n}.xlsx") for n in range(1, cases + 1)]


def python_readable() -> tuple[Path, ...]:
    """What the agent's commands must read to run this Python with openpyxl: the
    interpreter's prefixes and the folder openpyxl is installed in."""
    import openpyxl

    folders = {
        Path(sys.prefix),
        Path(os.path.realpath(sys.base_prefix)),
        Path(os.path.realpath(sys.executable)).parent,
        Path(openpyxl.__file__).resolve().parents[1],
    }
    return tuple(sorted(folders))


def agent_prompt(item: TaskItem, names: list[tuple[str, str]], workbook_preview: str) -> str:
    pairs = "\n".join(f"- {source} -> {target}" for source, target in names)
    return (
        f"Task on a spreadsheet: {item.question}\n\n"
        f"The answer goes in: {item.data['answer_position']}\n\n"
        f"The workbook (a preview of {names[0][0]}):\n{workbook_preview}\n\n"
        "The input workbooks are in the current directory. Do the task on each one and "
        f"save the result under its output name, in the current directory:\n{pairs}\n\n"
        f"Python with openpyxl: {sys.executable}"
    )


def check_outputs(
    workspace: Path, cases: list[dict[str, Any]], names: list[tuple[str, str]], position: str
) -> tuple[list[Comparison], str]:
    """(comparisons, problem) of the outputs the agent left. A missing output, or a link
    instead of a file, is a problem: nothing outside the workspace is ever read as one."""
    comparisons: list[Comparison] = []
    for case, (_, output) in zip(cases, names, strict=True):
        produced = workspace / output
        if produced.is_symlink() or not produced.is_file():
            return [], f"the agent saved no {output}"
        comparisons.append(compare_workbooks(Path(case["answer"]), produced, position))
    return comparisons, ""


async def agent_rollout(item: TaskItem, skill_text: str, run_agent: AgentFn) -> RolloutResult:
    cases, position = item.data["cases"], item.data["answer_position"]
    names = workbook_names(len(cases))
    prompt = agent_prompt(item, names, preview(Path(cases[0]["input"])))
    inputs = {source: Path(case["input"]) for case, (source, _) in zip(cases, names, strict=True)}
    with staged_files(inputs) as folder:
        task = AgentTask(
            prompt=prompt,
            files=folder,
            skill_name=SKILL_NAME,
            check=lambda workspace: check_outputs(workspace, cases, names, position),
            workspace_only=True,
            readable=python_readable(),
        )
        try:
            outcome = await run_agent(task, skill_text)
        except (TransientError, RetriesExhausted) as exc:
            trajectory = [{"role": "user", "content": prompt}]
            return model_error_result(
                item, trajectory, exc, explain_model_error(item.answer, (), str(exc))
            )
    comparisons, problem = outcome.check
    score: Score = explain(comparisons, position, problem)
    return agent_result(item, changes_and_text(outcome), score, prompt, outcome)
