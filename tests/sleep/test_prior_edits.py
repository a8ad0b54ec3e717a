"""A follow-up replays with its session's earlier file edits applied (sleep/harvest/file_edits.py):
harvested from a real git project's Claude Code transcript, mined onto the follow-up,
applied to the replay's copy before the agent runs; secrets and escaping paths never."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from core.models.agents.workspace import pristine_tree
from core.models.types import AgentOutcome, Completion, Usage
from sleep.harvest.file_edits import FileEdit, confined
from sleep.harvest.run import HarvestOptions, harvest
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import MinedTask, TaskArchive, Turn
from sleep.night.edited_tree import apply_edit, edited_tree
from sleep.night.replay_env import AgentReplay, ReplayEnvironment, agent_prompt, task_item
from tests.sleep.transcripts import (
    claude_assistant,
    claude_user,
    codex_line,
    codex_meta,
    codex_prompt,
    write_claude,
    write_codex,
)

GITHUB_TOKEN = "ghp_" + "Zq8Lm2Np9Rs4Tv8XAb3dEf5hIj7kLm9nOp1q"  # made up, split on purpose


def git_project(tmp_path: Path) -> tuple[Path, str]:
    project = tmp_path / "app"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    print('hi')\n")
    run = lambda *a: subprocess.run(["git", "-C", str(project), *a], check=True,  # noqa: E731
                                    capture_output=True, text=True)  # fmt: skip
    run("init", "-q")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return project, run("rev-parse", "HEAD").stdout.strip()


def tool_use(cwd: str, name: str, arguments: dict, call_id: str) -> dict:
    record = claude_assistant(cwd=cwd)
    record["message"]["content"] = [
        {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    ]
    return record


def tool_result(cwd: str, call_id: str, *, error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}
    if error:
        block["is_error"] = True
    return claude_user([block], cwd=cwd)


def harvested(tmp_path: Path, records: list[dict], *, codex: bool = False) -> list[dict]:
    claude = tmp_path / "claude"
    if codex:
        write_codex(tmp_path / "codex", records)
    else:
        write_claude(claude, records)
    result = harvest(
        HarvestOptions(state_dir=tmp_path / "state", claude_home=str(claude),
                       codex_home=str(tmp_path / "codex"), commit=False)
    )  # fmt: skip
    return [s.to_json() for s in result.sessions]


def two_turn_session(cwd: str, *first_turn: dict) -> list[dict]:
    return [
        claude_user("add a greet function to app.py", cwd=cwd),
        *first_turn,
        claude_assistant("Added greet() to app.py.", cwd=cwd),
        claude_user("now also make greet take a name argument", cwd=cwd),
        claude_assistant("Done.", cwd=cwd),
    ]


def follow_up_of(sessions: list[dict], start: str = "now also") -> MinedTask:
    (task,) = [t for t in mine_sessions(sessions) if t.intent.startswith(start)]
    return task


def edit_records(cwd: str) -> list[dict]:
    greet = {"file_path": f"{cwd}/app.py", "old_string": "def main():",
             "new_string": "def greet():\n    return 'hello'\n\n\ndef main():"}  # fmt: skip
    notes = {"file_path": f"{cwd}/NOTES.md", "content": "greet added\n"}
    return [
        tool_use(cwd, "Edit", greet, "toolu_1"),
        tool_result(cwd, "toolu_1"),
        tool_use(cwd, "Write", notes, "toolu_2"),
        tool_result(cwd, "toolu_2"),
    ]


async def test_a_follow_up_replays_with_the_first_turns_edit_applied(tmp_path):
    """Fails on the old code: the harvest kept no edits, the follow-up carried none, and
    the agent started from the commit without greet()."""
    project, commit = git_project(tmp_path)
    cwd = str(project)
    sessions = harvested(tmp_path, two_turn_session(cwd, *edit_records(cwd)))
    follow_up = follow_up_of(sessions)
    assert [e.path for e in follow_up.prior_edits] == ["app.py", "NOTES.md"]
    first = next(t for t in mine_sessions(sessions) if t.intent.startswith("add a greet"))
    assert first.prior_edits == []  # nothing came before it

    # the archive keeps them (and reads an archive written before they existed)
    archive = TaskArchive(tmp_path / "tasks.json")
    archive.merge([follow_up])
    assert archive.load()[follow_up.id].prior_edits == follow_up.prior_edits

    # dry-run --json lists them (what, not the text)
    from sleep.mine.tasks import task_listing
    from sleep.night.replay_modes import replay_mode

    mode = replay_mode(follow_up, "claude_code")
    listed = task_listing(follow_up, mode, mode)["prior_edits"]
    assert listed == ["edited app.py", "wrote NOTES.md"]

    seen: dict[str, str] = {}

    async def agent_double(task, _skill):  # a TEST DOUBLE of the agent: reads, edits nothing
        with pristine_tree(task.files, task.commit) as tree:
            seen["app.py"] = (tree.root / "app.py").read_text()
            seen["NOTES.md"] = (tree.root / "NOTES.md").read_text()
        seen["prompt"] = task.prompt
        return AgentOutcome("Added the argument.", [], "", 0, Usage(), 0.0, "double", "", None)

    async def judge(_messages, **_kw):
        return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "j")

    where = AgentReplay(project, commit, "project")
    env = ReplayEnvironment({"train": [follow_up]}, judge, agent=where,
                            target_backend="claude_code")  # fmt: skip
    (item,) = env.load_split("train")
    result = await env.rollout(item, "# skill", agent_double)
    assert "def greet():" in seen["app.py"] and "def main():" in seen["app.py"]
    assert seen["NOTES.md"] == "greet added\n"
    assert "already applied here (edited app.py; wrote NOTES.md)" in seen["prompt"]
    assert result.trajectory[0] == {
        "role": "prior_edits",
        "content": "applied: edited app.py\napplied: wrote NOTES.md",
    }
    assert "def greet" not in (project / "app.py").read_text()  # the checkout untouched


def test_a_failed_edit_call_is_not_kept(tmp_path):
    """A rejected Edit (its tool_result is_error) changed nothing: it is not replayed."""
    project, _commit = git_project(tmp_path)
    cwd = str(project)
    rejected = {"file_path": f"{cwd}/app.py", "old_string": "main", "new_string": "run"}
    records = two_turn_session(
        cwd, tool_use(cwd, "Edit", rejected, "toolu_9"), tool_result(cwd, "toolu_9", error=True)
    )
    assert follow_up_of(harvested(tmp_path, records)).prior_edits == []


def test_an_edit_holding_a_secret_is_not_stored_and_is_skipped(tmp_path):
    """Fails on the old code only by carrying no edits at all; here the clean edit is kept
    and the one the redaction would change is dropped, its secret nowhere on disk."""
    project, _commit = git_project(tmp_path)
    cwd = str(project)
    secret = {"file_path": f"{cwd}/settings.py", "content": f"TOKEN = '{GITHUB_TOKEN}'\n"}
    records = two_turn_session(
        cwd, *edit_records(cwd), tool_use(cwd, "Write", secret, "toolu_3"),
        tool_result(cwd, "toolu_3"),
    )  # fmt: skip
    sessions = harvested(tmp_path, records)
    assert GITHUB_TOKEN not in json.dumps(sessions)
    assert "[REDACTED" not in json.dumps([t["edits"] for s in sessions for t in s["tasks"]
                                          if "edits" in t])  # fmt: skip
    follow_up = follow_up_of(sessions)
    assert [e.path for e in follow_up.prior_edits] == ["app.py", "NOTES.md"]


def test_a_path_escaping_the_project_is_refused(tmp_path):
    project, _commit = git_project(tmp_path)
    cwd = str(project)
    outside = {"file_path": str(tmp_path / "elsewhere.py"), "content": "x = 1\n"}
    climbing = {"file_path": f"{cwd}/../climbed.py", "content": "x = 1\n"}
    records = two_turn_session(
        cwd, tool_use(cwd, "Write", outside, "toolu_4"), tool_result(cwd, "toolu_4"),
        tool_use(cwd, "Write", climbing, "toolu_5"), tool_result(cwd, "toolu_5"),
    )  # fmt: skip
    assert follow_up_of(harvested(tmp_path, records)).prior_edits == []
    # and when applied (a hand-edited archive): refused, noted, nothing written outside
    assert confined(FileEdit("/etc/passwd", "x"), cwd) is None
    assert confined(FileEdit("a/../../b", "x"), cwd) is None
    (project / "link").symlink_to(tmp_path)
    for path in ("../climbed.py", "/tmp/abs.py", "link/through.py"):
        assert apply_edit(project, FileEdit(path, "x", write=True)) == "its path leaves the project"
    assert not (tmp_path / "climbed.py").exists() and not (tmp_path / "through.py").exists()


def test_an_edit_that_does_not_apply_is_skipped_and_noted(tmp_path):
    project, commit = git_project(tmp_path)
    edits = [
        FileEdit("app.py", "def go():", "def nowhere():"),
        FileEdit("app.py", "def run():", "def main():"),
        FileEdit("gone.py", "y", "x"),
        FileEdit("app.py/inside.py", "x", write=True),  # app.py is a file, not a folder
    ]
    with edited_tree(project, commit, edits) as tree:
        assert "def run():" in (tree.root / "app.py").read_text()
        assert tree.applied == ["edited app.py"]
        assert tree.skipped == [
            "earlier edit 1 (edited app.py) skipped: its old text is not in the file",
            "earlier edit 3 (edited gone.py) skipped: the file is not there",
            "earlier edit 4 (wrote app.py/inside.py) skipped: it cannot be written "
            "(FileExistsError)",  # mkdir app.py/: never fatal
        ]
        assert "3 of them did not apply" in tree.note()
    assert not tree.root.exists()


def test_tasks_written_before_prior_edits_still_load_and_others_keep_the_note(tmp_path):
    path = tmp_path / "tasks.json"
    old = {"id": "t-1", "intent": "now also X", "project": None,
           "context": [{"prompt": "do Y", "answer": "done"}]}  # fmt: skip
    path.write_text(json.dumps({"version": 1, "tasks": [old]}))
    (task,) = TaskArchive(path).load().values()
    assert task.prior_edits == []
    from sleep.night.replay_env import PREDECESSORS_NOTE

    assert PREDECESSORS_NOTE in agent_prompt(task_item(task, "claude_code"))


@pytest.mark.parametrize(
    "bad", [{"path": "a.py"}, {"path": 1, "new": "x"}, {"path": "a", "new": "x", "run": "rm"}]
)
def test_a_malformed_stored_edit_is_named(tmp_path, bad):
    path = tmp_path / "tasks.json"
    task = MinedTask("t-1", "now also X", None, context=[Turn("do Y")]).to_dict()
    path.write_text(json.dumps({"version": 1, "tasks": [{**task, "prior_edits": [bad]}]}))
    with pytest.raises(Exception, match="an earlier edit is not"):
        TaskArchive(path).load()


def codex_patch(call_id: str, patch: str, *, ok: bool = True) -> list[dict]:
    call = {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
            "name": "apply_patch", "input": patch}  # fmt: skip
    output = {
        "output": "Success." if ok else "error: no match",
        "metadata": {"exit_code": 0 if ok else 1},
    }
    return [
        codex_line("response_item", call),
        codex_line(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call_id, "output": json.dumps(output)},
        ),  # fmt: skip
        codex_line("event_msg", {"type": "patch_apply_end", "call_id": call_id, "success": ok}),
    ]


def test_a_codex_follow_up_carries_the_earlier_apply_patch_edits(tmp_path):
    """Fails on the old code: Codex's apply_patch inputs were not kept."""
    project, commit = git_project(tmp_path)
    patch = (
        "*** Begin Patch\n*** Update File: app.py\n@@\n-def main():\n+def main(name):\n"
        "*** Add File: notes/todo.md\n+- greet\n+- wave\n*** End Patch"
    )
    failed = "*** Begin Patch\n*** Update File: app.py\n@@\n-nothing\n+something\n*** End Patch"
    answer = {"type": "agent_message", "message": "Done."}
    records = [
        codex_meta(cwd=str(project)),
        *codex_prompt("make main take a name"),
        *codex_patch("call_1", patch),
        *codex_patch("call_2", failed, ok=False),
        codex_line("event_msg", answer),
        *codex_prompt("now also print the name"),
        codex_line("event_msg", answer),
    ]
    follow_up = follow_up_of(harvested(tmp_path, records, codex=True), "now also")
    assert follow_up.prior_edits == [
        FileEdit("app.py", "def main(name):", "def main():"),
        FileEdit("notes/todo.md", "- greet\n- wave\n", write=True),
    ]
    with edited_tree(project, commit, follow_up.prior_edits) as tree:
        assert (tree.root / "app.py").read_text().startswith("def main(name):\n")
        assert (tree.root / "notes" / "todo.md").read_text() == "- greet\n- wave\n"
        assert tree.skipped == []


def test_a_kept_tree_is_found_again_at_the_same_place(tmp_path):
    """A handoff workspace is found again by its start tree's path: with `keep_in` the tree
    is kept under a name that hashes its inputs, reused as it is (what the person's agent
    was shown), and rebuilt only when its record is missing (an interrupted build)."""
    project, commit = git_project(tmp_path)
    edits = [FileEdit("app.py", "def run():", "def main():")]
    keep = tmp_path / "night" / "workspaces"
    with edited_tree(project, commit, edits, keep_in=keep) as first:
        (first.root / "marker").write_text("seen")
    with edited_tree(project, commit, edits, keep_in=keep) as again:
        assert again.root == first.root and (again.root / "marker").exists()
        assert again.applied == ["edited app.py"]
    first.root.with_name(first.root.name + ".json").unlink()
    with edited_tree(project, commit, edits, keep_in=keep) as rebuilt:
        assert rebuilt.root == first.root and not (rebuilt.root / "marker").exists()
    with edited_tree(project, commit, [*edits, FileEdit("b.py", "x", write=True)],
                     keep_in=keep) as other:  # fmt: skip
        assert other.root != first.root


def test_a_session_in_a_subfolder_has_its_edits_applied_there(tmp_path):
    """A session run in `<project>/web` recorded paths relative to `web`: they are applied
    below it in the copy of the project, not at its root."""
    from sleep.night.edited_tree import session_base

    project, commit = git_project(tmp_path)
    assert session_base(project, str(project / "web")) == "web"
    assert session_base(project, str(project)) == ""
    assert session_base(project, "/somewhere/else") == ""
    edit = confined(FileEdit(str(project / "web" / "page.html"), "<p>hi</p>\n", write=True),
                    str(project / "web"))  # fmt: skip
    assert edit is not None and edit.path == "page.html"
    with edited_tree(project, commit, [edit], base="web") as tree:
        assert (tree.root / "web" / "page.html").read_text() == "<p>hi</p>\n"
