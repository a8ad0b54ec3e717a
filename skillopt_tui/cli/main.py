"""The `skillopt` command. Keep this module light: `skillopt --help` must start fast, so
heavy libraries (textual, openai, anthropic, git) are imported inside the commands."""

from __future__ import annotations

import functools
import inspect
import signal
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


def _with_placeholders(command) -> None:
    """Help shows placeholders (FILE, NAME), never typer's `<bool>`/`<str>` type labels: a
    flag shows nothing after its name, a value its name in capitals (or one we chose)."""
    ctx = typer.Context(command, info_name=command.name)
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None or param.metavar.startswith("<"):
            param.metavar = (param.name or "value").upper().replace("_", "-").rstrip("-")
        if param.param_type_name == "argument":  # its panel row shows the type separately
            param.display_type_rich = lambda ctx: ""
    for sub in getattr(command, "commands", {}).values():
        _with_placeholders(sub)


def _with_one_line_summaries(command) -> None:
    """A group's command list shows each command's first paragraph as one sentence: the
    docstring's own line breaks would otherwise break it mid-sentence in the panel
    ("harvest, mine," then "replay, ..." on a line of its own)."""
    for sub in getattr(command, "commands", {}).values():
        if sub.help and not sub.short_help:
            sub.short_help = " ".join(inspect.cleandoc(sub.help).split("\n\n")[0].split())
        _with_one_line_summaries(sub)


@functools.cache
def _root_command():
    """`app` as the click command main() runs, every command registered, built once per
    process: main() can run many times in one (the suite's in-process CLI runs, the
    reference pages), and registering again would add every command a second time and
    make typer inspect all of their signatures again (most of a short command's run)."""
    _register()
    command = typer.main.get_command(app)
    _with_placeholders(command)
    _with_one_line_summaries(command)
    return command


def _usage_line(exc) -> str:
    """A typer/click usage error as one line: its message and where help is."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    where = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
    return f"skillopt: error: {message}{where}"


def _is_help_for_no_args(exc: Exception) -> bool:
    """A group run with no arguments raises a usage error that carries its help (typer has
    already printed it). Told apart by the class's name, not by importing typer's private
    typer/_click module, which typer says may change."""
    return type(exc).__name__ == "NoArgsIsHelpError"


def main() -> None:
    """Run the CLI. Every error is one line on stderr: our UserErrors with their exit code,
    typer's usage errors (exit 2) instead of its boxed multi-line rendering."""
    from core import exit_codes
    from core.errors import UserError
    from core.secrets import redact

    # Started in the background by a shell without job control, a process inherits SIGINT
    # ignored; the TUI's Stop and `kill -INT` (a SIGINT to `skillopt train`, `sleep run`)
    # must still land.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    command = _root_command()
    try:
        code = command.main(prog_name="skillopt", standalone_mode=False)
    except UserError as exc:
        print(f"skillopt: error: {redact(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:  # typer's usage errors (its public base class)
        if _is_help_for_no_args(exc):  # `skillopt` alone, or a group alone
            print(exc.format_message())
            sys.exit(0)
        print(redact(_usage_line(exc)), file=sys.stderr)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        print("skillopt: interrupted", file=sys.stderr)
        sys.exit(exit_codes.INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)
