"""Issue 37: a chat replay of a question about the code got no code, so a correct answer
was not possible (the strong-model night's analyst then learned "don't hedge" from those
failures). The harvest keeps the files a turn read (a Claude Code Read call, a Codex
`sed -n`), the miner keeps them on the task, and the chat replay is given their content
as it was where the replay starts (the last commit before the session), read-only, and
none of the files the session did not read. Real transcripts through the real harvest,
a real git project; the chat target and the judge are TEST DOUBLES."""

from __future__ import annotations

import asyncio
import json
import subprocess

from core.models.types import Completion, Usage
from sleep.harvest.file_reads import shell_reads
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import codex_item
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import MinedTask, TaskArchive
from sleep.night.read_files import read_files
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from sleep.night.replay_tools import ToolReplay
from tests.sleep.test_prior_edits import harvested, tool_result, tool_use
from tests.sleep.test_replay_start import commit_at
from tests.sleep.transcripts import claude_assistant, claude_user

SESSION_START = "2026-03-26T14:02:10.018Z"
QUESTION = "are nulls dropped or kept by clean() in billing.py?"
KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0123456789"
AT_START = (
    f"LEDGER_KEY = '{KEY}'\n\n\n"
    "def clean(rows):\n    # nulls are KEPT: the ledger needs every row\n    return rows\n"
)
LATER = "def clean(rows):\n    return [r for r in rows if r is not None]  # LATER\n"
NOT_READ = "UNREAD_MARKER = 'report.py was never opened in the session'\n"


def project_changed_after(tmp_path):
    """billing.py as the session read it, then changed after the session began."""
    project = tmp_path / "billing-svc"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "billing.py").write_text(AT_START)
    (project / "report.py").write_text(NOT_READ)
    commit_at(project, "2026-03-25T10:00:00Z", "start")
    (project / "billing.py").write_text(LATER)
    head = commit_at(project, "2026-03-26T16:00:00Z", "drop nulls")
    return project, head


def asked(tmp_path, cwd: str) -> MinedTask:
    records = [
        claude_user(QUESTION, cwd=cwd, timestamp=SESSION_START),
        tool_use(cwd, "Read", {"file_path": f"{cwd}/billing.py"}, "toolu_1"),
        tool_result(cwd, "toolu_1"),
        claude_assistant("Kept: clean() returns every row.", cwd=cwd),
    ]
    (task,) = [t for t in mine_sessions(harvested(tmp_path, records)) if t.intent == QUESTION]
    return task


def test_the_files_a_turn_read_are_harvested_and_kept_on_its_task(tmp_path):
    project, _ = project_changed_after(tmp_path)
    task = asked(tmp_path, str(project))
    assert task.kind == "advice" and task.read_files == ["billing.py"]
    archive = TaskArchive(tmp_path / "tasks.json")
    archive.merge([task])
    assert archive.load()[task.id].read_files == ["billing.py"]
    # Codex reads with its shell
    turn = Task("q", None)
    arguments = json.dumps({"command": ["bash", "-lc", "sed -n '1,80p' billing.py | head -n 5"]})
    codex_item(turn, {"type": "function_call", "name": "shell", "arguments": arguments})
    assert turn.reads == ["billing.py"]
    assert shell_reads("nl -ba src/a.py && cat b.md 2>/dev/null; ls -la") == ["src/a.py", "b.md"]


def test_each_agent_s_read_tool_is_a_read():
    from sleep.harvest.file_reads import reads_of

    calls = [
        ("Read", {"file_path": "/p/a.py"}),  # Claude Code, Cursor
        ("read", {"path": "@/p/a.py"}),  # pi
        ("read", {"filePath": "/p/a.py"}),  # OpenCode
        ("view", {"path": "/p/a.py"}),  # Copilot CLI
        ("copilot_readFile", {"filePath": "/p/a.py"}),  # VS Code Copilot Chat
    ]
    assert [reads_of(name, args) for name, args in calls] == [["/p/a.py"]] * len(calls)
    assert reads_of("Edit", {"file_path": "/p/a.py"}) == []


async def _judge(_messages, **_kw):
    return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "j")


def replayed_prompt(task: MinedTask, backend: str, **where) -> str:
    seen: list[list[dict]] = []

    async def target(messages, **_kw):  # a TEST DOUBLE of the chat target
        seen.append(messages)
        return Completion("Kept.", Usage(), "stop", 0.0, "t")

    env = ReplayEnvironment({"val": [task]}, _judge, target_backend=backend, **where)
    [item] = env.load_split("val")
    result = asyncio.run(env.rollout(item, "# Billing notes\n", target))
    assert result.hard == 1
    [messages] = seen
    assert messages[0] == {"role": "system", "content": "# Billing notes\n"}
    return messages[-1]["content"]


def test_a_chat_replay_of_a_code_question_holds_the_files_its_session_read(tmp_path):
    project, head = project_changed_after(tmp_path)
    task = asked(tmp_path, str(project))
    for backend, where in (
        ("openai", {"tools": ToolReplay(project, head)}),
        ("handoff", {"workspace": AgentReplay(project, head, "billing-svc")}),
    ):
        prompt = replayed_prompt(task, backend, **where)
        assert "# nulls are KEPT: the ledger needs every row" in prompt  # as when asked
        assert KEY not in prompt and "LEDGER_KEY" in prompt  # its secret redacted
        assert "LATER" not in prompt  # not as the night's commit has it
        assert "UNREAD_MARKER" not in prompt  # a file the session did not read
        assert "billing.py" in prompt and prompt.endswith(QUESTION)


CODE_QUESTIONS = {
    "is format_total locale aware?": ["billing.py"],
    "does parse_amount accept negative numbers?": ["billing.py"],
    "walk me through how pipeline.py handles rows with a null amount, step by step": [
        "pipeline.py"
    ],
}


def test_the_corpus_code_questions_replay_with_the_files_their_sessions_read(tmp_path):
    """The corrections corpus (real Claude Code and Codex sessions): each chat-replayed
    question whose session read the code carries those files, all there at its start."""
    from tests.sleep.corrections_world import lay_out

    world = lay_out(tmp_path)
    plan = world.dry_run()
    listed = {t["text"]: t for s in plan["skills"] for t in s["tasks"] if t["replay"] == "chat"}
    for text, files in CODE_QUESTIONS.items():
        assert listed[text]["read_files"] == files, text
        found = read_files(files, world.project, listed[text]["start_commit"], str(world.project))
        assert [p for p, _ in found.shown] == files and not found.missing


async def test_the_model_miner_keeps_the_files_read_on_the_tasks_it_refines_and_adds():
    from sleep.mine.with_model import mine_with_model
    from tests.sleep.test_mine_model_keeps import scripted

    reads = ["billing.py", "/elsewhere/secrets.py", "../up.py"]
    session = {
        "source": "codex", "session_id": "s1", "cwd": "/p", "branch": "main",
        "automation": False,
        "tasks": [  # a fragment the heuristic leaves out, then a question it keeps
            {"text": "nulls?", "timestamp": SESSION_START, "reads": reads},
            {"text": QUESTION, "timestamp": SESSION_START, "answer": "Kept.", "reads": reads},
        ],
    }  # fmt: skip
    reply = {"tasks": [
        {"intent": "say whether clean() keeps null rows", "kind": "advice", "rubric": "",
         "sources": [1], "checks": []},
        {"intent": QUESTION, "kind": "advice", "rubric": "", "sources": [2], "checks": []},
    ]}  # fmt: skip
    tasks = await mine_with_model([session], scripted(reply))
    assert sorted(t.intent for t in tasks) == sorted([QUESTION, reply["tasks"][0]["intent"]])
    assert all(t.read_files == ["billing.py"] for t in tasks)  # none outside the session's folder


def test_an_interrupted_request_redirected_keeps_the_files_its_stopped_turn_read():
    """The issue's case: Escape on a long walk-through of loader.py, then "never mind …
    just tell me": the task is the interrupted request, and its chat replay needs the code
    the stopped turn read."""
    session = {
        "source": "claude", "session_id": "s1", "cwd": "/p", "branch": "main",
        "automation": False,
        "tasks": [
            {"text": "walk me through load_rows() in loader.py", "timestamp": SESSION_START,
             "interrupted": True, "aborted": True, "tools": ["Read"], "reads": ["/p/loader.py"]},
            {"text": "never mind the long version, just tell me whether nulls are dropped or kept",
             "timestamp": SESSION_START, "answer": "Kept."},
        ],
    }  # fmt: skip
    [task] = mine_sessions([session])
    assert task.intent.startswith("walk me through") and task.read_files == ["loader.py"]
