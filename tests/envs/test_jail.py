"""The jail's availability: without bubblewrap (simulated by a PATH without `bwrap`) the
spreadsheetbench environment refuses in one line to run generated programs, unless the
user names the weaker mode `sandbox: audit-hook-only`; then it says so and runs them under
the audit hook. The jail itself is probed by really starting this interpreter in it."""

import shutil
import subprocess
import sys

import pytest

from core.config import EnvConfig
from core.environment.contract import EnvError
from envs import get_environment
from envs.jail import AUDIT_HOOK_ONLY, jail_problem

openpyxl = pytest.importorskip("openpyxl")


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    """A PATH holding only this Python, so `bwrap` is not found."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert shutil.which("bwrap") is None
    return bin_dir


def spreadsheetbench(tmp_path, **options):
    return get_environment(
        EnvConfig(name="spreadsheetbench", data_dir=str(tmp_path / "data"), options=options)
    )


def test_without_bubblewrap_generated_programs_are_refused_in_one_line(no_bwrap, tmp_path):
    with pytest.raises(EnvError) as refused:
        spreadsheetbench(tmp_path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("spreadsheetbench: bubblewrap (bwrap) is not installed")
    assert "apt install bubblewrap" in message and f"sandbox: {AUDIT_HOOK_ONLY}" in message


def test_the_cli_refuses_with_exit_2_and_no_traceback(no_bwrap, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "skillopt_tui", "train", "--config",
         "configs/spreadsheetbench/default.yaml", "--set", f"env.data_dir={tmp_path}",
         "--set", f"run.runs_dir={tmp_path / 'runs'}"],
        capture_output=True, text=True, timeout=120, env={"PATH": str(no_bwrap)},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_the_weaker_mode_by_name_says_so_and_runs_under_the_hook(no_bwrap, tmp_path, caplog):
    from envs.spreadsheetbench.sandbox import Limits, run_program
    from tests.envs.benchmarks.fixtures import workbook

    env = spreadsheetbench(tmp_path, sandbox=AUDIT_HOOK_ONLY)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and AUDIT_HOOK_ONLY in warned[0] and "\n" not in warned[0]
    assert env.options["sandbox"] == AUDIT_HOOK_ONLY
    workbook(tmp_path / "in.xlsx", with_sums=False)
    code = "import openpyxl\nopenpyxl.load_workbook('input.xlsx').save('output.xlsx')\n"
    result = run_program(code, tmp_path / "in.xlsx", tmp_path / "o", Limits(10.0), AUDIT_HOOK_ONLY)
    assert result.ok, result.stderr
    outside = run_program(
        "print(open('/etc/passwd').read())", tmp_path / "in.xlsx", tmp_path / "o2", Limits(10.0),
        AUDIT_HOOK_ONLY,
    )  # fmt: skip
    assert "sandbox: reading outside the working directory" in outside.stderr


def test_an_unknown_sandbox_mode_is_a_clear_error(tmp_path):
    with pytest.raises(EnvError, match="env.options.sandbox must be one of bubblewrap"):
        spreadsheetbench(tmp_path, sandbox="none")


def test_bubblewrap_really_jails_this_interpreter_here():
    """This machine (and CI) has bubblewrap; the probe starts Python in the jail."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    assert jail_problem() == ""
