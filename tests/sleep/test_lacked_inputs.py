"""Issue 37: an item whose replay failed only because the replay lacked its inputs (a
code question's files not there to show, a check that could not be applied) was shown to
the failure analyst as a failure of the skill; the strong-model night's analyst wrote a
rule from one. It is now marked (`lacked_inputs`), left out of the analysts' failures, and
night.json says which. The chat target, the judge and the optimizer are TEST DOUBLES
(tests/sleep/night_double.py for the whole night)."""

from __future__ import annotations

import asyncio
import json

from core.models.types import Completion, Usage
from core.optimizer.reflection_groups import split_results
from sleep.mine.tasks import Check, MinedTask
from sleep.night.replay_env import ReplayEnvironment
from sleep.night.replay_tools import ToolReplay
from tests.sleep.test_night import make_night, sessions
from tests.sleep.test_night import project as project  # noqa: F401 - the fixture
from tests.sleep.test_night import repo as repo  # noqa: F401 - the fixture
from tests.sleep.test_read_files import project_changed_after


def judged(score: float):
    async def judge(_messages, **_kw):
        verdict = json.dumps({"score": score, "reason": "cannot tell without the code"})
        return Completion(verdict, Usage(), "stop", 0.0, "j")

    return judge


async def target(_messages, **_kw):  # a TEST DOUBLE of the chat target
    return Completion("Probably dropped.", Usage(), "stop", 0.0, "t")


def replay(task: MinedTask, project, head, score: float = 0.2):
    env = ReplayEnvironment(
        {"train": [task]}, judged(score), target_backend="openai", tools=ToolReplay(project, head)
    )
    [item] = env.load_split("train")
    return asyncio.run(env.rollout(item, "# notes\n", target))


def question(project, **fields) -> MinedTask:
    return MinedTask("t-q", "are nulls dropped or kept?", str(project), kind="advice", **fields)


def test_a_failure_for_want_of_the_files_read_is_marked_and_not_an_analyst_failure(tmp_path):
    project, head = project_changed_after(tmp_path)
    lacking = replay(question(project, read_files=["ledger.py"]), project, head)
    assert lacking.hard == 0 and "ledger.py" in lacking.lacked_inputs
    assert "ledger.py: not available" in lacking.trajectory[-2]["content"]
    # the same failure with the files it read shown is the skill's
    shown = replay(question(project, read_files=["billing.py"]), project, head)
    assert shown.hard == 0 and shown.lacked_inputs == ""
    failures, successes = split_results([lacking, shown])
    assert failures == [shown] and successes == []


def test_a_check_a_chat_reply_cannot_tell_marks_its_failure_but_a_failed_check_does_not(
    tmp_path,
):
    project, head = project_changed_after(tmp_path)
    ran = replay(question(project, checks=[Check("ran", r"\bmake test")]), project, head)
    assert ran.hard == 0 and "could not be applied" in ran.lacked_inputs
    # a check the reply could be held to and failed: the skill's failure, unmarked
    both = [Check("ran", r"\bmake test"), Check("answer_starts_with", "yes|no")]
    failed = replay(question(project, checks=both), project, head, score=0.8)
    assert failed.hard == 0 and failed.lacked_inputs == ""


async def test_night_json_lists_the_items_left_out_of_analysis(tmp_path, repo, project):  # noqa: F811
    harvested = sessions(project)
    for session in harvested:  # the "explain" question read a file the project lacks
        explain = session["tasks"][2:3]
        for prompt in explain:
            prompt["reads"] = [f"src/{prompt['text'].split()[3]}.py"]
    lines: list[str] = []
    night = make_night(tmp_path, repo, project, harvested=harvested, on_line=lines.append)
    result = await night.run()
    assert result.status == "finished", result.message
    saved = json.loads((night.folder / "night.json").read_text())
    left_out = saved["skills"]["project"]["left_out_of_analysis"]
    assert left_out and all("could not show" in e["reason"] for e in left_out)
    assert any(f"{len(left_out)} failing item(s) lacked their inputs" in line for line in lines)
    tasks = json.loads((night.folder / "tasks.json").read_text())["skills"]["project"]
    explain = {t["id"] for t in tasks["train"] if t["intent"].startswith("explain")}
    assert {e["item"] for e in left_out} <= explain
    # the failure analysts' groups (each step's reflections.json) hold none of them
    grouped = [
        item
        for log in (night.folder / "project" / "steps").glob("*/reflections.json")
        for group in json.loads(log.read_text())
        if group["kind"] == "failure"
        for item in group["items"]
    ]
    assert grouped and not {e["item"] for e in left_out} & set(grouped)
