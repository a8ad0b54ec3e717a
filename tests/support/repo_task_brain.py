"""TEST DOUBLE: a scripted brain for the real `claude` / `codex` binaries doing `repo_tasks`.

Behind `LoopbackMessagesSSE` / `LoopbackResponsesSSE` it answers each request of the real
agent from what the agent sent, statelessly (so concurrent sessions never mix):

1. a skill that is only *listed* (Claude Code's Skill tool, Codex's `.agents/skills`) is
   loaded first, the way the real agents do it (Skill tool call / `cat SKILL.md`);
2. the bug is fixed with a shell command (it knows the fix from the task's reference);
3. only if the skill text it received says so (it mentions `CHANGELOG.md`), a line
   `- <module>.<function>: ...` is appended to CHANGELOG.md;
4. then it says "done".

So the agent does the task *better when the skill says how*: without the changelog rule the
tests pass and the changelog check fails (hard 0, soft 0.5); with it both pass. What
counts as "the skill text" is everything in the request except the agent's own earlier
turns, so its own changelog command never teaches it the rule.

Also the scripted optimizer for the `llm` strategy (`optimizer_reply`): its edit adds the
changelog rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.loopback_agent_servers import RecordedRequest, Reply, ToolCall

TASKS = Path(__file__).resolve().parents[2] / "envs" / "repo_tasks" / "tasks"
SKILL_NAME = "repo-tasks"
RULE = (
    "Every change adds a line `- <module>.<function>: <what changed>` under "
    "`## Unreleased` in CHANGELOG.md."
)
INITIAL_SKILL = "# Repo tasks\n\nFix the bug the task describes and keep the tests passing.\n"


def load_tasks(root: Path = TASKS) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("*/task.json"))]


class RepoTaskBrain:
    """`protocol` is "anthropic" (Claude Code) or "openai" (Codex)."""

    def __init__(self, protocol: str, *, skill_name: str = SKILL_NAME):
        self.protocol = protocol
        self.skill_name = skill_name
        self.tasks = load_tasks()

    def __call__(self, record: RecordedRequest) -> Reply | ToolCall:
        body = record.body if isinstance(record.body, dict) else {}
        context = json.dumps(self._not_own_turns(body), ensure_ascii=False)
        task = next((t for t in self.tasks if json.dumps(t["prompt"])[1:-1] in context), None)
        if task is None:
            return Reply("There is no task I recognise here.")
        plan = self.plan(task, context)
        done = self._tool_results(body)
        return plan[done] if done < len(plan) else Reply("done")

    def plan(self, task: dict[str, Any], context: str) -> list[ToolCall]:
        steps: list[ToolCall] = []
        # A skill that is only listed is loaded first. The plan must be the same prefix on
        # every request of a session: whether the skill is listed never changes.
        if f"{self.skill_name}: How to do the tasks" in context:
            if self.protocol == "anthropic":
                steps.append(ToolCall("Skill", {"skill": self.skill_name}))
            else:
                steps.append(self._shell(f"cat .agents/skills/{self.skill_name}/SKILL.md"))
        reference = task["reference"]
        steps.append(self._shell(f"cat > {reference['file']} <<'EOF'\n{reference['content']}EOF"))
        if "CHANGELOG.md" in context:
            module = reference["file"].removesuffix(".py")
            function = re.search(r"`(\w+)`", task["prompt"]).group(1)
            line = f"- {module}.{function}: fixed the bug"
            steps.append(self._shell(f"printf '%s\\n' '{line}' >> CHANGELOG.md"))
        return steps

    def _shell(self, command: str) -> ToolCall:
        if self.protocol == "anthropic":
            return ToolCall("Bash", {"command": command, "description": "edit the workspace"})
        return ToolCall("exec_command", {"cmd": command})

    def _not_own_turns(self, body: dict[str, Any]) -> Any:
        if self.protocol == "anthropic":
            turns = [m for m in body.get("messages", []) if m.get("role") != "assistant"]
            return {"system": body.get("system"), "messages": turns, "tools": body.get("tools")}
        items = [
            i
            for i in body.get("input", [])
            if i.get("type") != "function_call" and i.get("role") != "assistant"
        ]
        return {"instructions": body.get("instructions"), "input": items}

    def _tool_results(self, body: dict[str, Any]) -> int:
        if self.protocol == "anthropic":
            return sum(
                1
                for m in body.get("messages", [])
                if isinstance(m.get("content"), list)
                for block in m["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            )
        return sum(1 for i in body.get("input", []) if i.get("type") == "function_call_output")


def optimizer_reply(prompt: str) -> str:
    """The `llm` strategy's scripted optimizer: the analysis proposes the changelog rule."""
    if "epoch-level guidance" in prompt:
        return json.dumps({"reasoning": "it held", "content": RULE})
    if "notes for yourself" in prompt:
        return json.dumps(
            {"reasoning": "one lesson", "content": "the changelog rule fixed the failing check"}
        )
    if '"order"' in prompt:
        return json.dumps({"order": [0], "reason": "only one edit"})
    return json.dumps(
        {
            "analysis": "the tests pass but the changelog check fails: no CHANGELOG.md line",
            "edits": [
                {
                    "op": "append",
                    "target": "",
                    "content": RULE,
                    "rationale": "the checks want a changelog line for every change",
                }
            ],
        }
    )
