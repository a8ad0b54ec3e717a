"""OpenCode's opencode.db: the store the real opencode 1.18.33 wrote (make_opencode.py),
print-mode sessions and a TUI session typed in tmux, read without writing to it, also while
a writer holds it locked in WAL mode."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from tests.sleep.more_agents import PROJECT, SECRET, expected, home_with, redacted, run, texts

PRINTED = expected("opencode")["printed"]
TYPED = expected("opencode")["typed"]


def _quoted(prompt: str) -> str:
    return f'"{prompt}"'  # `opencode run` quotes a multi-word argument in what it records


def _db(home: Path) -> Path:
    return home / ".local" / "share" / "opencode" / "opencode.db"


def _digests(db: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(db.parent.iterdir())
        if p.name.startswith("opencode.db")
    }


def test_real_store_gives_the_prompts_marks_run_sessions_and_skips_the_subagent(tmp_path):
    home = home_with(tmp_path, "opencode")
    result = run(tmp_path, home)
    first, failed = PRINTED[:3], PRINTED[3:]
    # as typed: run_prompt took off run's quotes
    assert texts(result, "opencode") == [
        [redacted(p) for p in first],
        list(failed),
        [redacted(TYPED[0]), *TYPED[1:]],
    ]
    assert [s.automation for s in result.sessions] == [True, True, False]
    assert all(s.cwd == PROJECT for s in result.sessions)
    assert [t.aborted for s in result.sessions[:2] for t in s.tasks] == [False] * 3 + [True]
    assert result.sessions[0].tasks[1].commands == ["ls"]
    assert result.sessions[0].tasks[2].tools == ["task"]  # the child's own calls are its own
    (root,) = [r for r in result.roots if r.tool == "opencode"]
    assert (root.store_sessions, root.subagent_files) == (4, 1)  # the task tool's child
    assert "Look for TODO" not in json.dumps(result.to_json())


def test_run_sessions_are_left_out_without_include_automation(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "opencode"), automation=False)
    assert texts(result, "opencode") == [[redacted(TYPED[0]), *TYPED[1:]]]
    assert result.left_out["automation"] == 2


def test_a_second_harvest_reads_only_new_messages(tmp_path):
    home = home_with(tmp_path, "opencode")
    first = run(tmp_path, home)
    sid = first.sessions[0].session_id
    second = run(tmp_path, home)
    assert second.sessions == []
    (root,) = [r for r in second.roots if r.tool == "opencode"]
    assert (root.store_sessions, root.subagent_files) == (4, 1)  # counted though unchanged
    db = sqlite3.connect(_db(home))
    db.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) "
        "VALUES ('msg_zzzz', ?, 1896178400000, 1896178400000, '{\"role\": \"user\"}')",
        (sid,),
    )
    db.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
        "VALUES ('prt_zzzz', 'msg_zzzz', ?, 1896178400000, 1896178400000, ?)",
        (sid, json.dumps({"type": "text", "text": "Now add a test."})),
    )
    db.execute("UPDATE session SET time_updated = 1896178400001 WHERE id = ?", (sid,))
    db.commit()
    db.close()
    assert texts(run(tmp_path, home), "opencode") == [["Now add a test."]]


def test_a_wal_store_held_by_a_locking_writer_is_read_and_left_untouched(tmp_path):
    """The writer keeps an exclusive lock in WAL mode (no reader can open the live file):
    the harvest reads a private copy of db + WAL, sees the committed new prompt that is
    only in the WAL, and the live files stay byte for byte as they were."""
    home = home_with(tmp_path, "opencode")
    db_path = _db(home)
    writer = sqlite3.connect(db_path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("PRAGMA locking_mode=EXCLUSIVE")
    sid = writer.execute("SELECT id FROM session WHERE parent_id IS NULL LIMIT 1").fetchone()[0]
    writer.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) "
        "VALUES ('msg_zzzz', ?, 1896178400000, 1896178400000, '{\"role\": \"user\"}')",
        (sid,),
    )
    writer.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
        "VALUES ('prt_zzzz', 'msg_zzzz', ?, 1896178400000, 1896178400000, ?)",
        (sid, json.dumps({"type": "text", "text": "Written while locked."})),
    )
    writer.commit()
    try:
        blocked = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=0.1)
        try:
            blocked.execute("SELECT count(*) FROM session").fetchone()
            raise AssertionError("the writer's lock should keep other readers out")
        except sqlite3.OperationalError:
            pass
        finally:
            blocked.close()
        before = _digests(db_path)
        result = run(tmp_path, home)
        assert _digests(db_path) == before
    finally:
        writer.close()
    assert ["Written while locked."] in [[t.text for t in s.tasks][-1:] for s in result.sessions]


def test_a_wal_store_with_a_reader_open_transaction_is_read_read_only(tmp_path):
    home = home_with(tmp_path, "opencode")
    db_path = _db(home)
    writer = sqlite3.connect(db_path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")  # a write transaction in progress, nothing committed
    writer.execute("UPDATE session SET title = 'half-written'")
    try:
        result = run(tmp_path, home)
    finally:
        writer.rollback()
        writer.close()
    assert len(result.sessions) == 3 and result.skipped == []


def test_no_planted_secret_in_the_state_or_the_output(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "opencode"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert SECRET not in json.dumps(result.to_json(show_redactions=True))


def test_a_tui_session_is_typed_continued_and_its_undone_prompt_is_not_a_task(tmp_path):
    """The session typed in the real TUI (tmux): no `run` permission rules, so a person's;
    continued with `opencode -c` (the same row); its last prompt taken back with `/undo`
    (the row's `revert.messageID`): that one is no task. The failed call is aborted."""
    result = run(tmp_path, home_with(tmp_path, "opencode"), automation=False)
    (session,) = result.sessions
    assert [t.text for t in session.tasks] == [redacted(TYPED[0]), *TYPED[1:]]
    assert session.automation is False and session.cwd == PROJECT
    assert [t.aborted for t in session.tasks] == [False, False, False, True, False]
    assert session.tasks[1].commands == ["ls"]
    assert session.tasks[4].answer == "Reply to: One more thing: add a"
    assert expected("opencode")["undone"][0] not in json.dumps(result.to_json())
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written


def test_quotes_typed_in_a_session_that_is_not_print_mode_are_kept(tmp_path):
    """Only `run` adds quotes: a `run` session's row made to look typed (no permission
    rules, as the TUI writes) and undone at its third prompt keeps its prompts' quotes."""
    home = home_with(tmp_path, "opencode")
    db = sqlite3.connect(_db(home))
    sid = db.execute(
        "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created LIMIT 1"
    ).fetchone()[0]
    users = [
        mid
        for mid, data in db.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created", (sid,)
        )
        if json.loads(data)["role"] == "user"
    ]
    revert = json.dumps({"messageID": users[2]})
    db.execute("UPDATE session SET permission = NULL, revert = ? WHERE id = ?", (revert, sid))
    db.commit()
    db.close()
    result = run(tmp_path, home, automation=False)
    # made by `run`, its prompts keep run's quotes: no longer print mode, they are not undone
    assert texts(result, "opencode") == [
        [_quoted(redacted(p)) for p in PRINTED[:2]],
        [redacted(TYPED[0]), *TYPED[1:]],  # the real TUI session, typed too
    ]
    assert result.sessions[0].automation is False


def test_run_prompts_come_back_as_typed():
    """Fails on the old code: each quoted `run` prompt mined as the one shape `<str>`."""
    from sleep.harvest.opencode import run_prompt
    from sleep.mine.heuristic import shape_of

    assert run_prompt('"fix the bug"') == "fix the bug"
    assert run_prompt('"say \\"hi\\" twice"') == 'say "hi" twice'
    assert run_prompt("fix it") == "fix it"  # words without spaces are not quoted
    assert run_prompt('fix "the bug"') == 'fix "the bug"'  # not one quoted argument
    assert run_prompt('"a" and "b"') == '"a" and "b"'
    assert shape_of(run_prompt('"rename add_note"')) != shape_of(run_prompt('"add tests"'))


def test_one_bad_row_is_skipped_and_counted_and_the_rest_harvested(tmp_path):
    """Issue 35: a user text part whose `text` is an object killed every agent's harvest
    (TypeError). It is skipped and counted like a malformed line; every prompt beside it,
    and the prompt after it in the same message, is harvested."""
    home = home_with(tmp_path, "opencode")
    db = sqlite3.connect(_db(home))
    sid = db.execute("SELECT id FROM session WHERE parent_id IS NULL LIMIT 1").fetchone()[0]
    db.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) "
        "VALUES ('msg_zzzz', ?, 1896178400000, 1896178400000, '{\"role\": \"user\"}')",
        (sid,),
    )
    rows = [{"type": "text", "text": {"a": 1}}, {"type": "text", "text": "Now add a test."},
            {"type": ["text"]}, {"type": "tool", "tool": "bash", "state": "done"}]  # fmt: skip
    for n, part in enumerate(rows):
        db.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
            f"VALUES ('prt_zzz{n}', 'msg_zzzz', ?, 1896178400000, 1896178400000, ?)",
            (sid, json.dumps(part)),
        )
    db.commit()
    db.close()
    result = run(tmp_path, home)
    found = texts(result, "opencode")
    assert ["Now add a test."] in [t[-1:] for t in found]
    assert sum(len(t) for t in found) == len(PRINTED) + len(TYPED) + 1  # nothing else lost
    [skip] = [s for s in result.skipped if "OpenCode" in s.reason]
    assert skip.part == "3 rows"
