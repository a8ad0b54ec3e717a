"""VS Code Copilot Chat: hand-made operation logs in the documented format (the editor
cannot run here), under the stable and the Insiders user folders."""

from __future__ import annotations

import json

from sleep.harvest.vscode import apply
from tests.sleep.more_agents import SECRET, home_with, run


def test_replayed_logs_give_the_persons_requests_with_their_projects(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "vscode"))
    got = {s.session_id: (s.cwd, [(t.text, t.aborted) for t in s.tasks]) for s in result.sessions}
    assert got == {
        "vs-1111": ("/home/dev/src/notes app", [
            ("Why does the notes test fail? token [REDACTED:github_token]", False),
            ("Rename add_note everywhere.", True),  # cancelled
            ("Add a docstring to add_note.", True),  # ended in an error
        ]),
        "vs-2222": ("/home/dev/src/notes-app", [("List the TODOs.", False)]),
        "vs-3333": (None, [("Hello from an empty window.", False)]),  # no workspace.json
    }  # fmt: skip
    stopped = next(s for s in result.sessions if s.session_id == "vs-1111").tasks
    # only the cancelled request is the person interrupting; the error is not
    assert [t.interrupted for t in stopped] == [False, True, False]
    first = stopped[0]
    assert first.tools == ["copilot_runInTerminal"] and first.answer == "The fixture path is wrong."
    assert first.timestamp == "2026-12-02T00:06:41Z"  # from epoch milliseconds


def test_project_scope_uses_the_workspace_folder(tmp_path):
    home = home_with(tmp_path, "vscode")
    project = tmp_path / "notes-app"
    project.mkdir()
    result = run(tmp_path, home, project=project)
    assert result.sessions == []  # every recorded folder is elsewhere
    assert result.left_out["other project"] == 3


def test_a_second_harvest_delivers_only_new_requests(tmp_path):
    home = home_with(tmp_path, "vscode")
    run(tmp_path, home)
    assert run(tmp_path, home).sessions == []
    log = next((home / ".config" / "Code - Insiders").rglob("vs-2222.jsonl"))
    op = {"kind": 2, "k": ["requests"], "v": [{"requestId": "r2", "message": {"text": "Fix them."},
          "agent": {"extensionId": "github.copilot-chat"}}]}  # fmt: skip
    with log.open("a") as f:
        f.write(json.dumps(op) + "\n")
    assert [[t.text for t in s.tasks] for s in run(tmp_path, home).sessions] == [["Fix them."]]


def test_operations_set_extend_truncate_and_delete():
    state = apply(None, {"kind": 0, "v": {"a": {"list": [1, 2, 3]}}})
    state = apply(state, {"kind": 2, "k": ["a", "list"], "i": 1, "v": [9]})
    state = apply(state, {"kind": 1, "k": ["a", "b"], "v": "x"})
    state = apply(state, {"kind": 3, "k": ["a", "b"]})
    state = apply(state, {"kind": 1, "k": ["missing", 5, "deep"], "v": 1})  # does not fit
    assert state == {"a": {"list": [1, 9]}, "missing": {}}


def test_no_planted_secret_in_the_state_or_the_output(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "vscode"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert SECRET not in json.dumps(result.to_json(show_redactions=True))
