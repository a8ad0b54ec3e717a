"""Issue 21's done-when on the transcripts the REAL claude and codex CLIs wrote
(tests/sleep/fixtures/real): every agentic task is replayed as an agent run, through the
tool loop or in a handoff workspace — never as a bare chat call; external and redacted
requests are skipped with their reasons; follow-ups carry the turns they refer to."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sleep.transcripts import claude_assistant, claude_user, write_claude
from tests.support.real_transcript_world import (
    INTERACTIVE,
    make_real_world,
    real_night,
    scripted_roles,
)

DAY = dt.date(2026, 12, 2)
REPO = Path(__file__).resolve().parents[2]
SKILLOPT = Path(sys.executable).parent / "skillopt"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiZXhwIjoxNzk2MTE1NzMyfQ.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"  # fmt: skip
FOLLOW_UP = "One more thing: add a docstring to create_note."


def with_external_and_redacted(world) -> None:
    """One more interactive session in the fixture project (written by our helpers: the
    real fixtures have no such request) asking to post and to decode a token."""
    cwd = str(world.project)
    records = [
        claude_user("post the nightly run summary to #data-alerts", cwd=cwd, session="s-ext"),
        claude_assistant("Posted.", cwd=cwd, session="s-ext"),
        claude_user(f"decode this token and tell me when it expires: {TOKEN}", cwd=cwd,
                    session="s-ext", timestamp="2026-12-01T10:00:00Z"),
        claude_assistant("It expires on 2026-12-01.", cwd=cwd, session="s-ext"),
        claude_user("thanks", cwd=cwd, session="s-ext"),
    ]  # fmt: skip
    write_claude(world.home / ".claude", records, session="s-ext")


def roles_with_target(backend: str) -> dict:
    roles = scripted_roles()
    if backend == "claude_code":
        roles["target"] = {"backend": "claude_code", "model": "sonnet"}
    elif backend == "handoff":
        roles["target"] = {"backend": "handoff", "model": "answerer"}
    return roles


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    world = make_real_world(tmp_path_factory.mktemp("real"))
    with_external_and_redacted(world)
    return world


def listed(world, backend: str) -> list[dict]:
    night = real_night(world, DAY, roles=roles_with_target(backend), dry=True)
    [route] = asyncio.run(night.plan()).routes
    return route["tasks"]


@pytest.mark.parametrize(
    ("backend", "mode", "reason"),
    [
        ("claude_code", "agent", None),
        ("scripted", "tools", None),  # our own tool loop: built in
        ("handoff", "handoff-workspace", None),  # sleep/night/handoff_workspace.py
    ],
)
def test_every_agentic_task_gets_a_workspace_mode_never_chat(world, backend, mode, reason):
    tasks = listed(world, backend)
    interactive = [t for t in tasks if t["session"] == INTERACTIVE]
    assert len(interactive) == 5
    assert all(t["kind"] == "agentic" for t in interactive)
    assert {t["replay"] for t in interactive} == {mode}
    assert {t["skip_reason"] for t in interactive} == {reason}
    assert not any(t["replay"] == "chat" for t in tasks if t["kind"] == "agentic")


def test_external_and_redacted_requests_are_skipped_with_their_reasons(world):
    by_kind = {t["kind"]: t for t in listed(world, "claude_code") if t["session"] == "s-ext"}
    assert set(by_kind) == {"external", "redacted"}
    assert by_kind["external"]["replay"] == by_kind["redacted"]["replay"] == "skipped"
    assert "outside the project" in by_kind["external"]["skip_reason"]
    assert "redacted" in by_kind["redacted"]["skip_reason"]
    assert TOKEN not in json.dumps(by_kind)


def test_the_follow_up_carries_its_context_and_accepted_answers_are_references(world):
    tasks = {t["text"]: t for t in listed(world, "claude_code")}
    context = tasks[FOLLOW_UP]["context"]
    assert context and any("Rename the function add_note" in t["prompt"] for t in context)
    rename = tasks["Rename the function add_note to create_note.\nKeep the old name as an alias."]
    assert "Keep the old name as an alias." in rename["rubric"]
    assert rename["reference"].startswith("Reply to: Rename the function add_note")
    # interrupted before any answer: nothing to judge it by, so it only ever trains
    rust = tasks["Slowly rewrite the whole module in Rust."]
    assert rust["reference"] == "" and rust["train_only"] and rust["split"] == "train"


def test_dry_run_json_lists_the_replay_fields(world):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HOME=str(world.home), PYTHONPATH=str(REPO))
    out = subprocess.run(
        [str(SKILLOPT), "sleep", "dry-run", "--json", "--state-dir", str(world.state)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    [skill] = json.loads(out.stdout)["skills"]
    fields = {"id", "text", "source", "session", "split", "routed_by", "kind", "replay",
              "skip_reason", "rubric", "reference", "checks"}  # fmt: skip
    assert all(fields <= set(t) for t in skill["tasks"])
    assert {t["replay"] for t in skill["tasks"] if t["kind"] == "agentic"} == {"tools"}
