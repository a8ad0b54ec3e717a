"""`officeqa`: OfficeQA (questions over U.S. Treasury Bulletin text files) as the published
method runs it: a tool loop in which the target may glob, read (with offset/limit) and grep
the item's own source files, up to `max_tool_turns` calls, then answers.

The skill sits inside the published harness's system prompt (env.options.harness), which
also says how to call the tools. The protocol is plain text so that any chat backend can
follow it (published: the API's function tools): a reply holding
`<tool>{"name": "read", "path": "...", "offset": 0, "limit": 200}</tool>` runs that tool
and the result comes back as the next user message; a reply without a tool call ends the
episode with the `<answer>` tag's text as its answer (published, the default: a reply
without the tag has no answer; skill_only: the whole reply). Tools are confined to the
item's files (envs/officeqa/tools.py). Scored by envs/officeqa/scoring.py.

With a coding agent as the target (backend claude_code or codex) the item runs as an agent
task instead: envs/officeqa/agent.py.

Data: `<data_dir>/{train,val,test}/items.json` of `{id, question, answers, source_files,
source_docs, category}` and the documents in `<data_dir>/docs/`.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from core.agent_loop.loop import json_depth
from core.environment.contract import CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.types import Completion, Message, RetriesExhausted, TransientError
from envs.answer_tag import extract_answer
from envs.harness import HARNESSES, PUBLISHED, framed_system, skill_only_system
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
SYSTEM_TEMPLATE = Path(__file__).parent / "prompts" / "target_system.md"
_FIRST_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)


def build_messages(item: TaskItem, names: tuple[str, ...], skill_text: str, harness: str):
    """`published`: the harness system prompt with the skill inside it (an expert on the
    bulletins; its six rules; call tools without asking; the answer in tags and no tool
    after it), then `## Question`, `## Candidate Files` and, when the item has them,
    `## Source Hints`. The tools are called in our text protocol, shown in that prompt
    (published: the API's function tools; any chat backend can follow text).
    `skill_only` (configs/features/officeqa_skill_only.yaml): the skill alone, the
    protocol, the file names and the question in the user turn."""
    if harness != PUBLISHED:
        user = f"{PROTOCOL}\n\nFiles: {', '.join(names)}\n\nQuestion: {item.question}"
        return [*skill_only_system(skill_text), {"role": "user", "content": user}]
    parts = [f"## Question\n{item.question}", "## Candidate Files\n" + _listed(names)]
    if item.data.get("source_docs"):
        parts.append("## Source Hints\n" + _listed(item.data["source_docs"]))
    return [
        {"role": "system", "content": framed_system(SYSTEM_TEMPLATE, skill_text)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def _listed(lines) -> str:
    return "\n".join(f"- {line}" for line in lines) or "- none"


def published_answer(reply: str) -> str:
    """The published harness's answer: only a reply with an <answer> tag has one, the first
    closed tag's text, else (an unclosed tag) the reply's last line."""
    if "<answer>" not in reply.lower():
        return ""
    match = _FIRST_ANSWER.search(reply)
    if match:
        return match.group(1).strip()
    return [line.strip() for line in reply.splitlines() if line.strip()][-1]


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
    OPTIONS = {"max_tool_turns": 24, "harness": PUBLISHED}
    CHOICES = {"harness": HARNESSES}

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
            data={
                "source_files": files,
                "source_docs": [str(d) for d in row.get("source_docs", [])],
            },
        )

    def files_of(self, item: TaskItem) -> ItemFiles:
        return ItemFiles(self.data_dir / DOCS_DIR, tuple(item.data["source_files"]))

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_officeqa(prediction, item.answer)

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        if self.target_kind == "agent":
            return await agent_rollout(item, self.files_of(item), skill_text, complete)
        files = self.files_of(item)
        harness = self.options["harness"]
        messages: list[Message] = build_messages(item, files.names, skill_text, harness)
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
                if harness == PUBLISHED:
                    prediction = published_answer(completion.text)
                else:
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
