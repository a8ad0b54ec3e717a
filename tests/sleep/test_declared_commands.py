"""Issue 37: a `ran` check gave no result under the handoff backend (the answerer's
commands are not seen). The answerer now declares the commands it ran; the night runs each
again in the real jail over the answered workspace and counts it as ran only when it
passes there. A coding agent's commands are still read from its transcript's events. The
person's agent and the judge are TEST DOUBLES writing the real handoff answer files; the
coding agent of the last test is a TEST DOUBLE run function returning recorded events."""

from __future__ import annotations

import asyncio
import json

import pytest

from core.environment.contract import RolloutResult
from core.models.handoff import HandoffWaiting
from core.models.types import AgentOutcome, Completion, Usage
from sleep.mine.tasks import Check, MinedTask
from sleep.night.declared_commands import declared_in
from sleep.night.replay_env import AgentReplay, ReplayEnvironment
from tests.sleep.handoff_replay_world import SKILL, Night, workspace_named
from tests.support.jail import jail  # noqa: F401 - the fixture
from tests.support.skills_git import plain_git as git

RAN_TESTS = Check("ran", r"\bmake\s+test\b")
# `make test` passes only when the work was done (NOTES.md says so)
MAKEFILE = "test:\n\tgrep -q validated NOTES.md\n"


def test_a_declaration_lists_its_commands_and_none_is_a_declaration():
    reply = "Done.\n\nCommands run:\n- `make test`\n    python -m pytest -q\n\nThanks."
    assert declared_in(reply) == ["make test", "python -m pytest -q"]
    assert declared_in("Fixed it.\n**Commands run:** none") == []
    assert declared_in("Commands run:\n```\nmake lint\n```") == ["make lint"]
    assert declared_in("Fixed it, and I ran the tests.") is None


def night_with_makefile(tmp_path) -> Night:
    night = Night(tmp_path, rubric="total() rejects negative numbers", checks=[RAN_TESTS])
    (night.root / "Makefile").write_text(MAKEFILE)
    git(night.root, "add", "-A")
    git(night.root, "commit", "-q", "-m", "tests")
    night.commit = git(night.root, "rev-parse", "HEAD").strip()
    return night


def replayed(night: Night, reply: str, *, do_the_work: bool) -> tuple[RolloutResult, str]:
    """The handoff replay answered with `reply`, the judge answering 0.9; the result and
    the judge's prompt."""
    with pytest.raises(HandoffWaiting):
        night.round()
    [replay] = night.waiting()
    assert "Commands run:" in replay.prompt.read_text()  # the answerer is asked to declare
    if do_the_work:
        (workspace_named(replay.prompt) / "NOTES.md").write_text("validated\n")
    replay.answer.write_text(reply)
    with pytest.raises(HandoffWaiting):
        night.round()
    [judge] = night.waiting()
    judge_prompt = judge.prompt.read_text()
    judge.answer.write_text(json.dumps({"score": 0.9, "reason": "validates the input"}))
    return night.round(), judge_prompt


def declared_step(result: RolloutResult) -> dict:
    [step] = [m for m in result.trajectory if m["role"] == "declared_commands"]
    return step


@pytest.mark.usefixtures("jail")
def test_a_claimed_make_test_that_fails_again_is_not_counted_as_ran(tmp_path):
    night = night_with_makefile(tmp_path)
    reply = "Validated total() and the tests pass.\n\nCommands run:\n    make test\n"
    result, judge_prompt = replayed(night, reply, do_the_work=False)
    [rerun] = declared_step(result)["checks"]
    assert (rerun["command"], rerun["status"], rerun["exit_code"]) == ("make test", "fail", 2)
    assert "mined checks 0/1 passed" in result.explanation
    assert result.soft == pytest.approx(0.75 * 0.9) and result.hard == 0
    assert "`make test`: FAILED (exit 2)" in judge_prompt  # the judge is told, too


@pytest.mark.usefixtures("jail")
def test_a_declared_make_test_that_passes_again_counts_as_ran(tmp_path):
    night = night_with_makefile(tmp_path)
    reply = "Validated total().\n\nCommands run:\n- make test"
    result, _ = replayed(night, reply, do_the_work=True)
    assert declared_step(result)["checks"][0]["status"] == "pass"
    assert "mined checks 1/1 passed" in result.explanation
    assert result.soft == pytest.approx(0.75 * 0.9 + 0.25)
    # a later round brings the same answer back: the declared command is not run again
    assert night.round().soft == pytest.approx(result.soft)


@pytest.mark.usefixtures("jail")
def test_a_reply_that_declares_nothing_says_nothing_of_ran(tmp_path):
    night = night_with_makefile(tmp_path)
    result, _ = replayed(night, "Validated total().", do_the_work=True)
    assert "mined checks" not in result.explanation  # not told, not failed
    assert result.soft == pytest.approx(0.9)
    assert not [m for m in result.trajectory if m["role"] == "declared_commands"]


def test_a_coding_agent_s_commands_are_read_from_its_events_not_its_words(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    task = MinedTask("t-1", "fix app.py", str(root), kind="agentic", checks=[RAN_TESTS])

    async def judge(messages, **_):
        verdict = json.dumps({"score": 1.0, "reason": "ok"})
        return Completion(verdict, Usage(), "stop", 0.0, "judge")

    def run_with(events: list, text: str):
        async def run_agent(task, skill):
            return AgentOutcome(text, events, "", 0, Usage(0, 0), 0.0, "agent", "s", None)

        return run_agent

    make_test = {
        "type": "assistant",
        "message": {
            "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "make test"}}]
        },
    }
    env = ReplayEnvironment(
        {"val": [task]},
        judge,
        agent=AgentReplay(root, None, "project"),
        target_backend="claude_code",
    )
    [item] = env.load_split("val")
    ran = asyncio.run(env.rollout(item, SKILL, run_with([make_test], "Fixed.")))
    assert "mined checks 1/1 passed" in ran.explanation
    claimed = asyncio.run(
        env.rollout(item, SKILL, run_with([], "Fixed.\nCommands run:\nmake test"))
    )
    assert "mined checks 0/1 passed" in claimed.explanation  # its words are not its events


@pytest.mark.usefixtures("jail")
def test_a_search_that_finds_nothing_is_not_shown_as_a_failure(tmp_path):
    """Fails on the old code: a declared `grep` that found nothing (exit 1) was shown to
    the judge as FAILED, beside the person's real verification command."""
    night = night_with_makefile(tmp_path)
    reply = "Validated total().\n\nCommands run:\n- grep -rn parse_amount .\n- make test"
    result, judge_prompt = replayed(night, reply, do_the_work=True)
    search, tests = declared_step(result)["checks"]
    assert (search["status"], search["exit_code"], tests["status"]) == ("fail", 1, "pass")
    assert "FAILED" not in judge_prompt, judge_prompt
    assert "`grep -rn parse_amount .`: ran (exit 1; not a verification command" in judge_prompt
    assert "`make test`: passed (exit 0)" in judge_prompt
    assert "FAILED" not in declared_step(result)["content"]  # the analysts read it too
    assert result.soft == pytest.approx(0.75 * 0.9 + 0.25)
