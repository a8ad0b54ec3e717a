"""How a night replays each kind of task (sleep/night/replay_modes.py): never an agentic task as
a bare chat call, never an external or redacted one; context and references reach the
replay and the judge."""

import json

import pytest

import sleep.night.handoff_workspace  # noqa: F401 - registers the handoff-workspace runner
from core.config import config_from_dict
from core.models.types import Request
from sleep.mine.tasks import Check, MinedTask, Turn
from sleep.night.replay_env import ReplayEnvironment, agent_prompt, replay_messages, task_item
from sleep.night.replay_modes import (
    NEEDS_WORKSPACE_HANDOFF,
    replay_at_night,
    replay_mode,
)
from tests.sleep.night_double import Brain
from tests.sleep.test_night import make_night, project, repo, sessions  # noqa: F401
from tests.support.loopback_openai import LoopbackOpenAI
from tests.support.real_transcript_world import night_config, openai_roles
from tests.support.workspace_runner_double import workspace_runner_double


def task(kind: str, **kw) -> MinedTask:
    return MinedTask(id=f"t-{kind}", intent=f"a {kind} task", project="/p", kind=kind, **kw)


@pytest.mark.parametrize(
    ("kind", "backend", "mode"),
    [
        ("agentic", "claude_code", "agent"),
        ("agentic", "codex", "agent"),
        ("agentic", "openai", "tools"),
        ("agentic", "scripted", "tools"),
        ("agentic", "handoff", "handoff-workspace"),
        ("advice", "claude_code", "agent"),
        ("advice", "openai", "chat"),
        ("advice", "handoff", "chat"),
    ],
)
def test_each_kind_gets_its_mode_on_each_backend(kind, backend, mode):
    assert replay_mode(task(kind), backend).mode == mode


@pytest.mark.parametrize("backend", ["claude_code", "openai", "handoff"])
def test_external_and_redacted_tasks_are_skipped_everywhere_with_a_reason(backend):
    for kind, words in (("external", "outside the project"), ("redacted", "redacted")):
        replay = replay_at_night(task(kind), backend)
        assert replay.mode == "skipped" and words in replay.skip_reason


def test_a_mode_without_its_runner_is_skipped_not_replayed_as_chat():
    # `tools` is our own loop (sleep/night/replay_tools.py): built in, no runner needed
    assert replay_at_night(task("agentic"), "openai").mode == "tools"
    with workspace_runner_double(None):
        assert replay_at_night(task("agentic"), "openai").mode == "tools"
        replay = replay_at_night(task("agentic"), "handoff")
        assert replay.skip_reason == NEEDS_WORKSPACE_HANDOFF
    # sleep/night/handoff_workspace.py registers itself (the night imports it)
    assert replay_at_night(task("agentic"), "handoff").mode == "handoff-workspace"


def test_a_follow_up_is_replayed_after_the_turns_it_depends_on():
    follow_up = task(
        "advice",
        context=[Turn("which stages does pipeline.yaml list?", "extract, transform, load")],
    )
    item = task_item(follow_up, "openai")
    messages = replay_messages(item, "# skill")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "which stages does pipeline.yaml list?"
    assert messages[2]["content"] == "extract, transform, load"
    assert messages[3]["content"] == "a advice task"
    prompt = agent_prompt(item)  # an agent run has no history: the context goes first
    assert prompt.index("pipeline.yaml") < prompt.index("a advice task")


def test_an_agentic_follow_up_is_told_the_earlier_changes_may_be_missing():
    """A follow-up replays at tonight's commit, without the earlier turns' edits: the agent
    is told to make what it depends on first, the judge that the diff may hold them
    (fails on the old code, which said neither)."""
    from sleep.night.replay_env import PREDECESSORS_JUDGE_NOTE, PREDECESSORS_NOTE, _judge_context

    follow_up = task("agentic", context=[Turn("add a --units flag to cli.py", "done")])
    item = task_item(follow_up, "claude_code")
    prompt = agent_prompt(item)
    assert prompt.index("--units") < prompt.index(PREDECESSORS_NOTE) < prompt.index("Now: ")
    assert PREDECESSORS_JUDGE_NOTE in _judge_context(item)
    alone = task_item(task("agentic"), "claude_code")
    assert agent_prompt(alone) == alone.question and _judge_context(alone) == ""
    chat = task_item(task("advice", context=[Turn("which stages?", "three")]), "openai")
    assert PREDECESSORS_JUDGE_NOTE not in _judge_context(chat)  # no workspace, no diff


def test_the_judge_reads_the_reference_and_command_checks_never_judge_the_text():
    accepted = task(
        "advice",
        reference="Use rollup-plugin-preserve-directives.",
        checks=[Check("contains", "rollup"), Check("command", "make test")],
    )
    item = task_item(accepted, "openai")
    assert "Use rollup-plugin-preserve-directives." in item.answer
    assert item.data["command_checks"] == ["make test"]

    async def judge(_messages):
        raise AssertionError("not asked")

    env = ReplayEnvironment({"val": [accepted]}, judge)
    assert env.score(item, "use rollup").hard == 1.0  # `make test` is not looked for in it


async def test_a_night_never_sends_an_external_request_to_any_model(tmp_path, repo, project):  # noqa: F811
    brain, seen = Brain(), []

    def model(record):
        seen.append(json.dumps(record.messages))
        return brain(Request(backend="openai", model="m", messages=record.messages))

    harvested = sessions(project)
    for i, session in enumerate(harvested[:-1]):
        session["tasks"] += [
            {"text": f"post the nightly run summary number {i} to #data-alerts",
             "timestamp": None, "aborted": False, "answer": "Posted."},
            {"text": "thanks", "timestamp": None, "aborted": False},
        ]  # fmt: skip
    lines: list[str] = []
    with LoopbackOpenAI(handler=model) as server:
        config = night_config(openai_roles(server.base_url))
        night = make_night(
            tmp_path,
            repo,
            project,
            harvested,
            config=config_from_dict(config),
            on_line=lines.append,
        )
        plan = await night.plan()
        listed = plan.routes[0]["tasks"]
        external = [t for t in listed if t["kind"] == "external"]
        assert external and all(t["replay"] == "skipped" for t in external)
        result = await night.run()
    assert result.status == "finished", result.message
    assert seen and not any("#data-alerts" in s for s in seen)
    assert any("acts outside the project" in line for line in lines)
