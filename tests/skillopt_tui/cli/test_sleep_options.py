"""The sleep commands' shared options are declared once (sleep_options.py): each command
still lists them where it did, with the same flags, metavars and help, and receives what
was typed as one SleepFlags."""

from __future__ import annotations

from typing import Annotated

import typer
import typer.main
from typer.testing import CliRunner

from skillopt_tui.cli.main import _root_command
from skillopt_tui.cli.sleep_options import AgentHomes, SleepFlags, takes_flags

HOMES = ["--claude-home", "--codex-home", "--pi-home", "--opencode-data", "--copilot-home",
         "--vscode-user-dir", "--cursor-home"]  # fmt: skip
NIGHT = ["--project", "--skills-repo", "--skill", "--backend", *HOMES, "--config", "--set",
         "--include-automation"]  # fmt: skip
# Each command's options in --help order, as they were before the options were shared.
EXPECTED = {
    "run": [*NIGHT, "--auto-adopt", "--state-dir", "--json"],
    "dry-run": [*NIGHT, "--heuristic-only", "--state-dir", "--json"],
    "init": ["--project", "--skills-repo", "--backend", *HOMES, "--state-dir", "--yes"],
    "harvest": ["--project", "--all-projects", *HOMES, "--since", "--include-automation",
                "--show-redactions", "--mark-read", "--json", "--state-dir"],
}  # fmt: skip


def sleep_command(name: str):
    group = _root_command().commands["sleep"]  # type: ignore[attr-defined]
    return group.commands[name]


def test_each_sleep_command_lists_its_options_in_the_same_order():
    for name, expected in EXPECTED.items():
        params = [p for p in sleep_command(name).params if p.opts[0] != "--help"]
        assert [p.opts[0] for p in params] == expected, name


def test_a_shared_option_reads_the_same_in_every_command():
    seen: dict[str, tuple] = {}
    for name in ("run", "dry-run", "init"):
        for p in sleep_command(name).params:
            if p.opts[0] in NIGHT:
                spec = (p.metavar, p.help, p.default, p.is_flag)
                assert seen.setdefault(p.opts[0], spec) == spec, (name, p.opts[0])
    assert seen["--pi-home"] == ("DIR", "pi's agent folder (default ~/.pi/agent).", None, False)
    assert seen["--set"][0] == "KEY=VALUE" and seen["--include-automation"][3] is True


def test_a_command_gets_what_was_typed_as_one_sleep_flags():
    got = {}
    demo = typer.Typer(add_completion=False)

    @demo.command()
    @takes_flags("skill", "pi_home", "set_", "include_automation")
    def go(
        first: Annotated[int, typer.Option("--first")] = 0,
        flags: SleepFlags = SleepFlags(),  # noqa: B008 - replaced by the options
        last: Annotated[str, typer.Option("--last")] = "",
    ) -> None:
        got.update(first=first, flags=flags, last=last)

    args = ["--first", "3", "--skill", "s", "--pi-home", "/p", "--set", "a=1", "--set", "b=2",
            "--include-automation", "--last", "z"]  # fmt: skip
    result = CliRunner().invoke(demo, args)
    assert result.exit_code == 0, result.output
    assert got["first"] == 3 and got["last"] == "z"
    assert got["flags"] == SleepFlags(
        skill="s", homes=AgentHomes(pi_home="/p"), set_=["a=1", "b=2"], include_automation=True
    )
    params = [p.opts[0] for p in typer.main.get_command(demo).params]
    assert params == ["--first", "--skill", "--pi-home", "--set", "--include-automation", "--last"]

    result = CliRunner().invoke(demo, ["--codex-home", "/c"])  # not one go takes
    assert result.exit_code != 0 and "No such option" in result.output
