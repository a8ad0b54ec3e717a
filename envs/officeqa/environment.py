"""`officeqa`: OfficeQA (questions over U.S. Treasury Bulletin text files) as the published
method runs it: a tool loop in which the target may glob, read (with offset/limit) and grep
the item's own source files, up to `max_tool_turns` calls, then answers.

The protocol is plain text so that any chat backend can follow it: a reply holding
`<tool>{"name": "read", "path": "...", "offset": 0, "limit": 200}</tool>` runs that tool
and the result comes back as the next user message; a reply with `<answer>...</answer>`
(or with neither, taken as the answer) ends the episode. Tools are confined to the item's
files (envs/officeqa/tools.py). Scored by envs/officeqa/scoring.py.

With a coding agent as the target (backend claude_code or codex) the item runs as an agent
task instead: envs/officeqa/agent.py.

Data: `<data_dir>/{train,val,test}/items.json` of `{id, question, answers, source_files,
category}` and the documents in `<data_dir>/docs/`.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from core.agent_loop.loop import json_depth
from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Completion, Message, RetriesExhausted, TransientError
from envs.answer_tag import extract_answer
from envs.officeqa.agent import agent_rollout
from envs.officeqa.scoring import score_officeqa
from envs.officeqa.tools import ItemFiles
from envs.scoring import explain_model_error
from envs.split_env import SplitDirEnvironment, model_error_result, scored_result

DOCS_DIR = "docs"
MAX_CALL_DEPTH = 20
_TOOL = re.compile(r"<tool>(.*?)(?:</tool>|$)", re.DOTALL)

PROTOCOL = """You can look at this task's files with tools. To call one, reply with only
<tool>{"name": "glob", "pattern": "*.txt"}</tool>
<tool>{"name": "read", "path": "FILE", "offset": 0, "limit": 200}</tool>
<tool>{"name": "grep", "pattern": "REGEX", "path": "FILE"}</tool>
When you know the answer, reply with <answer>...</answer>."""


def parse_tool_call(reply: str) -> tuple[str, dict[str, Any]] | None | str:
    """(name, args) of a tool call, None when the reply has none, or an error text."""
    match = _TOOL.search(reply)
    if not match:
        return None
    text = match.group(1).strip()
    if json_depth(text, MAX_CALL_DEPTH) > MAX_CALL_DEPTH:
        return (
            f"error: the tool call nests deeper than {MAX_CALL_DEPTH} levels; use the shapes shown"
        )
    try:
        call = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"error: the tool call is not JSON ({exc.msg}); use the shapes shown"
    except (ValueError, RecursionError):  # e.g. a number of more digits than Python reads
        return "error: the tool call could not be read (a number too long); use the shapes shown"
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return 'error: a tool call is a JSON object with a "name"'
    name = call.pop("name")
    return name, call


class OfficeQAEnvironment(SplitDirEnvironment):
    name = "officeqa"
    version = "officeqa-1"
    source_hint = "a folder holding officeqa_full.csv and the treasury_bulletin_*.txt documents"
    OPTIONS = {"max_tool_turns": 24}

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        try:
            answers = [str(a) for a in row["answers"]]
            files = [str(f) for f in row["source_files"]]
            question = str(row["question"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"officeqa item {row.get('id')!r}: missing field {exc}") from None
        if not answers:
            raise EnvError(f"officeqa item {row['id']!r} has no gold answer")
        return TaskItem(
            id=row["id"],
            task_type=str(row.get("category") or "officeqa"),
            question=question,
            answer=answers[0],
            data={"source_files": files},
        )

    def files_of(self, item: TaskItem) -> ItemFiles:
        return ItemFiles(self.data_dir / DOCS_DIR, tuple(item.data["source_files"]))

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_officeqa(prediction, item.answer)

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        if self.target_kind == "agent":
            return await agent_rollout(item, self.files_of(item), skill_text, complete)
        files = self.files_of(item)
        messages: list[Message] = []
        if skill_text.strip():
            messages.append({"role": "system", "content": skill_text})
        messages.append(
            {
                "role": "user",
                "content": f"{PROTOCOL}\n\nFiles: {', '.join(files.names)}\n\nQuestion: {item.question}",
            }
        )
        completions: list[Completion] = []
        prediction = ""
        for _turn in range(self.options["max_tool_turns"] + 1):
            try:
                completion = await complete(messages)
            except (TransientError, RetriesExhausted) as exc:
                return model_error_result(
                    item, messages, exc, explain_model_error(item.answer, (), str(exc))
                )
            completions.append(completion)
            messages.append({"role": "assistant", "content": completion.text})
            call = parse_tool_call(completion.text)
            if call is None:
                prediction = extract_answer(completion.text)[0]
                break
            if len(completions) > self.options["max_tool_turns"]:
                break  # the tool budget is spent: no answer
            # A tool call can take seconds (grep's time limit): off the event loop.
            observation = (
                call if isinstance(call, str) else await asyncio.to_thread(files.call, *call)
            )
            messages.append({"role": "user", "content": f"Tool result:\n{observation}"})
        return scored_result(item, prediction, self.score(item, prediction), messages, completions)
