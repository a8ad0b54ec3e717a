"""A mined check runs with the person's own Python toolchain (sleep/night/check_toolchain.py), in
the real bubblewrap jail: the project's venv (which the replay's fresh checkout lacks) or the
interpreter on the host's PATH is lent read-only at its own path, and nothing else of the
host shows — not the home folder, not the project's files, not the host's environment. A
program found nowhere is not run, and dry-run says so before the night."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sleep.night.check_toolchain import programs, toolchain
from sleep.night.replay_checks import planned_checks, run_command_checks
from tests.support.jail import jail  # noqa: F401 - the fixture

MODULE = "nightprobe_4f2"  # a module no system or pyenv Python has
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def venv(where: Path) -> Path:
    """A real virtualenv at `where` (made from this interpreter) holding MODULE."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    (where / SITE / f"{MODULE}.py").write_text("import sys\nprint('probe ok', sys.prefix)\n")
    return where


@pytest.fixture
def person(tmp_path, monkeypatch):
    """A home (with a secret file) holding the project, whose own .venv holds MODULE, and
    a fresh workspace copied from it without the venv; a secret in the environment."""
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    (home / "secret.txt").write_text("home secret\n")
    (project / "notes.txt").write_text("the person's checkout\n")
    venv(project / ".venv")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SKILLOPT_TEST_SECRET", "sk-host-only-4f2")
    return home, project, workspace


@pytest.mark.usefixtures("jail")
def test_a_check_runs_with_the_projects_own_venv(person):
    _home, project, workspace = person
    [done] = run_command_checks(workspace, [f"python -m {MODULE}"], 60, project)
    assert (done.status, done.exit_code) == ("pass", 0), done.output
    assert done.output == f"probe ok {project / '.venv'}"
    [planned] = planned_checks(
        [{"kind": "command", "value": f"python -m {MODULE}"}], "tools", project
    )
    assert (planned["will_run"], planned["not_run_reason"]) == (True, "")


@pytest.mark.usefixtures("jail")
def test_nothing_outside_the_lent_prefixes_shows(person):
    home, project, workspace = person
    venv_bin = project / ".venv" / "bin"
    results = run_command_checks(
        workspace,
        [
            f"python -m {MODULE} && cat {home}/secret.txt",
            f"python -m {MODULE} >/dev/null; ls -A {project}",
            f"python -m {MODULE} >/dev/null; touch {venv_bin}/written",
            "python -c 'import os; print(sorted(os.environ))'",
        ],
        60,
        project,
    )
    secret, listing, write, environ = results
    assert secret.status == "fail" and "probe ok" in secret.output  # ran, but no secret
    assert "home secret" not in secret.output and "No such file" in secret.output
    assert listing.output == ".venv"  # the project's own files stay out
    assert write.status == "fail" and not (venv_bin / "written").exists()  # read-only
    assert environ.status == "pass"
    assert environ.output == "['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']"


@pytest.mark.usefixtures("jail")
def test_an_interpreter_on_the_host_path_is_lent(person, monkeypatch):
    home, _project, workspace = person
    tools = venv(home / "tools" / "venv")
    monkeypatch.setenv("PATH", f"{tools / 'bin'}:/usr/bin:/bin")
    [done] = run_command_checks(workspace, [f"cd /tmp && python -m {MODULE}"], 60, None)
    assert (done.status, done.output) == ("pass", f"probe ok {tools}")


@pytest.mark.usefixtures("jail")
def test_a_prefix_holding_the_home_folder_is_never_lent(person, monkeypatch):
    home, _project, workspace = person
    venv(home)  # `python -m venv ~`: lending it would show the whole home
    monkeypatch.setenv("PATH", f"{home / 'bin'}:/usr/bin:/bin")
    [done] = run_command_checks(workspace, [f"python -m {MODULE}"], 60, None)
    assert done.status == "not-run" and "holds the home folder" in done.reason
    assert "home secret" not in done.output


@pytest.mark.usefixtures("jail")
def test_a_program_found_nowhere_is_not_run_and_dry_run_says_so(person):
    _home, project, workspace = person
    command = "no-such-prog-4f2 -q"
    [done] = run_command_checks(workspace, [command], 60, project)
    assert (done.status, done.exit_code) == ("not-run", 127)
    assert "`no-such-prog-4f2` is not found on this machine" in done.reason
    [planned] = planned_checks([{"kind": "command", "value": command}], "agent", project)
    assert planned["will_run"] is False and planned["not_run_reason"] == done.reason


@pytest.mark.usefixtures("jail")
def test_a_pyenv_shim_is_lent_as_the_interpreter_it_picks(tmp_path):
    pyenv = shutil.which("pyenv")
    shim = shutil.which("python")
    if not pyenv or not shim or Path(shim).parent.name != "shims":
        pytest.skip("no pyenv shim for python on PATH here")
    real = subprocess.run([pyenv, "prefix"], capture_output=True, text=True, cwd=tmp_path)
    if real.returncode != 0:
        pytest.skip(f"pyenv picks no Python here ({real.stderr.strip()})")
    lent = toolchain("python -V", tmp_path)
    assert lent.path == [f"{real.stdout.strip()}/bin"] and not lent.missing
    script = "import sys; print(sys.base_prefix)"
    [done] = run_command_checks(tmp_path, [f"python -c '{script}'"], 60, tmp_path)
    assert (done.status, done.output) == ("pass", real.stdout.strip())


def test_the_programs_a_command_starts():
    assert programs("python -m pytest -q") == ["python"]
    assert programs("cd sub && FOO=1 pytest -x 2>&1 | tail -5; ./t.sh") == ["pytest", "tail"]
    assert programs("env -i python3 x.py || exec tox") == ["python3", "tox"]
    assert programs("$PY -m pytest; make test") == ["make"]
    assert programs("echo 'unbalanced") == []
