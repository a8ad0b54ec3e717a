"""`skillopt sleep harvest` from the shell: JSON shape, human output, one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

from tests.sleep.transcripts import (
    claude_assistant,
    claude_user,
    codex_meta,
    codex_prompt,
    write_claude,
    write_codex,
)

SKILLOPT = Path(sys.executable).parent / "skillopt"


def run(*args, cwd=None):
    return subprocess.run(
        [str(SKILLOPT), *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def lay_out(tmp_path):
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    key = "ghp_" + "Ab3dEf5hIj7kLm9nOp1q" * 2
    write_claude(claude, [claude_user(f"deploy with token {key}", cwd="/srv/app", gitBranch="dev"),
                          claude_assistant(), claude_user("scripted", cwd="/srv/app")], session="s-1")  # fmt: skip
    write_claude(
        claude, [claude_user("batch", cwd="/srv/app", entrypoint="sdk-cli")], session="s-2"
    )
    write_codex(codex, [codex_meta(cwd="/srv/other"), *codex_prompt("elsewhere")])
    return [
        "--claude-home",
        str(claude),
        "--codex-home",
        str(codex),
        "--state-dir",
        str(tmp_path / "st"),
    ], key


def test_json_output_has_exactly_the_issue_shape(tmp_path):
    homes, key = lay_out(tmp_path)
    result = run("sleep", "harvest", "--all-projects", "--json", *homes)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"sessions", "skipped", "redactions"}
    assert data["redactions"] == {"github_token": 1}
    assert key not in result.stdout
    sessions = {s["session_id"]: s for s in data["sessions"]}
    assert set(sessions) == {"s-1", "019e0000-0000-7000-8000-000000000001"}  # s-2 is automation
    s1 = sessions["s-1"]
    assert set(s1) == {"source", "session_id", "cwd", "branch", "file", "automation", "tasks"}
    assert (s1["source"], s1["cwd"], s1["branch"], s1["automation"]) == (
        "claude",
        "/srv/app",
        "dev",
        False,
    )
    assert s1["tasks"] == [
        {
            "text": "deploy with token [REDACTED:github_token]",
            "timestamp": "2026-03-26T14:02:10.018Z",
            "aborted": False,
        },
        {"text": "scripted", "timestamp": "2026-03-26T14:02:10.018Z", "aborted": False},
    ]
    assert data["skipped"] == []
    # a preview moves no cursor: the same again; --mark-read moves them, then nothing is new
    again = json.loads(run("sleep", "harvest", "--all-projects", "--json", *homes).stdout)
    assert again["sessions"] == data["sessions"]
    marked = run("sleep", "harvest", "--all-projects", "--mark-read", "--json", *homes)
    assert json.loads(marked.stdout)["sessions"] == data["sessions"]
    after = json.loads(run("sleep", "harvest", "--all-projects", "--json", *homes).stdout)
    assert after["sessions"] == []


def test_help_says_harvest_is_a_preview_and_mark_read_moves_the_cursors():
    shown = " ".join(run("sleep", "harvest", "--help").stdout.split())
    assert "preview" in shown and "--mark-read" in shown
    assert "Move the cursors" in shown


def test_one_bad_line_is_reported_as_one_line_not_the_file(tmp_path):
    homes, _ = lay_out(tmp_path)
    [transcript] = (tmp_path / "claude").rglob("s-1.jsonl")
    with transcript.open("ab") as f:
        f.write(b"not json at all\n")
    result = run("sleep", "harvest", "--all-projects", *homes)
    assert result.returncode == 0, result.stderr
    assert f"skipped 1 line of {transcript}: not a JSON object" in result.stderr
    assert "preview: nothing marked read" in result.stdout


def test_automation_and_redaction_preview(tmp_path):
    homes, key = lay_out(tmp_path)
    result = run(
        "sleep", "harvest", "--all-projects", "--include-automation", "--show-redactions", *homes
    )
    assert result.returncode == 0, result.stderr
    assert "[automation]" in result.stdout
    assert "[github_token] deploy with token [REDACTED:github_token]" in result.stdout
    assert "…(44 chars)" in result.stdout and "ghp…" not in result.stdout  # no first characters
    assert key not in result.stdout


def test_default_scope_is_the_current_directory(tmp_path):
    homes, _ = lay_out(tmp_path)
    here = tmp_path / "proj"
    here.mkdir()
    write_claude(tmp_path / "claude", [claude_user("here", cwd=str(here))], session="s-3")
    data = json.loads(run("sleep", "harvest", "--json", *homes, cwd=here).stdout)
    assert [t["text"] for s in data["sessions"] for t in s["tasks"]] == ["here"]


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for args in (
        ["--project", str(tmp_path), "--all-projects"],
        ["--project", str(tmp_path / "missing")],
        ["--since", "last tuesday"],
    ):
        result = run("sleep", "harvest", "--state-dir", str(tmp_path / "st"), *args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("skillopt: error:")
        assert len(result.stderr.strip().splitlines()) == 1


def test_help_lists_sleep():
    assert "sleep" in run("--help").stdout
    assert "harvest" in run("sleep", "--help").stdout
