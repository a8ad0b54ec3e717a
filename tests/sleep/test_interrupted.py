"""Requests the person interrupted are harvested but never trained on: both miners skip
them, a correction after one does not land on the request before it, and the night lists
each as left out with the reason (tests fail on the code that mined them as tasks)."""

from __future__ import annotations

import json

from core.skills_repo import SkillsRepo
from sleep.mine.heuristic import mine_sessions
from sleep.mine.interrupted import INTERRUPTED_REASON, describe_interrupted, interrupted_left_out
from sleep.mine.with_model import numbered_prompts
from tests.sleep.test_night import SKILL_TEXT, make_night, sessions


def session(*prompts: dict) -> dict:
    return {"source": "claude", "session_id": "s1", "cwd": "/p", "automation": False,
            "tasks": list(prompts)}  # fmt: skip


def prompt(text: str, **flags) -> dict:
    return {"text": text, "timestamp": None, "aborted": bool(flags), **flags}


INTERRUPTED = prompt("rewrite the whole parser module in rust right now", interrupted=True)
UNANSWERED = prompt("explain what the tokenizer module is for", aborted=True)


def test_an_interrupted_request_is_not_mined_but_an_unanswered_one_is():
    mined = mine_sessions([session(INTERRUPTED, UNANSWERED)])
    assert [t.intent for t in mined] == [UNANSWERED["text"]]


def test_a_correction_after_an_interrupt_does_not_correct_the_request_before_it():
    """It corrects the interrupted request, which becomes a task with it as its rubric
    (tests/sleep/test_mine_corrections.py)."""
    before = prompt("how do I install the dependencies of the web package?")
    mined = mine_sessions([session(before, INTERRUPTED, prompt("no, use pnpm instead of npm"))])
    [task] = [t for t in mined if t.intent == before["text"]]
    assert task.checks == [] and task.rubric == ""
    [stopped] = [t for t in mined if t.intent == INTERRUPTED["text"]]
    assert "use pnpm instead of npm" in stopped.rubric


def test_a_new_request_the_person_then_interrupted_still_accepts_the_answer_before_it():
    """brain4: "add line_total" -> corrected -> fixed answer -> a new request, stopped. The
    fixed answer lost its place as the judge's reference. Fails on the old code."""
    ask = prompt("add a line_total helper to invoicer/lines.py")
    ask["answer"] = "Added line_total with floats."
    fix = prompt("no, use Decimal not float")
    fix["answer"] = "line_total now takes and returns Decimal."
    stopped_fix = dict(prompt("no, use Decimal not float", interrupted=True), answer="")
    [task] = [t for t in mine_sessions([session(ask, fix, INTERRUPTED)]) if t.intent == ask["text"]]
    assert task.reference == "line_total now takes and returns Decimal."
    [task] = mine_sessions([session(ask, stopped_fix)])
    assert task.reference == ""  # the correction itself was stopped: nothing was accepted


def test_the_model_miner_is_shown_an_interrupted_request_only_with_what_followed_it():
    # Shown, marked, when the person typed on: whether that redirects it is the model's to
    # read (the heuristic's shapes miss "nvm, too long. can …"); a task the model makes of
    # it without naming a redirect is dropped (sleep/mine/with_model.py).
    shown = [
        p["text"] for _sid, _s, p, _i in numbered_prompts([session(INTERRUPTED, UNANSWERED)], False)
    ]
    assert shown == [INTERRUPTED["text"], UNANSWERED["text"]]
    assert numbered_prompts([session(UNANSWERED, INTERRUPTED)], False)[-1][2] == UNANSWERED


def test_each_interrupted_request_is_listed_as_left_out_with_its_reason():
    left = interrupted_left_out([session(INTERRUPTED, UNANSWERED)])
    assert left == [{"session": "claude:s1", "source": "claude", "reason": INTERRUPTED_REASON,
                     "prompt": INTERRUPTED["text"]}]  # fmt: skip
    assert describe_interrupted(left) == [
        "1 request(s) left out: interrupted by the user (not trained on)"
    ]


async def test_a_night_lists_the_interrupted_request_and_never_trains_on_it(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("project", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    harvested = sessions(project)
    stopped = "migrate every package of the repository to yarn berry and zero installs"
    harvested[0]["tasks"].insert(0, prompt(stopped, interrupted=True))
    lines: list[str] = []
    night = make_night(tmp_path, repo, project, harvested, on_line=lines.append)
    plan = await night.plan()
    [entry] = [e for e in plan.left_out if e["reason"] == INTERRUPTED_REASON]
    assert entry == {"session": "claude:s00", "source": "claude",
                     "reason": INTERRUPTED_REASON, "prompt": stopped}  # fmt: skip
    assert "1 request(s) left out: interrupted by the user (not trained on)" in lines
    planned = json.dumps(plan.routes)
    assert "yarn berry" not in planned and "install the dependencies" in planned
