"""Issue 19: a handoff night a person can finish. Garbage answers are rejected with the
reason, never cached, get a repair prompt, and the night waits again (never fails); the
corrected answers finish it with the same tasks — on the scripted sessions of
tests/sleep/test_night.py (where the night stages the rule) and on the transcripts the real
Claude Code CLI wrote (tests/sleep/fixtures/real). Issue 20: a key pasted into an answer
is masked before anything stores it. The scripted brain (tests/sleep/night_double.py) is
the person, as a TEST DOUBLE."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.handoff import parse_prompt_file
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from core.skills_repo import SkillsRepo
from sleep.harvest.run import HarvestOptions
from sleep.night.held_tasks import transcript_harvester
from sleep.night.run import Night
from tests.sleep.night_double import RULE, Brain
from tests.sleep.test_night import DAY, SKILL_TEXT, make_night, night_config, project, repo  # noqa: F401
from tests.sleep.transcripts import REAL
from tests.support.workspace_runner_double import workspace_runner_double

GARBAGE = "sure! the score is high"
KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0123456789"


@pytest.fixture
def _no_project_to_copy():
    """The real transcripts ran in /home/dev/src/notes-app, which is not there to copy:
    their agentic tasks replay through the TEST DOUBLE of the workspace runners, which
    needs no files (the scripted sessions' night uses the real handoff workspaces)."""
    with workspace_runner_double():
        yield


def handoff_config(tmp_path):
    roles = {r: {"backend": "handoff"} for r in ("target", "optimizer", "judge")}
    return config_from_dict({"models": roles, "train": night_config(tmp_path).train.model_dump()})


def reply_for(brain: Brain, messages: list[dict]) -> str:
    """What the person answers: a repair prompt is answered like the call it repairs."""
    if len(messages) > 1 and messages[-2]["role"] == "assistant":
        messages = messages[:-2]
    return brain(Request(backend="handoff", model="handoff", messages=messages))


def answer(folder: Path, brain: Brain, *, garbage_for_judge: bool, leak: bool) -> None:
    for status in HandoffFolder(folder).waiting():
        text = reply_for(brain, parse_prompt_file(status.prompt.read_text()))
        if garbage_for_judge and status.info.kind.startswith("judge"):
            text = GARBAGE
        if leak and status.info.kind == "target":
            text += f" (deploy key {KEY})"
        status.answer.write_text(text)


async def finish_through_garbage(new_night, state: Path):
    """Answer round after round; the first two rounds with judge prompts get garbage (the
    judge's answers, then the repair prompts'), the rest the brain's answers."""
    brain = Brain()
    night = new_night()
    result = await night.run()
    folder = night.folder / "handoff"
    assert result.status == "waiting" and (folder / "answers").is_dir()
    tasks = json.loads((night.folder / "tasks.json").read_text())
    garbage_rounds = rounds = corrected = 0
    while result.status == "waiting":
        rounds += 1
        assert rounds < 30, result.message
        waiting = HandoffFolder(folder).waiting()
        judging = any(s.info.kind.startswith("judge") for s in waiting)
        garbage = judging and garbage_rounds < 2
        garbage_rounds += garbage
        if judging and not garbage:
            corrected += sum(s.state == "rejected" for s in waiting)
        answer(folder, brain, garbage_for_judge=garbage, leak=rounds == 1)
        night = new_night()
        result = await night.run()
        assert result.status in ("waiting", "finished"), result.message  # never failed
        if garbage and garbage_rounds == 2:  # the repair prompts' garbage: rejected, waiting
            assert result.status == "waiting"
            assert "rejected: invalid JSON" in result.message  # says why, on the console
    assert result.status == "finished", result.message
    assert garbage_rounds == 2 and corrected > 0
    assert json.loads((night.folder / "tasks.json").read_text()) == tasks  # same tasks
    ours = [p for p in state.rglob("*") if p.is_file() and "answers" not in p.parts]
    stored = b"".join(p.read_bytes() for p in ours if "prompts" not in p.parts)
    assert GARBAGE.encode() not in stored  # never cached, never a score
    # masked before any response, event, rollout or the judge's prompt held it
    assert not [p for p in ours if KEY.encode() in p.read_bytes()]
    return result


async def test_garbage_twice_then_corrected_answers_finish_the_night(tmp_path, repo, project):  # noqa: F811
    config = handoff_config(tmp_path)
    await finish_through_garbage(
        lambda: make_night(tmp_path, repo, project, config=config), tmp_path / "state"
    )
    [branch] = repo.staged_branches()
    assert RULE in repo.git.blob(branch.head, repo.entry("project").path).decode()


@pytest.mark.usefixtures("_no_project_to_copy")
async def test_the_same_on_transcripts_the_real_claude_cli_wrote(tmp_path):
    claude = shutil.copytree(REAL / "claude", tmp_path / "claude")
    skills = SkillsRepo.init(tmp_path / "skills")
    skills.add_skill("notes-app", SKILL_TEXT)
    project_dir = Path("/home/dev/src/notes-app")  # the cwd the real sessions recorded
    state = tmp_path / "state"
    config = handoff_config(tmp_path)

    harvested = transcript_harvester(
        HarvestOptions(
            state_dir=state,
            project=project_dir,
            claude_home=str(claude),
            codex_home=str(tmp_path / "no-codex"),
            environ={},
            home=tmp_path,
        )
    )

    def new_night():
        return Night(
            state_dir=state,
            repo=skills,
            config=config,
            harvest=harvested,
            project=project_dir,
            today=DAY,
            min_val_tasks=1,  # the real CLIs' transcripts hold one held-out task
        )

    result = await finish_through_garbage(new_night, state)
    outcome = result.skills["notes-app"]
    assert (outcome["train"], outcome["val"]) == (4, 1)


async def test_a_handoff_night_without_a_project_still_replays_its_advice_tasks(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
):
    """No project, no tree to copy: the workspace replay is not offered, and a night of
    advice tasks waits for its answers as before (it must not stop on the missing tree)."""
    night = make_night(tmp_path, repo, project, config=handoff_config(tmp_path), skill="project")
    night.project = None
    result = await night.run()
    assert result.status == "waiting", result.message
    assert result.skills and all(o["status"] == "waiting" for o in result.skills.values())
    assert not (night.folder / "handoff" / "workspaces").exists()
