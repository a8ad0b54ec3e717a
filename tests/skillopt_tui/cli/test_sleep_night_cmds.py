"""`skillopt sleep init | dry-run | run | status | schedule | unschedule` as a user runs them
(subprocesses), on Claude Code transcripts written in the recorded format into a private
home, a real skills repository, and the scripted TEST DOUBLE brain (tests/sleep/night_double.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.sleep.night_double import INSTALL_PROMPT, parts_for
from tests.support.sleep_settings import lower_min_val_tasks

SKILLOPT = Path(sys.executable).parent / "skillopt"
REPO = Path(__file__).resolve().parents[3]
BRAIN = "tests.sleep.night_double:brain"


def user_record(text: str, cwd: Path, session: str, when: str, parent: str | None) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": str(uuid.uuid4()),
        "timestamp": when,
        "userType": "external",
        "entrypoint": "cli",
        "promptSource": "typed",
        "cwd": str(cwd),
        "sessionId": session,
        "version": "2.1.328",
        "gitBranch": "main",
    }


def write_transcripts(claude_home: Path, project: Path) -> None:
    """Ten sessions, at least three of whose tasks are held out (the handoff tests answer
    three waiting prompts differently)."""
    folder = claude_home / "projects" / str(project).replace("/", "-")
    folder.mkdir(parents=True)
    for i, part in enumerate(parts_for(project, 10, val=3)):
        session = str(uuid.UUID(int=i + 1))
        prompts = [
            INSTALL_PROMPT.format(part=part),
            "no, use pnpm instead of npm",
            f"explain what the {part} module is for",
        ]
        parent = None
        lines = []
        for k, text in enumerate(prompts):
            record = user_record(
                text, project, session, f"2026-11-{10 + i:02d}T10:0{k}:00Z", parent
            )
            parent = record["uuid"]
            lines.append(json.dumps(record))
        (folder / f"{session}.jsonl").write_text("\n".join(lines) + "\n")


def run(env: dict, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SKILLOPT), *args], env=env, capture_output=True, text=True, input=input, timeout=300
    )


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "proj"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Notes\n\nKeep answers short.\n")
    write_transcripts(home / ".claude", project)
    config = tmp_path / "night.yaml"
    roles = {
        r: {"backend": "scripted", "model": BRAIN}
        for r in ("target", "optimizer", "judge", "miner")
    }
    config.write_text(
        json.dumps(
            {
                "models": roles,
                "train": {
                    "epochs": 1,
                    "strategy": "llm",
                    "gate": {"metric": "soft"},
                    "schedule": {"kind": "constant", "start": 2, "end": 2},
                    "slow_update": {"enabled": False},
                    "meta_skill": {"enabled": False},
                },
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        HOME=str(home),
        PYTHONPATH=str(REPO),
        XDG_STATE_HOME=str(tmp_path / "xdg"),
        PATH="/usr/bin:/bin",
    )
    env.pop("CLAUDE_CONFIG_DIR", None)
    return {"env": env, "project": project, "config": config, "tmp": tmp_path, "home": home}


def test_init_then_a_night_stages_a_branch_and_status_reports_it(world):
    env, project = world["env"], world["project"]
    out = run(env, "sleep", "init", "--project", str(project), "--yes")
    assert out.returncode == 0, out.stderr
    assert "proj" in out.stdout and str(project / "CLAUDE.md") in out.stdout
    assert "backend handoff" in out.stdout  # no key, no agent CLI on this PATH
    settings = (world["tmp"] / "xdg" / "skillopt" / "sleep" / "sleep.yaml").read_text()
    assert f"projects:\n- {project}\n" in settings
    state = world["tmp"] / "xdg" / "skillopt" / "sleep"
    lower_min_val_tasks(state)  # the world's few sessions give fewer than six held-out tasks

    dry = run(env, "sleep", "dry-run", "--config", str(world["config"]), "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    [route] = plan["skills"]
    assert route["skill"] == "proj" and route["sessions"] == 10
    assert route["train"] + route["val"] == 20 and route["val"] > 0
    assert "judge" in plan["estimate"]["proj"]
    state = world["tmp"] / "xdg" / "skillopt" / "sleep"
    assert not (state / "nights").exists()  # a dry run writes nothing

    night = run(env, "sleep", "run", "--config", str(world["config"]), "--json")
    assert night.returncode == 0, night.stderr
    assert "backend scripted" in night.stderr  # the choice is printed; the config's wins over auto
    result = json.loads(night.stdout)
    assert result["status"] == "finished"
    staged = result["skills"]["proj"]["staged"]
    assert staged.startswith("staged/sleep-") and staged.endswith("-proj")
    skills = world["home"] / ".local" / "share" / "skillopt" / "skills"  # outside the project
    diff = run(env, "skills", "diff", staged, "--repo", str(skills), "--json")
    assert diff.returncode == 0, diff.stderr
    assert "Use pnpm" in json.dumps(json.loads(diff.stdout)["hunks"])
    assert (project / "CLAUDE.md").read_text() == "# Notes\n\nKeep answers short.\n"

    again = run(env, "sleep", "run", "--config", str(world["config"]), "--json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert second["night_id"].endswith("-2")  # the finished night's id is not reused
    assert second["skills"] == {} and "no new sessions" in second["message"]

    status = run(env, "sleep", "status", "--json")
    assert status.returncode == 0, status.stderr
    nights = json.loads(status.stdout)["nights"]
    assert {n["night_id"] for n in nights} == {result["night_id"], second["night_id"]}


def test_handoff_night_waits_with_exit_3_and_names_the_folder(world):
    env, project = world["env"], world["project"]
    assert run(env, "sleep", "init", "--project", str(project), "--yes").returncode == 0
    state = world["tmp"] / "xdg" / "skillopt" / "sleep"
    lower_min_val_tasks(state)  # the world's few sessions give four held-out tasks
    out = run(env, "sleep", "run")
    assert out.returncode == 3, out.stderr
    assert "handoff" in out.stdout and "prompts" in out.stdout
    [folder] = (state / "nights").iterdir()
    prompts = list((folder / "handoff" / "prompts").glob("*.md"))
    assert prompts and all("----- user -----" in p.read_text() for p in prompts)


def test_schedule_and_unschedule_touch_only_our_line(world):
    env = world["env"]
    crontab = world["tmp"] / "crontab"
    crontab.write_text("0 1 * * * echo keep me\n")
    shown = run(
        env, "sleep", "schedule", "--at", "04:15", "--crontab-file", str(crontab), input="n\n"
    )
    assert shown.returncode == 0 and shown.stdout.splitlines()[-1].endswith("nothing installed")
    assert crontab.read_text() == "0 1 * * * echo keep me\n"
    out = run(env, "sleep", "schedule", "--at", "04:15", "--crontab-file", str(crontab), "--yes")
    assert out.returncode == 0, out.stderr
    lines = crontab.read_text().splitlines()
    assert lines[0] == "0 1 * * * echo keep me" and lines[1].startswith("15 4 * * * ")
    assert "sleep run --state-dir" in lines[1] and "# skillopt-sleep:" in lines[1]
    twice = run(env, "sleep", "schedule", "--at", "05:00", "--crontab-file", str(crontab), "--yes")
    assert twice.returncode == 0 and len(crontab.read_text().splitlines()) == 2
    gone = run(env, "sleep", "unschedule", "--crontab-file", str(crontab))
    assert gone.returncode == 0 and "removed 1 line" in gone.stdout
    assert crontab.read_text() == "0 1 * * * echo keep me\n"
    bad = run(env, "sleep", "schedule", "--at", "25:00", "--crontab-file", str(crontab), "--yes")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_run_without_init_is_a_one_line_error(world):
    out = run(world["env"], "sleep", "run", "--project", str(world["project"]))
    assert out.returncode == 2
    assert "sleep init" in out.stderr and out.stderr.count("\n") == 1


def test_backend_flag_overrides_the_night_config_for_one_night(world):
    env, project = world["env"], world["project"]
    assert run(env, "sleep", "init", "--project", str(project), "--yes").returncode == 0
    plain = run(env, "sleep", "dry-run", "--config", str(world["config"]), "--json")
    assert json.loads(plain.stdout)["backend"] == "scripted"
    flagged = run(
        env, "sleep", "dry-run", "--config", str(world["config"]), "--backend", "local", "--json"
    )
    assert flagged.returncode == 0, flagged.stderr
    assert json.loads(flagged.stdout)["backend"] == "local"
    settings = (world["tmp"] / "xdg" / "skillopt" / "sleep" / "sleep.yaml").read_text()
    assert "backend: handoff" in settings  # what init recorded, not changed by the flag


def write_pi_sessions(pi_home: Path, project: Path, n: int) -> None:
    """pi 0.73.1's session shape (tests/sleep/fixtures/real/pi): a header, then a tree."""
    folder = pi_home / "sessions" / ("--" + str(project).strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True)
    for i, part in enumerate(parts_for(project, n)):
        sid = str(uuid.UUID(int=100 + i))
        lines = [{"type": "session", "version": 3, "id": sid, "cwd": str(project),
                  "timestamp": f"2026-11-{10 + i:02d}T09:00:00Z"}]  # fmt: skip
        parent = None
        for k, text in enumerate([INSTALL_PROMPT.format(part=part), "no, use pnpm instead of npm"]):
            entry = {"type": "message", "id": f"{i:02d}{k:06d}", "parentId": parent,
                     "timestamp": f"2026-11-{10 + i:02d}T10:0{k}:00Z",
                     "message": {"role": "user", "content": [{"type": "text", "text": text}]}}  # fmt: skip
            parent = entry["id"]
            lines.append(entry)
        (folder / f"2026-11-{10 + i:02d}_{sid}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines)
        )


def test_dry_run_with_pi_home_routes_pi_sessions_to_the_agents_md_skill(world):
    env, project = world["env"], world["project"]
    (project / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n")
    assert run(env, "sleep", "init", "--project", str(project), "--yes").returncode == 0
    pi_home = world["tmp"] / "pi-agent"
    write_pi_sessions(pi_home, project, 4)
    dry = run(env, "sleep", "dry-run", "--config", str(world["config"]), "--json",
              "--pi-home", str(pi_home))  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    routes = {r["skill"]: r for r in json.loads(dry.stdout)["skills"]}
    [agents] = [r for r in routes.values() if "pi reads AGENTS.md" in r["routed_by"]]
    assert agents["sessions"] == 4 and agents["skill"] != "proj"
    assert routes["proj"]["sessions"] == 10  # Claude's stay with CLAUDE.md
