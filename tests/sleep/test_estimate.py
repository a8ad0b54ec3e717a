"""`sleep dry-run`'s estimate counts only the tasks the night replays, and the plan says
how many it skips and why. On the old code the external and redacted requests (and, on
handoff, the agentic tasks no workspace runner replays) were counted as rollouts, judge
calls and train batch, and nothing said they would be skipped."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess

import pytest

from core.run.estimate import plan_calls
from sleep.night import replay_modes
from sleep.night.estimate import estimate_night, skipped_counts
from tests.sleep.test_real_fixture_replay_modes import (
    DAY,
    REPO,
    SKILLOPT,
    roles_with_target,
    with_external_and_redacted,
)
from tests.support.real_transcript_world import make_real_world, real_night

EXTERNAL = "acts outside the project (posts, sends, deploys or pushes): never replayed"
REDACTED = "the secret it is about was redacted: it cannot be answered"
WORKSPACE = "needs a handoff that prepares a workspace"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    world = make_real_world(tmp_path_factory.mktemp("real"))
    with_external_and_redacted(world)
    return world


def planned(world, backend: str):
    night = real_night(world, DAY, roles=roles_with_target(backend), dry=True)

    async def both():
        plan = await night.plan()
        return night, plan, await estimate_night(night, plan)

    return asyncio.run(both())


def counts(tasks, *, replayed_only: bool) -> dict[str, int]:
    kept = [t for t in tasks if not (replayed_only and t["skip_reason"])]
    return {split: sum(t["split"] == split for t in kept) for split in ("train", "val", "test")}


def target_calls(night, n: dict[str, int]) -> int:
    config = night.run_config(n["train"], bool(n["test"]))
    return plan_calls(
        config, train_items=n["train"], val_items=n["val"], test_items=n["test"], uses_llm=True
    ).target_calls


def test_the_estimate_counts_only_replayed_tasks(world):
    night, plan, estimates = planned(world, "claude_code")
    [route] = plan.routes
    assert skipped_counts(route["tasks"]) == {EXTERNAL: 1, REDACTED: 1}
    replayed = counts(route["tasks"], replayed_only=True)
    everything = counts(route["tasks"], replayed_only=False)
    line = estimates[route["skill"]]
    found = int(re.search(r"(\d+) target \+ (\d+) judge", line).group(1))
    assert found == target_calls(night, replayed)
    assert found != target_calls(night, everything)  # what the old estimate said
    assert f"(the {sum(replayed.values())} replayed tasks; 2 skipped)" in line


def test_a_night_whose_tasks_are_all_skipped_estimates_no_calls(world, monkeypatch):
    # Handoff without its workspace runner (as before sleep/night/handoff_workspace.py existed):
    # every agentic task is skipped.
    monkeypatch.delitem(replay_modes._runners, "handoff-workspace")
    _night, plan, estimates = planned(world, "handoff")
    [route] = plan.routes
    skipped = skipped_counts(route["tasks"])
    assert skipped[WORKSPACE] == 5 and skipped[EXTERNAL] == skipped[REDACTED] == 1
    line = estimates[route["skill"]]
    assert line.startswith("no calls: 0 train / 0 val tasks are left to replay")
    assert "target" not in line


def test_dry_run_says_how_many_are_skipped_and_why(world):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HOME=str(world.home), PYTHONPATH=str(REPO))
    out = subprocess.run(
        [str(SKILLOPT), "sleep", "dry-run", "--state-dir", str(world.state)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (
        f"2 task(s) skipped tonight, not replayed or estimated: 1 {EXTERNAL}; 1 {REDACTED}"
        in out.stdout
    ), out.stdout
    as_json = subprocess.run(
        [str(SKILLOPT), "sleep", "dry-run", "--json", "--state-dir", str(world.state)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    [skill] = json.loads(as_json.stdout)["skills"]
    assert skill["skipped"] == {EXTERNAL: 1, REDACTED: 1}


def test_the_night_estimate_names_free_roles_instead_of_an_unknown_cost(world):
    """As `train --estimate` does: the old line said 'cost unknown (no price for
    tests.sleep.night_double:brain)' for the scripted test-double roles."""
    _night, plan, estimates = planned(world, "scripted")
    line = estimates[plan.routes[0]["skill"]]
    assert "$0: target, judge and optimizer on a test double (free)" in line
    _night, plan, estimates = planned(world, "claude_code")
    line = estimates[plan.routes[0]["skill"]]
    assert "cost unknown (no price for sonnet); no cost for judge and optimizer on a test" in line
