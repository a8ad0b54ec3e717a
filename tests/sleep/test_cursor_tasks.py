"""Cursor agent transcripts: a hand-made store in the documented format (cursor-agent is
not on npm): the person's <user_query> text, the project from .workspace-trusted, a
failed turn marked, prompts dated by the file's mtime."""

from __future__ import annotations

import json
import os

from tests.sleep.more_agents import SECRET, home_with, run, texts


def test_transcript_gives_the_queries_with_the_trusted_project(tmp_path):
    home = home_with(tmp_path, "cursor")
    file = next((home / ".cursor").rglob("transcript.jsonl"))
    os.utime(file, ns=(1796170000_000000000, 1796170000_000000000))
    result = run(tmp_path, home)
    assert texts(result, "cursor") == [[
        "Explain notes.py. My token is [REDACTED:github_token]", "Run the tests.",
        "Try again, slower.",
    ]]  # fmt: skip
    (session,) = result.sessions
    assert (session.cwd, session.session_id) == ("/home/dev/src/notes-app", "c0ffee00-1111")
    assert [t.aborted for t in session.tasks] == [False, True, False]
    assert session.tasks[0].commands == ["cat notes.py"]
    assert session.tasks[0].timestamp == "2026-12-02T00:06:40Z"


def test_a_second_harvest_reads_only_appended_records(tmp_path):
    home = home_with(tmp_path, "cursor")
    run(tmp_path, home)
    file = next((home / ".cursor").rglob("transcript.jsonl"))
    with file.open("a") as f:
        f.write(
            json.dumps(
                {"role": "user", "message": {"content": "<user_query>Ship it.</user_query>"}}
            )
            + "\n"
        )
    assert texts(run(tmp_path, home), "cursor") == [["Ship it."]]


def test_no_planted_secret_in_the_state_or_the_output(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "cursor"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert SECRET not in json.dumps(result.to_json(show_redactions=True))
