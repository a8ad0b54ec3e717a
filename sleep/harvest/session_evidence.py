"""What a session shows about how a prompt was answered, beside the prompt itself.

Mining needs more than the person's words: whether the assistant read or changed the
project (its file and shell tool calls make a task `agentic`), which files it read (a
question about the code is replayed with them, sleep/harvest/file_reads.py), which verification command
it ran (`make test`, `pytest …`: a `command` check), and its final reply (what the person
accepted: the task's reference). The transcript readers hand each assistant record here
with the prompt it answers; everything is bounded, and redacted by the harvest later.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sleep.harvest.file_edits import MAX_EDIT_CHARS, MAX_TURN_EDITS, claude_edits, codex_patch_edits
from sleep.harvest.file_reads import MAX_TURN_READS, reads_of, shell_reads
from sleep.harvest.model import Task

MAX_COMMANDS = 20
MAX_COMMAND_CHARS = 500
MAX_ANSWER_CHARS = 4000
MAX_TOOLS = 30

# Tool names that run a shell command, and where their command is.
_SHELL_TOOLS = {"bash", "shell", "exec_command", "local_shell", "shell_command", "run_shell"}


def _note_tool(task: Task, name: str, command: str | None = None, arguments: Any = None) -> None:
    if name and name not in task.tools and len(task.tools) < MAX_TOOLS:
        task.tools.append(name)
    if command and len(task.commands) < MAX_COMMANDS:
        task.commands.append(command.strip()[:MAX_COMMAND_CHARS])
    for path in [*reads_of(name, arguments), *shell_reads(command)]:
        if path not in task.reads and len(task.reads) < MAX_TURN_READS:
            task.reads.append(path)


def _note_answer(task: Task, text: str) -> None:
    text = text.strip()
    if text:
        task.answer = text[-MAX_ANSWER_CHARS:]


def _command_of(arguments: Any) -> str | None:
    """The shell command in a tool call's arguments (a dict, or JSON text of one)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        # ["bash", "-lc", "make test"]: the script is the last word
        command = (
            command[-1] if len(command) >= 3 and command[1] in ("-lc", "-c") else " ".join(command)
        )
    return command if isinstance(command, str) else None


def shell_command(name: str, arguments: Any) -> str | None:
    """The command of a shell tool call (None for other tools)."""
    return _command_of(arguments) if name.lower() in _SHELL_TOOLS else None


def claude_assistant(
    task: Task, content: Any, edits_of: Callable[[str, Any], list] = claude_edits
) -> None:
    """A Claude Code assistant message's blocks: text replies and tool_use calls. The
    other agents' readers hand their calls in this shape, with their own `edits_of`
    (sleep/harvest/edit_tools.py): the same tool name means other arguments in another agent."""
    if isinstance(content, str):
        _note_answer(task, content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            _note_answer(task, block["text"])
        elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            name = block["name"]
            command = _command_of(block.get("input")) if name.lower() in _SHELL_TOOLS else None
            _note_tool(task, name, command, block.get("input"))
            _note_edits(task, edits_of(name, block.get("input")), block.get("id"))


def _note_edits(task: Task, edits: list, call_id: Any) -> None:
    """The turn's file edits, bounded (an over-long one is dropped, not cut: half an edit
    would not apply). Keyed by the tool call's id, so a failed call's edits can go."""
    kept = [e.to_dict() for e in edits if e.size <= MAX_EDIT_CHARS]
    kept = kept[: max(0, MAX_TURN_EDITS - len(task.edits))]
    task.edits.extend(kept)
    if kept and isinstance(call_id, str):
        task.edit_calls.setdefault(call_id, []).extend(kept)


def failed_call(task: Task, call_id: Any) -> None:
    """A tool call that failed or was rejected changed nothing: its edits go."""
    for edit in task.edit_calls.pop(call_id, []) if isinstance(call_id, str) else []:
        task.edits = [e for e in task.edits if e is not edit]


def _patch_of(name: str, arguments: Any, command: str | None) -> str | None:
    """The `apply_patch` text of a Codex tool call: the custom tool's input, the function
    form's {"input"}, or a shell command running apply_patch on it."""
    if name == "apply_patch":
        if isinstance(arguments, str) and arguments.lstrip().startswith("{"):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return None
        if isinstance(arguments, dict):
            arguments = arguments.get("input", arguments.get("patch"))
        return arguments if isinstance(arguments, str) else None
    if command and "apply_patch" in command and "*** Begin Patch" in command:
        return command[command.index("*** Begin Patch") :]
    return None


def _failed_call(item: dict) -> bool:
    """A patch that did not apply: Codex's patch_apply_end says so, or the apply_patch
    call's output has a non-zero exit code."""
    if item.get("type") == "patch_apply_end":
        return item.get("success") is False
    return item.get("type") == "custom_tool_call_output" and _failed_output(item.get("output"))


def _failed_output(output: Any) -> bool:
    """A custom tool call's output that says it failed (a non-zero exit code)."""
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except ValueError:
            return False
    metadata = output.get("metadata") if isinstance(output, dict) else None
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    return isinstance(code, int) and code != 0


def codex_item(task: Task, item: dict) -> None:
    """A Codex response item or event of the turn: tool calls and assistant replies."""
    kind = item.get("type")
    if kind in ("function_call", "custom_tool_call") and isinstance(item.get("name"), str):
        name = item["name"]
        command = _command_of(item.get("arguments")) if name in _SHELL_TOOLS else None
        _note_tool(task, name, command)
        patch = _patch_of(name, item.get("input", item.get("arguments")), command)
        _note_edits(task, codex_patch_edits(patch), item.get("call_id"))
    elif _failed_call(item):
        failed_call(task, item.get("call_id"))
    elif kind == "local_shell_call":
        action = item.get("action")
        _note_tool(task, "local_shell", _command_of(action) if isinstance(action, dict) else None)
    elif kind == "message" and item.get("role") == "assistant":
        content = item.get("content")
        if isinstance(content, list):
            _note_answer(
                task,
                "\n".join(
                    b["text"]
                    for b in content
                    if isinstance(b, dict) and isinstance(b.get("text"), str)
                ),
            )
    elif kind == "agent_message" and isinstance(item.get("message"), str):
        _note_answer(task, item["message"])
