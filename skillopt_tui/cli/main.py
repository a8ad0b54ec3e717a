"""The `skillopt` command. Keep this module light: `skillopt --help` must start fast, so
heavy libraries (textual, openai, anthropic, git) are imported inside the commands."""

from __future__ import annotations

import sys

import typer

from skillopt_tui import __version__

app = typer.Typer(
    name="skillopt",
    help="Optimise Markdown skill documents for LLM agents; review every change in git.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillopt {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Exit codes: 0 success, 1 the work itself failed, 2 bad input (config, file, usage)."""


def _register() -> None:
    from skillopt_tui.cli import commands

    commands.register(app)


def main() -> None:
    from core.errors import UserError
    from core.secrets import redact

    _register()
    try:
        app()
    except UserError as exc:
        print(f"skillopt: error: {redact(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("skillopt: interrupted", file=sys.stderr)
        sys.exit(130)
