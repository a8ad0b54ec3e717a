"""`spreadsheetbench`: SpreadsheetBench (Verified 400) as the published method runs it: the
target writes a Python program that transforms the input workbook; the program runs in a
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
from envs.jail import BUBBLEWRAP, MODES, require_jail
from envs.scoring import explain_model_error
from envs.split_data import load_split_rows
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result
from envs.spreadsheetbench.compare import Comparison, compare_workbooks, explain
from envs.spreadsheetbench.preview import preview
from envs.spreadsheetbench.sandbox import INPUT_NAME, OUTPUT_NAME, Limits, run_program

_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|$)", re.DOTALL)


def extract_program(reply: str) -> str:
    """The last fenced code block, or the whole reply when it has none."""
    blocks = _CODE.findall(reply)
    return blocks[-1].strip() if blocks else reply.strip()


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
    }
    CHOICES = {"sandbox": MODES}

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
        comparisons, problem = self._run_cases(extract_program(prediction), item)
        return explain(comparisons, item.data["answer_position"], problem)

    def _run_cases(self, program: str, item: TaskItem) -> tuple[list[Comparison], str]:
        comparisons: list[Comparison] = []
        with tempfile.TemporaryDirectory(prefix="skillopt-sheet-out-") as tmp:
            for number, case in enumerate(item.data["cases"], 1):
                result = run_program(
                    program,
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

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        if self.target_kind == "agent":
            from envs.spreadsheetbench.agent import agent_rollout

            return await agent_rollout(item, skill_text, complete)
        messages: list[Message] = []
        if skill_text.strip():
            messages.append({"role": "system", "content": skill_text})
        messages.append({"role": "user", "content": self._prompt(item)})
        completions: list[Completion] = []
        program, score = "", explain([], item.data["answer_position"], "no program")
        feedback_cells = self.options["train_cell_feedback"] and item.data["split"] == "train"
        for _turn in range(self.options["max_turns"]):
            try:
                completion = await complete(messages)
            except (TransientError, RetriesExhausted) as exc:
                return model_error_result(
                    item, messages, exc, explain_model_error(item.answer, (), str(exc))
                )
            completions.append(completion)
            messages.append({"role": "assistant", "content": completion.text})
            program = extract_program(completion.text)
            comparisons, problem = await asyncio.to_thread(self._run_cases, program, item)
            score = explain(comparisons, item.data["answer_position"], problem)
            if problem:
                messages.append({"role": "user", "content": f"{problem}\n\nFix the program."})
                continue
            if score.hard or not feedback_cells:
                break
            wrong = next(c.first_mismatch for c in comparisons if c.first_mismatch)
            messages.append(
                {"role": "user", "content": f"Some cells are wrong, e.g. {wrong}. Fix the program."}
            )
        return scored_result(item, program, score, messages, completions)
