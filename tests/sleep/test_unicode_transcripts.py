"""Hostile text in transcripts (issue 35): a lone surrogate (the JSON escape `\\ud83d`), NUL,
right-to-left marks and combining marks in prompts, paths and edits go through harvest →
night → commit. Nothing crashes, a night's status never claims "running" after it stopped,
and every character but a lone surrogate (written as U+FFFD) arrives as it was typed."""

from __future__ import annotations

import json

from core.skills_repo import SkillsRepo
from sleep.harvest.file_edits import FileEdit
from sleep.night.edited_tree import edited_tree
from tests.sleep.cli_world import make_world
from tests.sleep.test_night import SKILL_TEXT, make_night, sessions
from tests.sleep.transcripts import claude_user, uid

LONE = "\\ud83d"  # as the transcript's JSON holds it: an escape with no partner
RTL, NUL, ACCENT = "\u202eevil\u202c\u200f", "\x00", "e\u0301"
HOSTILE = f"{RTL} caf{ACCENT} {NUL}"


def _plant_session(world, prompt: str, path: str, content: str) -> None:
    """A Claude Code session whose prompt and Write carry `@@` where the lone escape goes."""
    p = str(world.project)
    write = {"file_path": f"{p}/{path}", "content": content}
    records = [
        claude_user(prompt, cwd=p, session="c-9"),
        {"type": "assistant", "uuid": uid(), "cwd": p, "sessionId": "c-9",
         "message": {"id": "m", "role": "assistant", "model": "m", "content": [
             {"type": "tool_use", "id": "tu1", "name": "Write", "input": write}]}},
        claude_user("now also add a frown constant", cwd=p, session="c-9"),
    ]  # fmt: skip
    text = "".join(json.dumps(r) + "\n" for r in records).replace("@@", LONE)
    transcript = world.claude / "projects" / "x-c9" / "c-9.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(text)


def test_a_lone_surrogate_in_a_write_never_wedges_sleep(tmp_path):
    world = make_world(tmp_path)
    _plant_session(world, "write the emoji helper", "emoji@@.py", "SMILE = '@@'\n")
    assert world.run("sleep", "init", "--project", str(world.project), "--yes").returncode == 0
    dry = world.run("sleep", "dry-run", "--json")
    assert dry.returncode == 0 and "Traceback" not in dry.stderr, dry.stderr
    json.loads(dry.stdout)
    for _ in range(2):  # and the next run too: nothing was left wedged
        night = world.run("sleep", "run", "--json")
        assert night.returncode in (0, 3) and "Traceback" not in night.stderr, night.stderr
        assert json.loads(night.stdout)["status"] != "running"
    folders = sorted((world.state / "nights").iterdir())
    assert all(json.loads((f / "night.json").read_text())["status"] != "running" for f in folders)
    folder = folders[0]
    saved = (folder / "sessions.json").read_text(encoding="utf-8")
    assert "emoji\ufffd.py" in json.loads(saved)["sessions"][-1]["tasks"][0]["edits"][0]["path"]


def test_hostile_characters_are_harvested_as_typed(tmp_path):
    world = make_world(tmp_path)
    _plant_session(world, f"rename {HOSTILE} here @@", f"caf{ACCENT}{RTL}.py", f"A = '{NUL}'\n")
    out = world.run("sleep", "harvest", "--all-projects", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    texts = [t["text"] for s in json.loads(out.stdout)["sessions"] for t in s["tasks"]]
    assert f"rename {HOSTILE} here \ufffd" in texts


def test_edits_with_hostile_paths_and_text_apply_in_a_follow_up_tree(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    name = f"caf{ACCENT}{RTL}.py"
    edits = [
        FileEdit(path=name, new=f"A = '{NUL}{RTL}'\n", write=True),
        FileEdit(path=name, old=f"{NUL}{RTL}", new=f"{ACCENT}\ufffd"),
    ]
    with edited_tree(project, None, edits) as tree:
        assert (tree.root / name).read_text(encoding="utf-8") == f"A = '{ACCENT}\ufffd'\n"
        assert len(tree.applied) == 2 and not tree.skipped


def _decorated(project) -> list[dict]:
    """The test night's sessions with hostile text everywhere a transcript can put it: a raw
    lone surrogate too, as a reader that forgot to clean would hand it on."""
    out = sessions(project)
    for n, session in enumerate(out):
        session["session_id"] += f"-{ACCENT}\ud83d"
        session["branch"] = f"feat/{RTL}"
        for task in session["tasks"]:
            task["text"] += f" ({HOSTILE} \ud83d)"
            task["edits"] = [{"path": f"src/{ACCENT}{n}.py", "new": f"x = '{NUL}\ud83d'\n"}]
    return out


async def test_a_night_over_hostile_text_commits_its_staging(tmp_path):
    """Past the harvest (which cleans): a raw lone surrogate in the frozen sessions still
    stages a commit. It hung the night before (a rollout cache write failed in a worker,
    whose result the runner then waited for forever)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("project", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    night = make_night(tmp_path, repo, project, harvested=_decorated(project))
    result = await night.run()
    assert result.status == "finished", result.message
    [branch] = repo.staged_branches()
    [commit] = repo.diff(branch.name).evidence
    sources = commit.trailers["Source-Sessions"]
    assert f"claude:s00-{ACCENT}\ufffd" in sources
    tasks = json.loads((tmp_path / "state" / "tasks.json").read_text(encoding="utf-8"))
    assert tasks["tasks"] and all("\\ud83d" not in json.dumps(t) for t in tasks["tasks"])
