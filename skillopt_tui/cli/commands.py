"""Which command modules make up the CLI. Each module owns one group of commands and
exposes `register(app)`."""

from __future__ import annotations

import importlib

import typer

COMMAND_MODULES = (
    "skillopt_tui.cli.train_cmds",  # train, eval, runs
    "skillopt_tui.cli.skills_cmds",  # init, skills ...
    "skillopt_tui.cli.tui_cmd",  # tui
)


def register(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command group not built yet
        module.register(app)
