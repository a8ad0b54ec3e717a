"""Issue 21 done-when: a handoff night on the transcripts the REAL Claude Code CLI wrote
(all five typed tasks agentic) writes prompts that name prepared workspaces; the answerer,
a TEST DOUBLE of the person's agent, edits files in each named workspace and writes the
answer; the night goes on, the diff reaches the judge's prompt, and the user's checkout
(uncommitted work included) is untouched. A re-run before answering writes nothing new."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from pathlib import Path

from core.models.handoff import parse_prompt_file
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from tests.sleep.night_double import Brain
from tests.support.project_tree import snapshot
from tests.support.real_transcript_world import make_real_world, real_night, scripted_roles
from tests.support.skills_git import plain_git as git

DAY = dt.date(2026, 12, 2)
WORKSPACE_LINE = re.compile(r"^    (/\S+/work)$", re.MULTILINE)
EDIT = "# checked by the replay"


def handoff_roles() -> dict:
    roles = (
        scripted_roles()
    )  # the optimizer stays the scripted TEST DOUBLE (tests/sleep/night_double.py)
    roles["target"] = {"backend": "handoff"}
    roles["judge"] = {"backend": "handoff"}
    return roles


def answer_all(folder: Path, brain: Brain) -> list[Path]:
    """The person's agent: a workspace prompt is done in its workspace (an edit, a new
    file) and answered with a final message; any other prompt as the brain would."""
    edited = []
    for status in HandoffFolder(folder).waiting():
        text = status.prompt.read_text()
        if status.info.kind.startswith("replay-workspace"):
            [path] = WORKSPACE_LINE.findall(text)
            workspace = Path(path)
            (workspace / "app.py").write_text((workspace / "app.py").read_text() + EDIT + "\n")
            (workspace / "CHANGES.md").write_text("- replayed\n")
            status.answer.write_text("Done: app.py checked, CHANGES.md written.")
            edited.append(workspace)
        else:
            messages = parse_prompt_file(text)
            status.answer.write_text(brain(Request("handoff", "handoff", messages)))
    return edited


def test_a_handoff_night_replays_agentic_tasks_in_named_workspaces(tmp_path):
    world = make_real_world(tmp_path, handoff_roles())
    project = world.project
    (project / "app.py").write_text("x = 1\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    (project / "app.py").write_text("x = 'uncommitted'\n")
    before, status_before = snapshot(project), git(project, "status", "--porcelain")

    night = real_night(world, DAY, handoff_roles())
    result = asyncio.run(night.run())
    assert result.status == "waiting", result.message
    folder = night.folder / "handoff"
    first = sorted(p.name for p in (folder / "prompts").iterdir())
    workspace_prompts = [n for n in first if "-replay-workspace-" in n]
    assert workspace_prompts and len(workspace_prompts) == len(first)  # all agentic
    assert "replay-workspace" in result.message  # the console lists them by kind
    kept = sorted((folder / "workspaces").iterdir())
    assert len(kept) == len(workspace_prompts)
    for name in workspace_prompts:
        [path] = WORKSPACE_LINE.findall((folder / "prompts" / name).read_text())
        assert (Path(path) / "app.py").read_text() == "x = 1\n"  # the recorded commit

    again = asyncio.run(real_night(world, DAY, handoff_roles()).run())
    assert again.status == "waiting"
    assert sorted(p.name for p in (folder / "prompts").iterdir()) == first
    assert sorted((folder / "workspaces").iterdir()) == kept  # no duplicates

    brain = Brain()
    edited: list[Path] = []
    for _ in range(20):
        edited += answer_all(folder, brain)
        result = asyncio.run(real_night(world, DAY, handoff_roles()).run())
        if result.status != "waiting":
            break
    assert result.status == "finished", result.message
    assert edited and len(set(edited)) == len(edited)  # one workspace per prompt
    judged = [p.read_text() for p in (folder / "prompts").iterdir() if "-judge-" in p.name]
    with_diff = [j for j in judged if f"+{EDIT}" in j and "+- replayed" in j]
    assert with_diff and all("Done: app.py checked" in j for j in with_diff)
    versions = {
        v
        for p in (folder / "prompts").iterdir()
        for v in re.findall(r"skill version ([0-9a-f]{12})", p.read_text())
    }
    assert len(versions) >= 2  # the current skill and tonight's candidate, apart
    assert snapshot(project) == before
    assert git(project, "status", "--porcelain") == status_before
    assert not (folder / "workspaces").exists()  # a finished night needs them no more
