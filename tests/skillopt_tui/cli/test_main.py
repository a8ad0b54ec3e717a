"""The `skillopt` entry point: version, help, and a fast start (heavy imports are lazy)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from skillopt_tui import __version__
from tests.support.cli_in_process import run_main

SKILLOPT = Path(sys.executable).parent / "skillopt"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SKILLOPT), *args], capture_output=True, text=True, timeout=60)


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"skillopt {__version__}"


def test_help_lists_the_command_groups():
    result = run("--help")
    assert result.returncode == 0
    for command in ("train", "eval", "runs", "init", "skills", "tui"):
        assert command in result.stdout


def test_registering_all_commands_imports_no_heavy_library():
    probe = (
        "import sys\n"
        "from skillopt_tui.cli.main import _register\n"
        "_register()\n"
        "heavy = ('textual', 'openai', 'anthropic', 'git', 'xllamacpp', 'unidiff', 'httpx', 'mcp')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_user_errors_are_one_line_with_exit_code_2(tmp_path):
    result = run("train", "--config", str(tmp_path / "missing.yaml"))
    assert result.returncode == 2
    assert result.stderr.strip().startswith("skillopt: error:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_sigint_ignored_by_the_parent_is_taken_back():
    """A shell without job control starts background commands with SIGINT ignored; then
    the TUI's Stop (a SIGINT to `skillopt train` / `sleep run`) would do nothing."""
    probe = (
        "import atexit, signal, sys\n"
        "sys.argv = ['skillopt', '--version']\n"
        "atexit.register(lambda: print(signal.getsignal(signal.SIGINT) is "
        "signal.default_int_handler))\n"
        "from skillopt_tui.cli.main import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines()[-1] == "True", done.stdout + done.stderr


def test_main_run_in_process_answers_as_the_real_process_and_again_the_same(tmp_path):
    """tests/support/cli_in_process.py runs main() many times in one process for suites of
    bad inputs, which stand in for real processes only if each run, the first and the
    next (main builds its command tree once per process), answers as a fresh `skillopt`:
    the same exit code, stdout and stderr, for help and for a one-line error."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    missing = str(tmp_path / "missing.yaml")
    for args in (["sleep", "--help"], ["train", "--config", missing]):
        real = subprocess.run(
            [str(SKILLOPT), *args], capture_output=True, text=True, timeout=60, env=env
        )
        first, again = (
            run_main(args, env=env, cwd=tmp_path, argv0=str(SKILLOPT)) for _ in range(2)
        )
        for here in (first, again):
            assert (here.returncode, here.stdout, here.stderr) == (
                real.returncode,
                real.stdout,
                real.stderr,
            )
    assert real.returncode == 2 and "Traceback" not in real.stderr
    assert first.stdout == "" and first.stderr.count("\n") == 1
