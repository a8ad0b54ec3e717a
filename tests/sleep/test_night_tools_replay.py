"""Issue 21 done-when: a night on an API backend (a real loopback OpenAI-compatible server)
replays the person's agentic tasks as our tool loop: the scripted target reads and edits
the workspace copy at the commit recorded when the night started, and the user's checkout
(uncommitted work included) is untouched."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest

from core.models.types import Request
from tests.sleep.night_double import Brain
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply
from tests.support.project_tree import snapshot
from tests.support.real_transcript_world import make_real_world, openai_roles, real_night
from tests.support.skills_git import plain_git as git

DAY = dt.date(2026, 12, 2)
PROTOCOL = "You are working in a copy of the project."


def call(name: str, **arguments) -> str:
    return "<tool>" + json.dumps({"name": name, "arguments": arguments}) + "</tool>"


class Server:
    """The loopback server's handler. A tools replay (its first user message is the tool
    protocol) follows a script by how many turns it has had: look, read, write, finish;
    every other request goes to the night's deterministic test double (Brain)."""

    def __init__(self) -> None:
        self.brain = Brain()
        self.replays: list[list[dict]] = []

    def __call__(self, record: RecordedRequest) -> Reply:
        messages = record.messages
        users = [m for m in messages if m["role"] == "user"]
        if users and users[0]["content"].startswith(PROTOCOL):
            turn = sum(m["role"] == "assistant" for m in messages)
            if turn == 0:
                self.replays.append(messages)
            script = [
                call("list_dir", path=".") + call("read_file", path="app.py"),
                call("write_file", path="NOTES.md", content="replayed\n")
                + call("edit_file", path="app.py", old="x = 1", new="x = 2"),
                "Done.",
            ]
            return Reply(script[min(turn, 2)])
        return Reply(self.brain(Request("openai", "m", messages)))


@pytest.mark.parametrize("in_git", [True, False], ids=["git-commit", "plain-folder"])
def test_an_api_night_replays_agentic_tasks_in_a_workspace_copy(tmp_path, in_git):
    handler = Server()
    with LoopbackOpenAI(handler=handler) as server:
        world = make_real_world(tmp_path, openai_roles(server.base_url))
        project = world.project
        (project / "app.py").write_text("x = 1\n")
        if in_git:
            git(project, "init", "-q")
            git(project, "add", "-A")
            git(project, "commit", "-q", "-m", "start")
            (project / "app.py").write_text("x = 'uncommitted'\n")
        else:
            (project / "node_modules" / "dep").mkdir(parents=True)
            (project / "node_modules" / "dep" / "index.js").write_text("bulk\n")
        before = snapshot(project)
        status = git(project, "status", "--porcelain") if in_git else ""
        night = real_night(world, DAY)
        result = asyncio.run(night.run())
        requests = list(server.requests)
    assert result.status == "finished", result.message
    assert handler.replays, "no task was replayed with tools"
    tool_rounds = [
        r.messages
        for r in requests
        if r.messages and r.messages[-1]["content"].startswith("Tool results:")
    ]
    first_results = next(m[-1]["content"] for m in tool_rounds if "[list_dir]" in m[-1]["content"])
    assert "[list_dir]\nCLAUDE.md\napp.py\n\n[read_file]" in first_results  # no node_modules
    assert "1: x = 1" in first_results and "uncommitted" not in first_results
    writes = [m[-1]["content"] for m in tool_rounds if "[write_file]" in m[-1]["content"]]
    assert writes and all("wrote NOTES.md" in w and "edited app.py" in w for w in writes)
    rollouts = "\n".join(p.read_text() for p in night.folder.rglob("*.jsonl"))
    assert "+x = 2" in rollouts and "+replayed" in rollouts
    assert snapshot(project) == before
    if in_git:
        assert git(project, "status", "--porcelain") == status
