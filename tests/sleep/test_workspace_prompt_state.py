"""The workspace replay prompt says what the workspace is: the project as it stood when the
person asked (its last commit before the session began, plus the session's earlier edits),
not "its current files" (issue 37, the greenhouse strong night)."""

from pathlib import Path

from core.agent_loop.workspace import Workspace
from core.models.types import AgentTask
from sleep.night.handoff_workspace import prompt_messages


def prompt(commit: str | None) -> str:
    task = AgentTask("add a flag", Path("/p"), "skill", lambda _root: None, commit=commit)
    messages = prompt_messages(task, "", "CLAUDE.md", Workspace(Path("/w"), Path("/g")))
    return "\n".join(m["content"] for m in messages)


def test_the_prompt_says_the_workspace_is_the_state_the_person_asked_from():
    for commit in ("0123abc", None):
        text = prompt(commit)
        assert "current files" not in text
        assert "the state it had when the person asked" in text
        assert "earlier edits" in text
    assert "commit 0123abc (its last commit before the session began)" in prompt("0123abc")
