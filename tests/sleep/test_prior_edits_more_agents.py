"""pi, OpenCode, Copilot CLI, VS Code Copilot Chat and Cursor follow-ups carry their
session's earlier file edits (sleep/harvest/edit_tools.py), with Claude Code's and Codex's rules:
a failed call's edits go, one holding a secret is dropped whole, paths are confined.

pi, OpenCode and Copilot CLI: the sessions their real binaries wrote when a scripted model
called their own edit tools (tests/sleep/fixtures/agents/make_edits.py). VS Code and
Cursor: hand-made records in the shapes sleep/harvest/edit_tools.py names (no binary runs here)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sleep.harvest.edit_tools import copilot_edits, cursor_edits, opencode_edits, pi_edits
from sleep.harvest.file_edits import FileEdit
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import TaskArchive
from sleep.night.edited_tree import edited_tree
from tests.sleep.more_agents import PROJECT, REAL, SECRET, run

EDITS = REAL / "edits"
RENAMED = FileEdit("notes.py", "def make_note(text):", "def add_note(text):")
USAGE = FileEdit("docs/usage.md", "Call make_note(text).\n", write=True)
# What each agent's first turn left that a follow-up replays on: the secret file is
# dropped by the harvest; Copilot's `create` of docs/usage.md failed (no such folder).
KEPT = {"pi": [RENAMED, USAGE], "opencode": [RENAMED, USAGE], "copilot": [RENAMED]}


def _expected(agent: str) -> dict:
    return json.loads((EDITS / agent / "expected.json").read_text())


def _home(tmp: Path, agent: str) -> Path:
    home = tmp / "home"
    if agent == "pi":
        shutil.copytree(EDITS / "pi" / "sessions", home / ".pi" / "agent" / "sessions")
    elif agent == "opencode":
        (home / ".local" / "share" / "opencode").mkdir(parents=True)
        shutil.copy(EDITS / "opencode" / "opencode.db", home / ".local/share/opencode")
    elif agent == "copilot":
        shutil.copytree(EDITS / "copilot" / "session-state", home / ".copilot" / "session-state")
    elif agent == "vscode":
        storage = home / ".config" / "Code" / "User" / "workspaceStorage" / "ab12"
        (storage / "chatSessions").mkdir(parents=True)
        (storage / "workspace.json").write_text(json.dumps({"folder": f"file://{PROJECT}"}))
    elif agent == "cursor":
        folder = home / ".cursor" / "projects" / "home-dev-src-notes-app"
        (folder / "agent-transcripts" / "c1").mkdir(parents=True)
        (folder / ".workspace-trusted").write_text(json.dumps({"workspacePath": PROJECT}))
    return home


def _everything_written(tmp: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (tmp / "state").rglob("*") if p.is_file())


def _follow_up(tmp: Path, result) -> list[FileEdit]:
    """The follow-up's earlier edits, the mined tasks kept in an archive beside the state
    (so the secret check sees them too)."""
    # The binaries ran in print mode here (OpenCode's TUI draws nothing under tmux), which
    # marks OpenCode's and Copilot's sessions automation: mined as if typed.
    sessions = [s.to_json() for s in result.sessions]
    mined = mine_sessions(sessions, include_automation=True)
    TaskArchive(tmp / "state" / "mined-tasks.json").merge(mined)
    (task,) = [t for t in mined if "after the earlier changes" in t.intent]
    return task.prior_edits


def _notes_project(tmp: Path) -> tuple[Path, str]:
    """The project the fixtures' agents ran in, as a git repository."""
    project = tmp / "notes-app"
    project.mkdir()
    (project / "notes.py").write_text("def add_note(text):\n    return {'text': text}\n")
    (project / "README.md").write_text("# notes\n")
    git = lambda *a: subprocess.run(["git", "-C", str(project), *a], check=True,  # noqa: E731
                                    capture_output=True, text=True)  # fmt: skip
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return project, git("rev-parse", "HEAD").stdout.strip()


@pytest.mark.parametrize("agent", ["pi", "opencode", "copilot"])
def test_a_real_follow_up_carries_the_first_turns_edits_and_no_secret(tmp_path, agent):
    """Fails on the old code: only Claude Code's and Codex's edit tools were read, so these
    follow-ups carried no earlier edits."""
    result = run(tmp_path, _home(tmp_path, agent), commit=True)
    assert _follow_up(tmp_path, result) == KEPT[agent]
    assert result.redactions["github_token"] >= 1  # the secret file's write, counted
    assert SECRET not in _everything_written(tmp_path)

    # Replayed, the kept edits give what the real agent left, less the secret's file.
    project, commit = _notes_project(tmp_path)
    left = {k: v for k, v in _expected(agent)["files_after"].items() if k != "config.py"}
    with edited_tree(project, commit, KEPT[agent]) as tree:
        made = {
            str(p.relative_to(tree.root)): p.read_text()
            for p in tree.root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(tree.root).parts
        }
        assert made == left and tree.skipped == []


def _vscode_log(home: Path, parts: list[dict]) -> None:
    def request(rid: str, text: str, response: list[dict]) -> dict:
        return {"requestId": rid, "timestamp": 1796214750000, "message": {"text": text},
                "agent": {"extensionId": "github.copilot-chat"}, "response": response}  # fmt: skip

    state = {"sessionId": "vs-edits", "requests": [
        request("r1", "Rename add_note to make_note and write the usage notes.", parts),
        request("r2", "Now also document make_note, after the earlier changes.", []),
    ]}  # fmt: skip
    folder = next((home / ".config" / "Code").rglob("chatSessions"))
    (folder / "vs-edits.jsonl").write_text(json.dumps({"kind": 0, "v": state}) + "\n")


def _invocation(tool_id: str, raw: dict, **extra) -> dict:
    return {"kind": "toolInvocationSerialized", "toolId": tool_id, "isComplete": True,
            "toolSpecificData": {"kind": "input", "rawInput": raw}, **extra}  # fmt: skip


def test_a_vscode_follow_up_carries_the_edit_tools_inputs(tmp_path):
    """Fails on the old code: a tool invocation's input was not read. A denied call, a
    secret and a line-and-column textEditGroup are not kept; nothing writes the secret."""
    home = _home(tmp_path, "vscode")
    at = f"{PROJECT}/notes.py"
    _vscode_log(home, [
        _invocation("copilot_replaceString", {"filePath": at, "oldString": RENAMED.old,
                                              "newString": RENAMED.new}),
        _invocation("copilot_createFile", {"filePath": f"{PROJECT}/config.py",
                                           "content": f'TOKEN = "{SECRET}"\n'}),
        _invocation("replace_string_in_file", {"filePath": at, "oldString": "return",
                                               "newString": "yield"}, isConfirmed={"type": 0}),
        {"kind": "textEditGroup", "uri": {"scheme": "file", "path": at}, "done": True,
         "edits": [[{"text": "x", "range": {"startLineNumber": 1, "startColumn": 1,
                                            "endLineNumber": 1, "endColumn": 1}}]]},
        _invocation("copilot_multiReplaceString", {"replacements": [
            {"filePath": at, "oldString": "'text'", "newString": "'body'"}]}),
        _invocation("create_file", {"filePath": f"{PROJECT}/docs/usage.md",
                                    "content": USAGE.new}),
    ])  # fmt: skip
    result = run(tmp_path, home, commit=True)
    assert _follow_up(tmp_path, result) == [
        RENAMED,
        FileEdit("notes.py", "'body'", "'text'"),
        USAGE,
    ]
    assert SECRET not in _everything_written(tmp_path)


def test_a_cursor_follow_up_carries_the_edit_tools_inputs(tmp_path):
    """Fails on the old code: Cursor's StrReplace / Write / ApplyPatch were not read. The
    secret's file and a path outside the project are not kept."""
    home = _home(tmp_path, "cursor")
    patch = f"*** Begin Patch\n*** Add File: {PROJECT}/docs/usage.md\n+Call make_note(text).\n*** End Patch"  # noqa: E501

    def said(*blocks: dict) -> str:
        return json.dumps({"role": "assistant", "message": {"content": list(blocks)}})

    def call(name: str, arguments) -> dict:
        return {"type": "tool_use", "name": name, "input": arguments}

    lines = [
        json.dumps({"role": "user", "message": {"content": [{"type": "text", "text":
            "<user_query>Rename add_note to make_note and write the usage notes.</user_query>"}]}}),
        said(call("StrReplace", {"path": f"{PROJECT}/notes.py", "old_string": RENAMED.old,
                                 "new_string": RENAMED.new}),
             call("Write", {"path": "config.py", "contents": f'TOKEN = "{SECRET}"\n'}),
             call("Write", {"path": "/etc/motd", "contents": "hello\n"}),
             call("ApplyPatch", patch)),
        json.dumps({"type": "turn_ended", "status": "success"}),
        json.dumps({"role": "user", "message": {"content": [{"type": "text", "text":
            "<user_query>Now also document make_note, after the earlier changes.</user_query>"}]}}),
    ]  # fmt: skip
    transcript = home / ".cursor/projects/home-dev-src-notes-app/agent-transcripts/c1/c1.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    result = run(tmp_path, home, commit=True)
    assert _follow_up(tmp_path, result) == [RENAMED, USAGE]
    assert SECRET not in _everything_written(tmp_path)


def test_each_agents_argument_shapes():
    """The shapes each agent's own code takes (sleep/harvest/edit_tools.py names where)."""
    assert pi_edits("edit", {"path": "@a.py", "oldText": "x", "newText": "y"}) == [
        FileEdit("a.py", "y", "x")
    ]  # the legacy single-edit form, and pi's `@` prefix
    assert pi_edits("edit", {"path": "a.py", "edits": '[{"oldText": "1", "newText": "2"}]'}) == [
        FileEdit("a.py", "2", "1")
    ]  # edits sent as JSON text
    assert opencode_edits("edit", {"filePath": "n.py", "oldString": "", "newString": "x"}) == [
        FileEdit("n.py", "x")
    ]  # an empty oldString makes a new file: applied only where there is none
    assert opencode_edits(
        "edit", {"filePath": "a.py", "oldString": "x", "newString": "y", "replaceAll": True}
    ) == [FileEdit("a.py", "y", "x", replace_all=True)]
    patch = "*** Begin Patch\n*** Add File: b.txt\n+hi\n*** End Patch"
    assert opencode_edits("apply_patch", {"patchText": patch}) == [
        FileEdit("b.txt", "hi\n", write=True)
    ]
    assert copilot_edits("apply_patch", patch) == copilot_edits("apply_patch", {"input": patch})
    assert copilot_edits("str_replace_editor", {"command": "str_replace", "path": "a.py",
                                                "old_str": "x"}) == [FileEdit("a.py", "", "x")]  # fmt: skip
    assert copilot_edits("str_replace_editor", {"command": "insert", "path": "a.py",
                                                "insert_line": 3, "new_str": "x"}) == []  # fmt: skip
    assert cursor_edits("StrReplace", {"file_path": "a.py", "old_string": "x",
                                       "new_string": "y"}) == [FileEdit("a.py", "y", "x")]  # fmt: skip
    # the same name in another agent is another tool
    assert pi_edits("edit", {"filePath": "a.py", "oldString": "x", "newString": "y"}) == []
    assert opencode_edits("edit", {"path": "a.py", "old_str": "x", "new_str": "y"}) == []
