"""Every Sleep command on a bad state directory: one line on stderr, exit 2, nothing on
disk changed (not the state, not the project, not the skills repository, not the
crontab). The state is first made good (a recorded sleep.yaml and a real skills
repository), then broken one way per case, so a command that does not check would get
past its usual "run sleep init first" and show what it does with the bad state.

Most cases run the command in the test's process (World.call: the same entry point, exit
code and stderr); the read-only state runs every command as a real process (as another
user when root), and so does `harvest` on a fifo, under World.run's time limit."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from sleep.state.settings import SleepSettings, save_settings
from tests.sleep.cli_world import World, make_world, one_line_error

NOBODY = 65534


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root`: kind, mode and content digest (symlinks by target)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                out[str(path)] = ("file", st.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
            else:
                out[str(path)] = ("other", st.st_mode)
    return out


@pytest.fixture
def world():
    # Under a folder any user can enter: the read-only cases run the CLI as nobody when
    # the tests run as root (root writes through permission bits).
    root = Path(tempfile.mkdtemp(prefix="sleep-hostile-", dir="/tmp"))
    os.chmod(root, 0o755)
    w = make_world(root)
    repo = root / "skills"
    claude_md = w.project / "CLAUDE.md"
    SkillsRepo.init(repo).add_skill("proj", claude_md.read_text(), deploy_to=str(claude_md))
    w.state.mkdir(parents=True)
    save_settings(w.state, SleepSettings(project=str(w.project), skills_repo=str(repo),
                                         backend="handoff"))  # fmt: skip
    (root / "crontab").write_text("0 1 * * * echo keep me\n")
    yield w
    shutil.rmtree(root, ignore_errors=True)


def _replace_with_file(w: World) -> str:
    shutil.rmtree(w.state)
    w.state.write_text("not a folder\n")
    return "is a file, not a directory"


def _inside_a_file(w: World) -> str:
    shutil.rmtree(w.state)
    w.state.parent.joinpath("sleep").write_text("x")
    w.state = w.state / "deeper"
    return "not a directory"


def _dangling(w: World) -> str:
    shutil.rmtree(w.state)
    w.state.symlink_to(w.root / "gone")
    return "dangling symlink"


def _read_only(w: World) -> str:
    if os.geteuid() == 0:
        for dirpath, dirnames, filenames in os.walk(w.root):
            for name in [".", *dirnames, *filenames]:
                os.lchown(Path(dirpath) / name, NOBODY, NOBODY)
    os.chmod(w.state, 0o555)
    return "read-only"


def _dir_named(name: str) -> Callable[[World], str]:
    def make(w: World) -> str:
        (w.state / name).mkdir()
        (w.state / name / "keep").write_text("x")
        return f"{name} is a directory"

    make.__name__ = f"{name}_is_a_directory"
    return make


def _nights_a_file(w: World) -> str:
    (w.state / "nights").write_text("x")
    return "nights is a file"


BREAKS = {
    "state-is-a-file": _replace_with_file,
    "state-inside-a-file": _inside_a_file,
    "state-dangling-symlink": _dangling,
    "state-read-only": _read_only,
    "night.lock-dir": _dir_named("night.lock"),
    "harvest.lock-dir": _dir_named("harvest.lock"),
    "harvest-state-dir": _dir_named("harvest-state.json"),
    "tasks.json-dir": _dir_named("tasks.json"),
    "nights-a-file": _nights_a_file,
}


def commands(w: World) -> dict[str, list[str]]:
    s, p, r, c = str(w.state), str(w.project), str(w.root / "skills"), str(w.root / "crontab")
    return {
        "harvest": ["sleep", "harvest", "--project", p, "--state-dir", s],
        "harvest-json": ["sleep", "harvest", "--project", p, "--state-dir", s, "--json"],
        "init": ["sleep", "init", "--project", p, "--skills-repo", r, "--yes", "--state-dir", s],
        "dry-run": ["sleep", "dry-run", "--project", p, "--skills-repo", r, "--state-dir", s],
        "run": ["sleep", "run", "--project", p, "--skills-repo", r, "--state-dir", s],
        "status": ["sleep", "status", "--state-dir", s],
        "status-json": ["sleep", "status", "--json", "--state-dir", s],
        "schedule": ["sleep", "schedule", "--yes", "--crontab-file", c, "--state-dir", s],
        "unschedule": ["sleep", "unschedule", "--crontab-file", c, "--state-dir", s],
    }


COMMANDS = sorted(commands(World(Path("/"), Path("/"), Path("/"), Path("/"), {})))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(BREAKS))
def test_bad_state_is_one_line_exit_2_and_nothing_changed(world, case, command):
    expected = BREAKS[case](world)
    prefix = ()
    if case == "state-read-only" and os.geteuid() == 0:
        prefix = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    before = snapshot(world.root)
    if case == "state-read-only":
        out = world.run(*commands(world)[command], prefix=prefix)
    else:
        out = world.call(*commands(world)[command])
    if case == "state-read-only" and command in READS_ONLY:
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    else:
        error = one_line_error(out)
        assert expected in error
    assert snapshot(world.root) == before


# What works on a read-only state: it writes nothing there.
READS_ONLY = {"dry-run", "status", "status-json", "unschedule"}


def _tonight(w: World) -> Path:
    folder = w.state / "nights" / f"sleep-{dt.date.today().isoformat()}"
    folder.mkdir(parents=True)
    return folder


NIGHT_JSON = {
    "a-list": "[]",
    "no-skills": json.dumps({"night_id": "x", "status": "finished"}),
    "skills-a-list": json.dumps({"night_id": "x", "status": "finished", "skills": []}),
    "not-utf8": b"\xff\xfe{}".decode("latin-1"),
    "a-number": "3",
}


@pytest.mark.parametrize("command", ["run", "dry-run"])
@pytest.mark.parametrize("case", ["a-list", "a-number", "not-utf8"])
def test_a_malformed_night_json_stops_the_night_in_one_line(world, case, command):
    night_json = _tonight(world) / "night.json"
    night_json.write_bytes(NIGHT_JSON[case].encode("latin-1"))
    before = snapshot(world.root)
    out = world.call(*commands(world)[command])
    assert snapshot(world.root) == before
    error = one_line_error(out)
    assert str(night_json) in error


@pytest.mark.parametrize("case", sorted(NIGHT_JSON))
def test_status_lists_a_malformed_night_as_unreadable(world, case):
    """A report, not a night: one bad night.json is shown for what it is, the others
    are still listed (the TUI's Sleep screen reads the same list)."""
    folder = _tonight(world)
    (folder / "night.json").write_bytes(NIGHT_JSON[case].encode("latin-1"))
    good = world.state / "nights" / "sleep-2026-01-01"
    good.mkdir()
    (good / "night.json").write_text(json.dumps({"night_id": good.name, "status": "finished",
                                                 "skills": {}}))  # fmt: skip
    out = world.call("sleep", "status", "--json", "--state-dir", str(world.state))
    assert out.returncode == 0 and out.stderr == "", out.stderr
    nights = {n["night_id"]: n for n in json.loads(out.stdout)["nights"]}
    assert nights[folder.name]["status"] == "unreadable"
    assert nights[good.name]["status"] == "finished"
    text = world.call("sleep", "status", "--state-dir", str(world.state))
    assert text.returncode == 0 and text.stderr == "", text.stderr
    assert f"{folder.name}: unreadable" in text.stdout


FROZEN = {
    "sessions-a-list": ("sessions.json", "[]"),
    "sessions-missing": ("sessions.json", "{}"),
    "sessions-not-objects": ("sessions.json", json.dumps({"sessions": [3, "x"]})),
    "tasks-missing": ("tasks.json", "{}"),
    "tasks-skills-a-list": ("tasks.json", json.dumps({"skills": []})),  # was: nothing to learn
    "tasks-split-not-a-list": ("tasks.json", json.dumps({"skills": {"proj": {"train": 3}}})),
}


@pytest.mark.parametrize("command", ["run", "dry-run"])
@pytest.mark.parametrize("case", sorted(FROZEN))
def test_a_malformed_frozen_input_stops_the_night_in_one_line(world, case, command):
    name, text = FROZEN[case]
    folder = _tonight(world)
    (folder / "night.json").write_text(json.dumps({"night_id": folder.name, "status": "waiting",
                                                   "skills": {}}))  # fmt: skip
    (folder / name).write_text(text)
    if name == "tasks.json":
        (folder / "sessions.json").write_text(json.dumps({"sessions": []}))
    before = snapshot(world.root)
    out = world.call(*commands(world)[command])
    assert snapshot(world.root) == before
    assert str(folder / name) in one_line_error(out)


@pytest.mark.parametrize("target", ["a-file", "a-fifo", "/dev/zero"])
@pytest.mark.parametrize("flag", ["--claude-home", "--codex-home"])
@pytest.mark.parametrize("command", ["harvest", "dry-run", "run"])
def test_a_named_agent_root_that_is_not_a_folder_is_one_line(world, target, flag, command):
    """It used to harvest nothing and say so as if all was well."""
    if target == "a-file":
        path = world.root / "claude-root"
        path.write_text("x")
    elif target == "a-fifo":
        path = world.root / "claude-root"
        os.mkfifo(path)
    else:
        path = Path(target)
    before = snapshot(world.root)
    # A reader could hang on a fifo: that case runs once as a real process, under
    # World.run's time limit (in-process, a hang would meet only pytest's timeout).
    run = world.run if (target, command) == ("a-fifo", "harvest") else world.call
    out = run(*commands(world)[command], flag, str(path))
    assert f"{flag} {path}: not a directory" in one_line_error(out)
    assert snapshot(world.root) == before


@pytest.mark.parametrize("case", ["state-is-a-file", "state-read-only", "night.lock-dir"])
def test_init_on_bad_state_creates_no_skills_repository(world, case):
    """init used to create and commit the project's skills repository, then crash
    writing sleep.yaml."""
    expected = BREAKS[case](world)
    prefix = ()
    if case == "state-read-only" and os.geteuid() == 0:
        prefix = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    before = snapshot(world.root)
    args = ("sleep", "init", "--project", str(world.project), "--yes", "--state-dir",
            str(world.state))  # fmt: skip
    out = world.run(*args, prefix=prefix) if case == "state-read-only" else world.call(*args)
    assert expected in one_line_error(out)
    assert not (world.project / ".skillopt").exists()
    assert snapshot(world.root) == before
