"""Which command modules make up the CLI. Each module owns one group of commands and
exposes `register(app)`; none imports a heavy library at module level."""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES = (
    "skillopt_tui.cli.train_cmds",  # train, eval
    "skillopt_tui.cli.runs_cmds",  # runs, runs show
    "skillopt_tui.cli.research_cmds",  # compare, report
    "skillopt_tui.cli.skills_cmds",  # init, skills ...
    "skillopt_tui.cli.tui_cmd",  # tui
    "skillopt_tui.cli.sleep_cmds",  # sleep harvest
    "skillopt_tui.cli.sleep_night_cmds",  # sleep run, dry-run, status
    "skillopt_tui.cli.sleep_setup_cmds",  # sleep init, schedule, unschedule
    "skillopt_tui.cli.sleep_handoff_cmd",  # sleep handoff
    "skillopt_tui.cli.mcp_cmd",  # mcp
    "skillopt_tui.cli.integrations_cmds",  # integrations list, install, uninstall
    "skillopt_tui.cli.envs_cmds",  # envs, data materialize
)


def register(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
