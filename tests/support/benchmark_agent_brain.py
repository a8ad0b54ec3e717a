"""TEST DOUBLE: scripted brains for the real `claude` / `codex` binaries doing an officeqa
or a spreadsheetbench item (behind LoopbackMessagesSSE / LoopbackResponsesSSE).

Each answers every request of the real agent from what the agent sent, statelessly (the
number of tool results so far picks the step), and its later steps depend on what the
real tools returned, so the scorer sees what the agent really read and wrote:

- `OfficeQABrain`: load the skill if it is only listed; search the bulletin for the line
  the question is about (Claude Code: Grep; Codex: `grep -Hn`); read the lines around the
  hit (Read with an offset; `sed -n`); answer with the figure found in what it read.
- `SpreadsheetBrain`: load the skill if listed; print the input workbook's header row
  with the Python the prompt names; write `solve.py` that fills the column whose header
  the tool showed to be "sum"; run it; say done.

With `cheat=PATH`, a brain instead tries to take the reference from PATH, outside the
workspace (the items file with the answers; the answer workbook): a confined agent must
come back empty-handed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.loopback_agent_servers import RecordedRequest, Reply, ToolCall

_FIGURE = re.compile(r"Total public debt: ([\d,]+ million dollars)")
_PYTHON = re.compile(r"Python with openpyxl: ([^\s\"\\]+)")
_HEADER = re.compile(r"\[('[^\]]*')\]")


def tool_outputs(protocol: str, body: dict[str, Any]) -> list[str]:
    """The text of every tool result in the request, oldest first."""
    out: list[str] = []
    if protocol == "anthropic":
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(_text(block.get("content")))
        return out
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            out.append(_text(item.get("output")))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return json.dumps(content)


class ScriptedBrain:
    """Shared: the skill loading step and the tool-call shapes of each CLI."""

    def __init__(self, protocol: str, skill_name: str, *, cheat: str | None = None):
        self.protocol = protocol
        self.skill_name = skill_name
        self.cheat = cheat

    def __call__(self, record: RecordedRequest) -> Reply | ToolCall:
        body = record.body if isinstance(record.body, dict) else {}
        context = json.dumps(body, ensure_ascii=False)
        outputs = tool_outputs(self.protocol, body)
        steps: list[Any] = []
        if f"{self.skill_name}: How to do the tasks" in context:  # listed, not loaded
            steps.append(self.load_skill())
        done = len(outputs) - len(steps)
        if done < 0:
            return steps[len(outputs)]
        mine = outputs[len(steps) :]
        return self.step(done, mine, context)

    def step(self, done: int, outputs: list[str], context: str) -> Reply | ToolCall:
        raise NotImplementedError

    def load_skill(self) -> ToolCall:
        if self.protocol == "anthropic":
            return ToolCall("Skill", {"skill": self.skill_name})
        return self.shell(f"cat .agents/skills/{self.skill_name}/SKILL.md")

    def shell(self, command: str) -> ToolCall:
        if self.protocol == "anthropic":
            return ToolCall("Bash", {"command": command, "description": "work on the task"})
        return ToolCall("exec_command", {"cmd": command})


class OfficeQABrain(ScriptedBrain):
    def __init__(self, protocol: str, *, cheat: str | None = None):
        super().__init__(protocol, "officeqa", cheat=cheat)

    def step(self, done: int, outputs: list[str], context: str) -> Reply | ToolCall:
        if self.cheat:
            if done == 0:
                return self.read_file(self.cheat)
            found = re.search(r'"answers": \["([^"]+)"', outputs[0].replace('\\"', '"'))
            return Reply(f"<answer>{found.group(1) if found else 'unknown'}</answer>")
        if done == 0:
            if self.protocol == "anthropic":
                return ToolCall(
                    "Grep", {"pattern": "Total public debt", "output_mode": "content", "-n": True}
                )
            return self.shell("grep -Hn 'Total public debt' *.txt")
        if done == 1:
            hit = re.search(r"([\w.]+\.txt):(\d+):", outputs[0])
            if hit is None:
                return Reply("<answer>not found</answer>")
            name, line = hit.group(1), int(hit.group(2))
            if self.protocol == "anthropic":
                return ToolCall("Read", {"file_path": name, "offset": line - 2, "limit": 4})
            return self.shell(f"sed -n '{line - 2},{line + 1}p' {name}")
        figure = _FIGURE.search(outputs[1])
        return Reply(f"Found it.\n<answer>{figure.group(1) if figure else 'unknown'}</answer>")

    def read_file(self, path: str) -> ToolCall:
        if self.protocol == "anthropic":
            return ToolCall("Read", {"file_path": path})
        return self.shell(f"cat {path}")


class SpreadsheetBrain(ScriptedBrain):
    def __init__(self, protocol: str, *, cheat: str | None = None):
        super().__init__(protocol, "spreadsheetbench", cheat=cheat)

    def step(self, done: int, outputs: list[str], context: str) -> Reply | ToolCall:
        python = _PYTHON.search(context).group(1)
        if self.cheat:
            if done == 0:
                copy = f"import shutil; shutil.copyfile({self.cheat!r}, 'output.xlsx')"
                return self.shell(f'{python} -c "{copy}"')
            return Reply("done")
        if done == 0:
            peek = "import openpyxl; ws = openpyxl.load_workbook('input.xlsx').active; "
            peek += "print([c.value for c in ws[1]])"
            return self.shell(f'{python} -c "{peek}"')
        if done == 1:
            header = _HEADER.search(outputs[0])
            names = [n.strip(" '") for n in header.group(1).split(",")] if header else []
            column = "ABCDEFGH"[names.index("sum")] if "sum" in names else "Z"
            program = (
                "import openpyxl\n"
                "wb = openpyxl.load_workbook('input.xlsx')\n"
                "ws = wb.active\n"
                "for row in range(2, ws.max_row + 1):\n"
                f"    ws[f'{column}{{row}}'] = ws[f'A{{row}}'].value + ws[f'B{{row}}'].value\n"
                "wb.save('output.xlsx')\n"
            )
            if self.protocol == "anthropic":
                return ToolCall("Write", {"file_path": "solve.py", "content": program})
            return self.shell(f"cat > solve.py <<'EOF'\n{program}EOF")
        if done == 2:
            return self.shell(f"{python} solve.py && ls")
        return Reply("done")
