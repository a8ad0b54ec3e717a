"""`skillopt sleep init | schedule | unschedule` as a user runs them (subprocesses): projects
as a list with one skills repository in the user's data folder, an init that asks before
it writes, and a cron line that works under cron (its bare environment, `%`, line breaks).
Transcripts are written in Claude Code's recorded format into a private home; nights run
on the scripted TEST DOUBLE (tests/sleep/night_double.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sleep.state.schedule import marker
from tests.skillopt_tui.cli.test_sleep_night_cmds import BRAIN, REPO, run, write_transcripts
from tests.support.sleep_settings import lower_min_val_tasks

NOTES = "# Notes\n\nKeep answers short.\n"


def git(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=Dev", "-c", "user.email=dev@example.com"]
    done = subprocess.run(
        ["git", "-C", str(cwd), *ident, *args], capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "night.yaml"
    roles = {r: {"backend": "scripted", "model": BRAIN} for r in ("target", "optimizer", "judge")}
    train = {"epochs": 1, "strategy": "llm", "gate": {"metric": "soft"},
             "schedule": {"kind": "constant", "start": 2, "end": 2},
             "slow_update": {"enabled": False}, "meta_skill": {"enabled": False}}  # fmt: skip
    config.write_text(json.dumps({"models": roles, "train": train}))
    env = {
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "PATH": "/usr/bin:/bin",
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "LANG": "C.UTF-8",
    }
    return {
        "env": env,
        "home": home,
        "tmp": tmp_path,
        "config": config,
        "state": tmp_path / "xdg-state" / "skillopt" / "sleep",
        "skills": tmp_path / "xdg-data" / "skillopt" / "skills",
    }


def project(world, name: str, *, transcripts: bool = True) -> Path:
    path = world["tmp"] / "src" / name
    path.mkdir(parents=True)
    (path / "CLAUDE.md").write_text(NOTES)
    if transcripts:
        write_transcripts(world["home"] / ".claude", path)
    return path


# -- init: projects as a list, the skills repository outside them ------------------------


def test_two_projects_recorded_give_two_nights_in_one_shared_repository(world):
    env = world["env"]
    alpha, beta = project(world, "alpha"), project(world, "beta")
    for p in (alpha, beta):
        out = run(env, "sleep", "init", "--project", str(p), "--yes")
        assert out.returncode == 0, out.stderr
    settings = (world["state"] / "sleep.yaml").read_text()
    assert f"projects:\n- {alpha}\n- {beta}\n" in settings
    assert f"skills_repo: {world['skills']}\n" in settings
    lower_min_val_tasks(world["state"])  # each project's few sessions: fewer than six held out

    plan = run(env, "sleep", "dry-run", "--config", str(world["config"]), "--json")
    assert plan.returncode == 0, plan.stderr  # tonight's plan covers both projects
    planned = json.loads(plan.stdout)["nights"]
    assert [[r["skill"] for r in n["skills"]] for n in planned] == [["alpha"], ["beta"]]
    night = run(env, "sleep", "run", "--config", str(world["config"]), "--json")
    assert night.returncode == 0, night.stderr
    nights = json.loads(night.stdout)["nights"]
    assert [n["night_id"] for n in nights] == [n["night_id"] for n in planned]
    assert [n["status"] for n in nights] == ["finished", "finished"]
    staged = [
        n["skills"][name]["staged"] for n, name in zip(nights, ("alpha", "beta"), strict=True)
    ]
    day = nights[0]["night_id"].removeprefix("sleep-").removesuffix("-alpha")
    assert staged == [f"staged/sleep-{day}-alpha-alpha", f"staged/sleep-{day}-beta-beta"]
    branches = git(world["skills"], "branch", "--list", "staged/*").split()
    assert sorted(branches) == sorted(b for b in staged)  # one repository holds both

    only = run(env, "sleep", "run", "--project", str(beta), "--config", str(world["config"]))
    assert only.returncode == 0, only.stderr
    assert f"night sleep-{day}-beta-2," in only.stderr and "alpha" not in only.stderr


def test_init_with_defaults_leaves_the_projects_git_status_clean(world):
    p = project(world, "tidy", transcripts=False)
    git(p, "init", "-q", "-b", "main")
    git(p, "add", "-A")
    git(p, "commit", "-q", "-m", "start")
    out = run(world["env"], "sleep", "init", "--project", str(p), "--yes")
    assert out.returncode == 0, out.stderr
    assert git(p, "status", "--porcelain", "--ignored") == ""
    assert (world["skills"] / "tidy" / "SKILL.md").read_text() == NOTES


def test_init_refused_or_at_end_of_input_writes_nothing(world):
    p = project(world, "asked", transcripts=False)
    before = sorted(world["tmp"].rglob("*"))
    eof = run(world["env"], "sleep", "init", "--project", str(p), input="")
    assert eof.returncode == 1 and eof.stdout.splitlines()[-1] == "nothing written"
    refused = run(world["env"], "sleep", "init", "--project", str(p), input="n\n")
    assert refused.returncode == 0 and "nothing written" in refused.stdout
    assert sorted(world["tmp"].rglob("*")) == before  # no state, no skills repository


def test_init_into_a_state_dir_that_is_a_file_is_refused_before_anything_is_written(world):
    p = project(world, "early", transcripts=False)
    state = world["tmp"] / "state-file"
    state.write_text("not a folder\n")
    out = run(
        world["env"], "sleep", "init", "--project", str(p), "--yes", "--state-dir", str(state)
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a directory" in out.stderr
    assert not world["skills"].exists() and state.read_text() == "not a folder\n"


def test_init_records_the_agent_homes_and_finds_the_user_skills_under_claude_home(world):
    """`sleep init --claude-home` (and the other home flags) like the other sleep commands:
    recorded for every later night, the user skills found there, not under ~/.claude."""
    p = project(world, "homes", transcripts=False)
    claude = world["tmp"] / "claude-elsewhere"
    (claude / "skills" / "review").mkdir(parents=True)
    (claude / "skills" / "review" / "SKILL.md").write_text("# Review\n\nRead the diff.\n")
    (world["home"] / ".claude" / "skills" / "stale").mkdir(parents=True)
    (world["home"] / ".claude" / "skills" / "stale" / "SKILL.md").write_text("# Stale\n")
    pi = world["tmp"] / "pi-agent"
    out = run(world["env"], "sleep", "init", "--project", str(p), "--yes",
              "--claude-home", str(claude), "--pi-home", str(pi))  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "added review" in out.stdout and "stale" not in out.stdout
    settings = (world["state"] / "sleep.yaml").read_text()
    assert f"claude_home: {claude}\n" in settings and f"pi_home: {pi}\n" in settings


def test_init_with_a_claude_home_that_is_a_file_writes_nothing(world):
    p = project(world, "filehome", transcripts=False)
    bad = world["tmp"] / "claude-file"
    bad.write_text("x")
    out = run(
        world["env"], "sleep", "init", "--project", str(p), "--yes", "--claude-home", str(bad)
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "--claude-home" in out.stderr and "not a directory" in out.stderr
    assert not world["state"].exists() and not world["skills"].exists()


def test_skill_names_keep_non_ascii_letters(world):
    p = project(world, "ünïcode-proj", transcripts=False)
    out = run(world["env"], "sleep", "init", "--project", str(p), "--yes")
    assert out.returncode == 0, out.stderr
    assert "added ünïcode-proj" in out.stdout
    assert (world["skills"] / "ünïcode-proj" / "SKILL.md").read_text() == NOTES


def test_a_settings_file_of_one_project_loads_and_init_adds_to_it(world):
    old, new = project(world, "old", transcripts=False), project(world, "new", transcripts=False)
    assert run(world["env"], "sleep", "init", "--project", str(old), "--yes").returncode == 0
    path = world["state"] / "sleep.yaml"
    path.write_text(path.read_text().replace(f"projects:\n- {old}\n", f"project: {old}\n"))
    status = run(world["env"], "sleep", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["settings"]["projects"] == [str(old)]
    assert run(world["env"], "sleep", "init", "--project", str(new), "--yes").returncode == 0
    assert f"projects:\n- {old}\n- {new}\n" in path.read_text()


# -- schedule ----------------------------------------------------------------------------


def cron_command(line: str) -> str:
    """What cron hands to /bin/sh for a crontab line (crontab(5)): the sixth field on;
    `\\%` is a literal `%`, and the first bare `%` ends the command (the rest is stdin)."""
    field = line.split(" ", 5)[5]
    out, i = [], 0
    while i < len(field):
        if field.startswith("\\%", i):
            out.append("%")
            i += 2
        elif field[i] == "%":
            break
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def test_schedule_declined_exits_0_and_end_of_input_installs_nothing(world):
    crontab = world["tmp"] / "crontab"
    crontab.write_text("0 1 * * * echo keep me\n")
    args = ["sleep", "schedule", "--crontab-file", str(crontab)]
    declined = run(world["env"], *args, input="n\n")
    assert declined.returncode == 0, declined.stderr
    assert declined.stdout.splitlines()[-1].endswith("nothing installed")
    eof = run(world["env"], *args, input="")
    assert eof.returncode == 1 and eof.stdout.splitlines()[-1] == "nothing installed"
    assert crontab.read_text() == "0 1 * * * echo keep me\n"


def test_status_sees_the_line_installed_in_a_crontab_file_and_unschedule_finds_it(world):
    env, crontab = world["env"], world["tmp"] / "crontab"
    out = run(env, "sleep", "schedule", "--crontab-file", str(crontab), "--yes")
    assert out.returncode == 0, out.stderr
    [line] = crontab.read_text().splitlines()
    status = run(env, "sleep", "status", "--json")
    assert json.loads(status.stdout)["scheduled"] == line
    assert f"scheduled: {line}" in run(env, "sleep", "status").stdout
    gone = run(env, "sleep", "unschedule")  # no flag: where schedule put it
    assert gone.returncode == 0 and "removed 1 line" in gone.stdout
    assert crontab.read_text() == ""
    assert "scheduled: no" in run(env, "sleep", "status").stdout


def test_the_cron_line_runs_under_cron_with_the_homes_in_use_and_a_percent_path(world):
    """A user whose transcripts are under $CLAUDE_CONFIG_DIR schedules; cron then runs the
    line with a bare environment. The night must read the same transcripts."""
    env = dict(world["env"])
    claude = world["tmp"] / "elsewhere" / "claude"
    env["CLAUDE_CONFIG_DIR"] = str(claude)
    state = world["tmp"] / "state-100%-mine"
    p = project(world, "cronned", transcripts=False)
    write_transcripts(claude, p)
    common = ["--state-dir", str(state)]
    assert run(env, "sleep", "init", "--project", str(p), "--yes", *common).returncode == 0
    lower_min_val_tasks(state)  # the few sessions give fewer than six held-out tasks
    shown = run(env, "sleep", "schedule", "--print", *common)
    assert shown.returncode == 0, shown.stderr
    [line] = shown.stdout.splitlines()
    assert "\\%" in line and f"--claude-home {claude}" in line
    cron_env = {k: env[k] for k in ("HOME", "PATH", "PYTHONPATH", "LANG")}  # no CLAUDE_CONFIG_DIR
    done = subprocess.run(["/bin/sh", "-c", cron_command(line)], env=cron_env, timeout=300)
    assert done.returncode == 3  # the handoff night waits for answers: it ran, and read
    [night] = (state / "nights").iterdir()
    assert len(json.loads((night / "sessions.json").read_text())["sessions"]) == 10
    assert "night sleep-" in (state / "cron.log").read_text()


def test_a_state_dir_with_a_line_break_is_refused_and_an_old_split_line_goes_whole(world):
    env, crontab = world["env"], world["tmp"] / "crontab"
    keep = "0 1 * * * echo keep me\n"
    crontab.write_text(keep)
    state = world["tmp"] / "two\nlines"
    out = run(env, "sleep", "schedule", "--crontab-file", str(crontab), "--state-dir", str(state), "--yes")  # fmt: skip
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "line break" in out.stderr
    assert crontab.read_text() == keep
    # what an older version wrote for this state dir: one line split in three
    old = (f"15 4 * * * /x/bin/skillopt sleep run --state-dir '{state}' >> "
           f"'{state}/cron.log' 2>&1 {marker(state)}")  # fmt: skip
    crontab.write_text(keep + old + "\n0 2 * * * echo keep too\n")
    gone = run(env, "sleep", "unschedule", "--crontab-file", str(crontab), "--state-dir", str(state))  # fmt: skip
    assert gone.returncode == 0, gone.stderr
    assert crontab.read_text() == keep + "0 2 * * * echo keep too\n"


@pytest.mark.parametrize("bad", ["not-utf8", "directory"])
def test_a_crontab_file_that_is_not_text_is_a_one_line_error(world, bad):
    crontab = world["tmp"] / "crontab"
    if bad == "directory":
        crontab.mkdir()
    else:
        crontab.write_bytes(b"0 1 * * * echo \xff\xfe\n")
    before = crontab.read_bytes() if crontab.is_file() else None
    for args in (["schedule", "--yes"], ["unschedule"]):
        out = run(world["env"], "sleep", *args, "--crontab-file", str(crontab))
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
        assert str(crontab) in out.stderr
    assert (crontab.read_bytes() if crontab.is_file() else None) == before


def test_schedule_refuses_a_state_dir_that_is_a_file(world):
    crontab, state = world["tmp"] / "crontab", world["tmp"] / "state-file"
    state.write_text("not a folder\n")
    args = ["--crontab-file", str(crontab), "--state-dir", str(state), "--yes"]
    out = run(world["env"], "sleep", "schedule", *args)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a directory" in out.stderr
    assert not crontab.exists()
