"""`spreadsheetbench`: SpreadsheetBench (Verified 400) as the published method runs it: the
target writes a Python program that transforms the input workbook (the skill after the
published harness's system prompt, env.options.harness; the program's INPUT_PATH and
OUTPUT_PATH name the workbooks); the program runs in a
bubblewrap jail (envs/spreadsheetbench/sandbox.py, envs/jail.py) on each of the task's test cases;
an error, a timeout or a missing output is fed back and the target tries again, for up to
`max_turns` rounds. With `train_cell_feedback` on, a training item's wrong cells are fed
back too (never on val or test: that would leak the answer into the score).

Scored by the published cell rules (compare.py) over the `answer_position` cells of every
test case: hard = all cells right, soft = the fraction of cells right.

With a coding agent as the target (backend claude_code or codex) the item runs as an agent
task instead: envs/spreadsheetbench/agent.py.

Data: `<data_dir>/{train,val,test}/items.json` of `{id, instruction, instruction_type,
answer_position, cases: [{input, answer}]}`, workbook paths relative to the data directory
(what `skillopt data materialize spreadsheetbench` writes).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

from core.environment.contract import (
    CompleteFn,
    EnvError,
    RolloutResult,
    Score,
    TaskItem,
)
from core.models.types import Completion, Message, RetriesExhausted, TransientError
from envs.harness import HARNESSES, PUBLISHED, SKILL_ONLY, prompt_file, skill_only_system
from envs.jail import BUBBLEWRAP, MODES, require_jail
from envs.scoring import explain_model_error
from envs.split_data import load_split_rows
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result
from envs.spreadsheetbench.compare import Comparison, compare_workbooks, explain
from envs.spreadsheetbench.preview import preview, published_preview
from envs.spreadsheetbench.sandbox import INPUT_NAME, OUTPUT_NAME, Limits, run_program

_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|$)", re.DOTALL)
_PATH_ASSIGNMENT = re.compile(r"^\s*(?:INPUT_PATH|OUTPUT_PATH)\s*=.*$", re.MULTILINE)
SYSTEM_TEMPLATE = Path(__file__).parent / "prompts" / "target_system.md"
FIX = {  # what follows a problem fed back (published: the whole script again, in a block)
    PUBLISHED: "Fix the code and reply with the whole corrected script in a ```python``` block.",
    SKILL_ONLY: "Fix the program.",
}


def extract_program(reply: str, harness: str = SKILL_ONLY) -> str:
    """`skill_only`: the last fenced code block; `published`: the first fenced block,
    whatever its language. The whole reply when it has none."""
    if harness == PUBLISHED:
        start = reply.find("```")
        newline = reply.find("\n", start)
        end = reply.find("```", newline + 1)
        if start == -1 or newline == -1 or end == -1:
            return reply.strip()
        return reply[newline + 1 : end].strip()
    blocks = _CODE.findall(reply)
    return blocks[-1].strip() if blocks else reply.strip()


def with_paths(program: str) -> str:
    """The program with INPUT_PATH and OUTPUT_PATH set to the workbooks the sandbox gives
    it (the published harness's names; its own assignments of them removed, as published
    does), so a program written either way finds its files."""
    cleaned = _PATH_ASSIGNMENT.sub("", program)
    return f"INPUT_PATH = {INPUT_NAME!r}\nOUTPUT_PATH = {OUTPUT_NAME!r}\n{cleaned}"


def published_prompt(item: TaskItem, workbook_preview: str) -> str:
    """The published harness's user turn: the instruction, its type and the answer's
    position, the preview, and the task (INPUT_PATH to OUTPUT_PATH, other cells kept,
    every real row rather than the preview's, only a python block)."""
    return (
        f"# Instruction\n{item.question}\n\n"
        f"Instruction type: {item.task_type}\n"
        f"Expected answer position: {item.data['answer_position']}\n\n"
        f"# Input spreadsheet preview\n{workbook_preview}\n\n"
        "# Task\n"
        "Write a Python script that reads the workbook at `INPUT_PATH`, carries out the "
        "instruction and saves the changed workbook to `OUTPUT_PATH`. Leave every other cell "
        "as it is. The preview may be cut short: do not hardcode row counts or assume the "
        "data stops at the last row shown; loop over all the rows the workbook really has. "
        "Reply with only a ```python``` code block."
    )


class SpreadsheetBenchEnvironment(SplitDirEnvironment):
    name = "spreadsheetbench"
    version = "spreadsheetbench-1"
    source_hint = "the spreadsheetbench_verified_400.tar.gz release or the folder it extracts to"
    READS_DATA_ON_WORKERS = True  # the workbooks
    OPTIONS = {
        "max_turns": 30,
        "exec_timeout_s": 600.0,
        "memory_mb": 2048,
        "max_output_chars": 4000,
        "train_cell_feedback": False,
        "sandbox": BUBBLEWRAP,  # or "audit-hook-only": no jail, the weaker mode, by name
        "harness": PUBLISHED,
    }
    CHOICES = {"sandbox": MODES, "harness": HARNESSES}

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if self.target_kind == "chat":  # an agent target runs in its CLI's own sandbox
            require_jail(self.name, self.options["sandbox"])

    def load_split(self, split: str) -> list[TaskItem]:
        rows = load_split_rows(self.name, self.manifest_dir, self.data_dir, split, self.source_hint)
        return [self.to_item(row, split) for row in rows]

    def to_item(self, row: dict[str, Any], split: str = "") -> TaskItem:
        try:
            cases = [
                {
                    "input": str(self.data_dir / c["input"]),
                    "answer": str(self.data_dir / c["answer"]),
                }
                for c in row["cases"]
            ]
            instruction, position = str(row["instruction"]), str(row["answer_position"])
        except (KeyError, TypeError) as exc:
            raise EnvError(
                f"spreadsheetbench item {row.get('id')!r}: missing field {exc}"
            ) from None
        if not cases:
            raise EnvError(f"spreadsheetbench item {row['id']!r} has no test cases")
        return TaskItem(
            id=row["id"],
            task_type=str(row.get("instruction_type") or "spreadsheet"),
            question=instruction,
            answer=f"the answer workbook's cells at {position}",
            data={"cases": cases, "answer_position": position, "split": split},
        )

    @property
    def limits(self) -> Limits:
        return Limits(
            timeout_s=self.options["exec_timeout_s"],
            memory_mb=self.options["memory_mb"],
            max_output_chars=self.options["max_output_chars"],
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        """Run the program `prediction` (bare or in a fenced block) on every test case and
        compare the cells."""
        program = extract_program(prediction, self.options["harness"])
        comparisons, problem = self._run_cases(program, item)
        return explain(comparisons, item.data["answer_position"], problem)

    def _run_cases(self, program: str, item: TaskItem) -> tuple[list[Comparison], str]:
        comparisons: list[Comparison] = []
        with tempfile.TemporaryDirectory(prefix="skillopt-sheet-out-") as tmp:
            for number, case in enumerate(item.data["cases"], 1):
                result = run_program(
                    with_paths(program),
                    Path(case["input"]),
                    Path(tmp) / str(number),
                    self.limits,
                    self.options["sandbox"],
                )
                if not result.ok:
                    return [], result.problem()
                comparisons.append(
                    compare_workbooks(
                        Path(case["answer"]), result.output, item.data["answer_position"]
                    )
                )
        return comparisons, ""

    def _prompt(self, item: TaskItem) -> str:
        first = Path(item.data["cases"][0]["input"])
        return (
            f"Task on a spreadsheet: {item.question}\n\n"
            f"The answer goes in: {item.data['answer_position']}\n\n"
            f"The workbook (a preview):\n{preview(first)}\n\n"
            f"Write a Python program that opens {INPUT_NAME} from the current directory with "
            f"openpyxl, does the task and saves the result as {OUTPUT_NAME} in the current "
            "directory. Reply with the program in one ```python block."
        )

    def messages(self, item: TaskItem, skill_text: str, harness: str) -> list[Message]:
        """`published`: the codegen system prompt with the skill after it under `## Skill`,
        then the published task text and preview. `skill_only`
        (configs/features/spreadsheetbench_skill_only.yaml): the skill alone, our task text."""
        if harness != PUBLISHED:
            return [*skill_only_system(skill_text), {"role": "user", "content": self._prompt(item)}]
        system = prompt_file(SYSTEM_TEMPLATE)
        if skill_text.strip():
            system += f"\n\n## Skill\n{skill_text.strip()}"
        first = Path(item.data["cases"][0]["input"])
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": published_prompt(item, published_preview(first))},
        ]

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        if self.target_kind == "agent":
            from envs.spreadsheetbench.agent import agent_rollout

            return await agent_rollout(item, skill_text, complete)
        harness = self.options["harness"]
        messages = self.messages(item, skill_text, harness)
        completions: list[Completion] = []
        program, score = "", explain([], item.data["answer_position"], "no program")
        feedback_cells = self.options["train_cell_feedback"] and item.data["split"] == "train"
        fix = FIX[harness]
        for _turn in range(self.options["max_turns"]):
            try:
                completion = await complete(messages)
            except (TransientError, RetriesExhausted) as exc:
                return model_error_result(
                    item, messages, exc, explain_model_error(item.answer, (), str(exc))
                )
            completions.append(completion)
            messages.append({"role": "assistant", "content": completion.text})
            program = extract_program(completion.text, harness)
            comparisons, problem = await asyncio.to_thread(self._run_cases, program, item)
            score = explain(comparisons, item.data["answer_position"], problem)
            if problem:
                messages.append({"role": "user", "content": f"{problem}\n\n{fix}"})
                continue
            if score.hard or not feedback_cells:
                break
            wrong = next(c.first_mismatch for c in comparisons if c.first_mismatch)
            messages.append(
                {"role": "user", "content": f"Some cells are wrong, e.g. {wrong}. {fix}"}
            )
        return scored_result(item, program, score, messages, completions)
