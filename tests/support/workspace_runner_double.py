"""A TEST DOUBLE of the workspace runners (sleep/night/replay_modes.py) for tests of a night's
machinery (resume, carry, handoff waiting) on agentic tasks with a chat target, until the
real workspace tool loop is registered: it asks the target model the task's prompt, with
the skill as system prompt, and changes no file. It never stands in for the tool loop in a
test of replaying itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from core.models.types import AgentOutcome, AgentTask
from sleep.night.replay_modes import WORKSPACE_MODES, register_workspace_runner, workspace_runner


async def answer_without_tools(
    task: AgentTask, skill_text: str, complete, _where=None
) -> AgentOutcome:
    messages = [{"role": "system", "content": skill_text}] if skill_text.strip() else []
    completion = await complete([*messages, {"role": "user", "content": task.prompt}])
    return AgentOutcome(
        text=completion.text,
        events=[],
        diff="",
        exit_status=0,
        usage=completion.usage,
        latency_s=completion.latency_s,
        model="workspace-runner-double",
        session_id="",
        check=None,
    )


@contextmanager
def workspace_runner_double(runner=answer_without_tools) -> Iterator[None]:
    """Every workspace mode runs `runner` inside (None: no runner at all, as before a mode's
    module registers one); the runners registered before are put back after."""
    before = {m: workspace_runner(m) for m in WORKSPACE_MODES}
    for mode in WORKSPACE_MODES:
        register_workspace_runner(mode, runner)
    try:
        yield
    finally:
        for mode, runner in before.items():
            register_workspace_runner(mode, runner)
