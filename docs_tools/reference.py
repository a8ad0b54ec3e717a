"""The documentation's reference pages, generated from the code at build time.

Nothing here is written twice: the configuration keys come from the config models (each
field's docstring is its help text, core/strict_model.py), the commands and options from
the typer app, the events from core.run.events.EVENT_TYPES, the run-directory files from
core.run.directory.RUN_FILES and the exit codes from core.exit_codes. A new key, command,
event or file appears in the site on the next `make docs`; one without help text fails
the build (and tests/docs/test_reference.py).
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel


class MissingHelp(Exception):
    """A key, command, option or event without the text the reference needs."""


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class ConfigKey:
    """One row of the configuration reference. `paths` are the concrete dotted keys it
    stands for (several when sibling sections share one model, as the model roles do)."""

    shown: str
    paths: tuple[str, ...]
    type: str
    default: str
    help: str
    mapping: bool  # a free mapping (models.prices, env.options): its members are not keys


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is Literal:
        return " | ".join(json.dumps(a) if isinstance(a, str) else str(a) for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join("null" if a is type(None) else _type_name(a) for a in args)
    if origin in (list, tuple):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_type_name(args[1])}" if len(args) > 1 else "mapping"
    if ann is Any:
        return "any"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "section"
    return {int: "int", float: "float", str: "str", bool: "bool"}.get(ann, str(ann))


def _is_section(ann: Any) -> bool:
    return isinstance(ann, type) and issubclass(ann, BaseModel)


def _is_mapping(ann: Any) -> bool:
    return typing.get_origin(ann) is dict


def _show(value: Any) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json")
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return json.dumps(plain(value)) if value is not None else "null"


def config_keys() -> list[ConfigKey]:
    """Every key of the run configuration, walked from a default `Config()` so each default
    is the one a run gets (the model roles' defaults differ: core.config.ROLE_DEFAULTS)."""
    from core.config import Config

    out: list[ConfigKey] = []

    def walk(instances: list[tuple[str, BaseModel]], shown_prefix: str) -> None:
        model = type(instances[0][1])
        for name, field in model.model_fields.items():
            ann = field.annotation
            children = [(f"{p}{name}", getattr(inst, name)) for p, inst in instances]
            if _is_section(ann):
                groups = _sibling_groups(type(getattr(instances[0][1], name)), model, name)
                if groups is not None and name != groups[0]:
                    continue  # listed once with the first sibling
                if groups is not None:
                    siblings = [(f"{p}{g}.", getattr(i, g)) for p, i in instances for g in groups]
                    walk(siblings, f"{shown_prefix}<{'|'.join(groups)}>.")
                else:
                    walk([(f"{p}.", v) for p, v in children], f"{shown_prefix}{name}.")
                continue
            if not field.description:
                raise MissingHelp(
                    f"{shown_prefix}{name} ({model.__module__}.{model.__name__}) has no help "
                    "text: write a docstring under the field"
                )
            defaults = {_show(v) for _, v in children}
            default = (
                defaults.pop()
                if len(defaults) == 1
                else "; ".join(f"{p.split('.')[-2]}: {_show(v)}" for p, v in children)
            )
            out.append(
                ConfigKey(
                    shown=f"{shown_prefix}{name}",
                    paths=tuple(p for p, _ in children),
                    type=_type_name(ann),
                    default=default,
                    help=" ".join(field.description.split()),
                    mapping=_is_mapping(ann),
                )
            )

    walk([("", Config())], "")
    return out


def _sibling_groups(cls: type, parent: type[BaseModel], name: str) -> list[str] | None:
    """The fields of `parent` that share the section model `cls` (the four model roles),
    or None when `cls` appears once."""
    names = [n for n, f in parent.model_fields.items() if f.annotation is cls]
    return names if len(names) > 1 else None


def config_sections() -> dict[str, str]:
    """Each section's dotted name and its model's docstring (the section's help)."""
    from core.config import Config

    out: dict[str, str] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            ann = field.annotation
            if _is_section(ann):
                groups = _sibling_groups(ann, model, name)
                if groups is not None and name != groups[0]:
                    continue
                shown = f"{prefix}<{'|'.join(groups)}>" if groups else f"{prefix}{name}"
                doc = field.description or ann.__doc__ or ""
                if groups:
                    doc = ann.__doc__ or ""
                if not doc.strip():
                    raise MissingHelp(f"section {shown} ({ann.__name__}) has no docstring")
                out[shown] = " ".join(doc.split())
                walk(ann, shown + ".")

    walk(Config, "")
    return out


def _cell(text: str) -> str:
    """Text for a table cell: pipes escaped, and `<...>` outside code spans escaped so
    Markdown does not take `<env>` for an HTML tag."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def config_markdown() -> str:
    keys = config_keys()
    sections = config_sections()
    lines = [
        "# Configuration keys",
        "",
        "Generated from the config models (`core/config.py`, `core/train_config.py`) when the",
        "site is built: every key a config file or `--set section.key=value` may set, its",
        "type, its default and what it does. `configs/_base_/default.yaml` holds the same",
        "defaults as YAML. Unknown keys, wrong types and unknown values are errors.",
        "",
    ]
    by_section: dict[str, list[ConfigKey]] = {}
    for key in keys:
        by_section.setdefault(key.shown.rsplit(".", 1)[0], []).append(key)
    for section, rows in by_section.items():
        lines += [f"## `{section}`", "", sections.get(section, ""), ""]
        lines += ["| key | type | default | what it does |", "|---|---|---|---|"]
        for k in rows:
            name = k.shown.rsplit(".", 1)[1]
            lines.append(f"| `{name}` | {_cell(k.type)} | `{_cell(k.default)}` | {_cell(k.help)} |")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI


@dataclass(frozen=True)
class CliCommand:
    path: str  # "skillopt sleep run"
    help: str
    usage: str
    params: tuple[tuple[str, str], ...]  # (how it is written, help)
    group: bool


def _root_command():
    from skillopt_tui.cli import main

    return main._root_command()


def cli_commands() -> list[CliCommand]:
    """Every command and group of `skillopt`, depth first, as typer's click sees them
    (typer vendors its own click, so this duck-types rather than importing click)."""
    import typer

    out: list[CliCommand] = []

    def walk(cmd: Any, path: str, parent: Any) -> None:
        ctx = typer.Context(cmd, info_name=path.rsplit(" ", 1)[-1], parent=parent)
        params = []
        for p in cmd.get_params(ctx):
            if p.name == "help":
                continue
            record = p.get_help_record(ctx)
            if record is None:
                continue
            if not (getattr(p, "help", None) or "").strip():
                raise MissingHelp(f"{path} {record[0]} has no help text")
            params.append(record)
        help_text = (cmd.help or cmd.short_help or "").strip()
        if not help_text:
            raise MissingHelp(f"`{path}` has no help text: give the command a docstring")
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        group = hasattr(cmd, "list_commands")
        out.append(CliCommand(path, help_text, f"{path} {usage}".strip(), tuple(params), group))
        if group:
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, f"{path} {name}", ctx)

    walk(_root_command(), "skillopt", None)
    return out


def cli_markdown() -> str:
    lines = [
        "# Commands",
        "",
        "Generated from the `skillopt` typer app when the site is built: every command,",
        "its arguments and options, with the same help `skillopt COMMAND --help` prints.",
        "Exit codes are on [their own page](exit-codes.md).",
        "",
    ]
    for c in cli_commands():
        level = "#" * min(2 + c.path.count(" ") - 1, 4) if c.path != "skillopt" else "##"
        lines += [f"{level} `{c.path}`", "", c.help, "", "```text", c.usage, "```", ""]
        if c.params:
            lines += ["| argument or option | what it does |", "|---|---|"]
            for written, what in c.params:
                lines.append(f"| `{_cell(written)}` | {_cell(' '.join(what.split()))} |")
            lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- run directory


def _doc(obj: Any) -> str:
    return " ".join((obj.__doc__ or "").split())


def events_markdown() -> str:
    from core.run.events import EVENT_TYPES, Event

    lines = [
        "# Events (`events.jsonl`)",
        "",
        "Generated from `core/run/events.py` when the site is built. Every line of a run's",
        "`events.jsonl` is one JSON object with a `type` field naming one of these, `ts`",
        "(seconds since the epoch) and the fields listed. Readers ignore fields they do not",
        "know, so old readers survive new writers.",
        "",
    ]
    base = {f.name for f in dataclasses.fields(Event)}
    for name, cls in EVENT_TYPES.items():
        if not _doc(cls):
            raise MissingHelp(f"event {name} has no docstring in core/run/events.py")
        lines += [f"## `{name}`", "", _doc(cls), ""]
        lines += ["| field | type | default | what it says |", "|---|---|---|---|"]
        hints = typing.get_type_hints(cls)
        notes = _field_comments(cls)
        for f in dataclasses.fields(cls):
            if f.name in base:
                continue
            default = (
                "required"
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                else f"`{_show(f.default if f.default is not dataclasses.MISSING else f.default_factory())}`"
            )
            note = _cell(notes.get(f.name, ""))
            lines.append(f"| `{f.name}` | {_cell(_hint(hints[f.name]))} | {default} | {note} |")
        lines.append("")
    return "\n".join(lines)


def _field_comments(cls: type) -> dict[str, str]:
    """Each field's comment in the event's source: the comment lines just above it and
    the one at the end of its line (the events are dataclasses, whose fields have no
    docstrings)."""
    import inspect
    import re

    out: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(cls).splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#").strip())
            continue
        field = re.match(r"(\w+): [^#]*(?:#\s*(?P<inline>.*))?$", stripped)
        if field and not stripped.startswith(("type:", "def ")):
            text = " ".join([*above, field["inline"] or ""]).strip()
            if text:
                out[field[1]] = text
        above = []
    return out


def _hint(ann: Any) -> str:
    if typing.get_origin(ann) is list:
        return f"list of {_hint(typing.get_args(ann)[0])}"
    if typing.get_origin(ann) is dict:
        return "object"
    return _type_name(ann)


def _named_table(head: str, rows: dict) -> list[str]:
    """A two-column table, `name | what`, of a module's {name: description} dict."""
    lines = [f"| {head} |", "|---|---|"]
    return lines + [f"| `{name}` | {_cell(what)} |" for name, what in rows.items()]


def run_files_markdown() -> str:
    from core.run.directory import RUN_FILES, STEP_FILES

    lines = [
        "# Run directory",
        "",
        "Generated from `core/run/directory.py` when the site is built. A run directory",
        "holds only these names (anything else means it is not a run); every file is plain",
        "text, JSON or SQLite, readable without the tool.",
        "",
        *_named_table("name | what it holds", RUN_FILES),
        "",
        "## `steps/NNNN/`",
        "",
        "One step's evidence:",
        "",
        *_named_table("file | what it holds", STEP_FILES),
        "",
    ]
    return "\n".join(lines)


def exit_codes_markdown() -> str:
    from core.exit_codes import EXIT_CODES

    lines = [
        "# Exit codes",
        "",
        "Generated from `core/exit_codes.py` when the site is built. Every `skillopt`",
        "command exits with one of these; an error is one line on stderr.",
        "",
        *_named_table("code | meaning", EXIT_CODES),
        "",
    ]
    return "\n".join(lines)


PAGES = {
    "reference/configuration.md": config_markdown,
    "reference/cli.md": cli_markdown,
    "reference/events.md": events_markdown,
    "reference/run-directory.md": run_files_markdown,
    "reference/exit-codes.md": exit_codes_markdown,
}
