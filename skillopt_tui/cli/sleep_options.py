"""The options the sleep commands share, declared once: each is one field of `SleepFlags`
or of its `AgentHomes` (type, flag, metavar, help and default in one place). A command
names the ones it takes with `@takes_flags(...)` and receives them as one `SleepFlags` in
its `flags` parameter; its own options stay ordinary parameters around it. `--help` lists
them where `flags` stands, in the order named."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer


def _flag(name: str, metavar: str | None, help: str, default: Any = None) -> Any:
    option = typer.Option(name, metavar=metavar, help=help)
    return field(default=default, metadata={"option": option})


# One row an option: type, flag, metavar, help (and a default other than None).
# fmt: off
@dataclass(frozen=True)
class AgentHomes:
    """The agents' home folders given (comma-separated; None: the recorded or default
    ones), named as the settings and HarvestOptions name them."""

    claude_home: str | None = _flag("--claude-home", "DIR", "Claude Code root(s), comma-separated.")
    codex_home: str | None = _flag("--codex-home", "DIR", "Codex root.")
    pi_home: str | None = _flag("--pi-home", "DIR", "pi's agent folder (default ~/.pi/agent).")
    opencode_data: str | None = _flag("--opencode-data", "DIR", "OpenCode's data folder or opencode.db (default ~/.local/share/opencode).")
    copilot_home: str | None = _flag("--copilot-home", "DIR", "Copilot CLI's folder (default ~/.copilot).")
    vscode_user_dir: str | None = _flag("--vscode-user-dir", "DIR", "VS Code user-data folder(s), comma-separated (default: Code, Code - Insiders).")
    cursor_home: str | None = _flag("--cursor-home", "DIR", "Cursor's folder (default ~/.cursor).")

    def given(self) -> dict[str, str | None]:
        return asdict(self)


@dataclass(frozen=True)
class SleepFlags:
    """What the user said on the command line (None: not given, the recorded setting holds)."""

    project: Path | None = _flag("--project", "PATH", "The project (default: recorded by init, else the current directory).")
    skills_repo: Path | None = _flag("--skills-repo", "PATH", "The skills repository (default: recorded by init).")
    skill: str | None = _flag("--skill", "NAME", "Improve only this skill (default: route by transcripts).")
    backend: str | None = _flag("--backend", "NAME", "auto, handoff, or any model backend (openai, anthropic, claude_code, codex, ...).")
    homes: AgentHomes = AgentHomes()
    config: Path | None = _flag("--config", "FILE", "A run config for the night (models, budget).")
    set_: list[str] | None = _flag("--set", "KEY=VALUE", "Override a config key, or a sleep setting for this night only (sleep.min_val_tasks=2).")
    include_automation: bool = _flag("--include-automation", None, "Also mine sessions no person typed in.", False)
# fmt: on


HOMES = tuple(f.name for f in fields(AgentHomes))
MORE_HOMES = HOMES[2:]  # those after Claude Code's and Codex's
# What run and dry-run both take.
NIGHT_FLAGS = ("project", "skills_repo", "skill", "backend", *HOMES, "config", "set_",
               "include_automation")  # fmt: skip


def _option(name: str) -> inspect.Parameter:
    """The typer parameter of one declared option."""
    cls = AgentHomes if name in HOMES else SleepFlags
    declared = next(f for f in fields(cls) if f.name == name)
    kind = Annotated[get_type_hints(cls)[name], declared.metadata["option"]]
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=declared.default
    )


def takes_flags(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The command's `flags: SleepFlags` parameter becomes the options `names`, in this
    order, for typer; the command is called with them gathered into one SleepFlags."""
    options = [_option(name) for name in names]

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        at = [p.name for p in own].index("flags")
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        params[at : at + 1] = options

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            typed = {name: given.pop(name) for name in names}
            homes = AgentHomes(**{k: typed.pop(k) for k in HOMES if k in typed})
            return command(flags=SleepFlags(homes=homes, **typed), **given)

        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return wrap
