"""The ledger corpus (tests/sleep/fixtures/corrections_ledger, made by
tests/support/corrections_corpus.py from tests/support/ledger_script.py) is what its labels
say it is: every prompt the person typed is in its session's transcript in the order the
script has it, every label points at a prompt that exists, committed work comes after the
session that did it, and the planted key is only where it was planted. These are checks on
the corpus, not on mining: its mining figures are in test_corrections_corpus.py and
`python bench/corrections_corpus.py --corpus ledger`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.sleep.corrections_world import CORPORA, corpus_labels
from tests.support import ledger_script
from tests.support.corrections_script import Run

CORPUS = CORPORA["ledger"]


def _typed_prompts(transcript: Path) -> list[str]:
    """What the person typed, in order: Claude Code's string-content user entries and
    Codex's user input items (not the tags either CLI injects: environment context, slash
    commands)."""
    prompts = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        payload = entry.get("payload") or {}
        if entry.get("type") == "user" and not entry.get("isSidechain"):
            content = entry["message"]["content"]
            if isinstance(content, str) and not content.lstrip().startswith("<"):
                prompts.append(content)
        elif entry.get("type") == "response_item" and payload.get("role") == "user":
            texts = [p.get("text", "") for p in payload.get("content") or []]
            prompts += [t for t in texts if not t.lstrip().startswith("<")]
    return prompts


@pytest.fixture(scope="module")
def labels() -> dict:
    return corpus_labels(CORPUS)


def _sessions(labels: dict) -> dict[str, dict]:
    return {s["key"]: s for s in labels["sessions"]}


def test_every_typed_prompt_is_in_its_transcript_in_order(labels):
    sessions = _sessions(labels)
    for script_session in ledger_script.SESSIONS:
        typed = _typed_prompts(CORPUS / sessions[script_session.key]["transcript"])
        assert typed == [t.prompt for t in script_session.turns], script_session.key


def test_the_labels_are_the_scripts(labels):
    requests = {r["id"]: r for r in labels["requests"]}
    turns = {
        t.request: (s, t) for s in ledger_script.SESSIONS for t in s.turns if t.role == "request"
    }
    assert set(requests) == set(turns)
    for rid, (session, turn) in turns.items():
        assert (requests[rid]["session"], requests[rid]["text"]) == (session.key, turn.prompt)
    prompts = {(s.key, t.prompt) for s in ledger_script.SESSIONS for t in s.turns}
    for correction in labels["corrections"]:
        corrected = requests[correction["corrects"]]
        assert correction["preference"] in labels["preferences"]
        if correction["form"] in ("up_front", "with_request"):
            # its words are part of a prompt of the same session that asks for something
            assert any(
                k == correction["session"] and correction["text"] in p and p != correction["text"]
                for k, p in prompts
            ), correction["id"]
        else:
            assert (correction["session"], correction["text"]) in prompts
        if correction["form"] == "up_front":
            assert corrected["text"].startswith(correction["text"])
        if correction["form"] == "after_interrupt":
            assert corrected["interrupted"] and corrected["session"] == correction["session"]


def test_the_interrupted_request_was_interrupted_in_its_transcript(labels):
    sessions = _sessions(labels)
    (interrupted,) = [r for r in labels["requests"] if r["interrupted"]]
    text = (CORPUS / sessions[interrupted["session"]]["transcript"]).read_text(encoding="utf-8")
    asked = text.index(json.dumps(interrupted["text"]))
    assert text.index("[Request interrupted by user]", asked) > asked


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    clone = tmp_path_factory.mktemp("ledger") / "tally"
    subprocess.run(["git", "clone", "-q", str(CORPUS / "project.bundle"), str(clone)], check=True)
    return clone


def _last_entry_time(transcript: Path) -> str:
    stamps = [
        json.loads(line).get("timestamp", "")
        for line in transcript.read_text(encoding="utf-8").splitlines()
    ]
    return max(s for s in stamps if s)


def test_committed_work_comes_after_its_session_on_top_of_where_it_began(labels, history):
    """A replay that starts at `base_commit` has the work ahead of it: the commit after a
    session is a child of the HEAD it began at and is dated after its last entry."""
    committed = [s for s in labels["sessions"] if s["commit_after"]]
    assert committed
    for session in committed:
        parent = _git(history, "rev-parse", f"{session['commit_after']}^")
        assert parent == session["base_commit"], session["key"]
        when = _git(history, "show", "-s", "--format=%cI", session["commit_after"])
        last = _last_entry_time(CORPUS / session["transcript"])
        assert when.replace("+00:00", "") > last[:19], session["key"]


def test_the_planted_key_is_only_in_the_transcript_it_was_pasted_in(labels, history):
    (secret,) = labels["planted_secrets"]
    (pasted,) = [r for r in labels["requests"] if secret in r["text"]]
    sessions = _sessions(labels)
    holding = sorted(
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name != "labels.json" and secret.encode() in p.read_bytes()
    )
    assert holding == [sessions[pasted["session"]]["transcript"]]
    assert _git(history, "log", "--all", "-p", "-S", secret, "--format=%H") == ""


def test_every_make_test_the_agents_ran_passed(labels):
    """The person's `make test` (a recipe calling `python`) really ran in both CLIs'
    sessions: Codex's login shell once reset PATH and every run failed "make: python: No
    such file or directory" while the scripted model said it passed."""
    sessions = _sessions(labels)
    for script_session in ledger_script.SESSIONS:
        runs = [a for t in script_session.turns for a in t.actions if a == Run("make test")]
        text = (CORPUS / sessions[script_session.key]["transcript"]).read_text(encoding="utf-8")
        assert "No such file or directory" not in text, script_session.key
        assert len(re.findall(r"\d+ passed in", text)) >= len(runs), script_session.key
        assert not re.search(r"\d+ failed", text), script_session.key
