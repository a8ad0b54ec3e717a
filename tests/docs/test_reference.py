"""The generated reference (docs_tools/reference.py) against what it documents: every key
of configs/_base_/default.yaml, every command of `skillopt --help`, every event type, every
run-directory file and every exit code a command can end with. A new key, option or
command without help text fails here, and so does `make docs`."""

from __future__ import annotations

import re
import sys

import pytest
import yaml
from pydantic import BaseModel, Field

from core import exit_codes
from core.errors import UserError
from docs_tools import reference
from tests.support.doc_examples import ROOT


def _leaf_keys(tree: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.extend(_leaf_keys(value, f"{prefix}{key}."))
        else:
            out.append(f"{prefix}{key}")
    return out


def test_every_key_of_the_default_config_is_in_the_reference():
    tree = yaml.safe_load((ROOT / "configs/_base_/default.yaml").read_text())
    keys = reference.config_keys()
    documented = {p for k in keys for p in k.paths}
    mappings = {p for k in keys if k.mapping for p in k.paths}
    missing = [
        leaf
        for leaf in _leaf_keys(tree)
        if leaf not in documented and not any(leaf.startswith(m + ".") for m in mappings)
    ]
    assert not missing, f"keys of default.yaml missing from the reference: {missing}"
    page = reference.config_markdown()
    for key in keys:
        assert f"| `{key.shown.rsplit('.', 1)[1]}` |" in page


def test_the_reference_defaults_are_the_ones_default_yaml_gives():
    """The reference takes each default from `Config()`; a run configured by default.yaml
    alone gets exactly those."""
    from core.config import Config, load_config

    loaded = load_config(ROOT / "configs/_base_/default.yaml").model_dump(mode="json")
    assert loaded == Config().model_dump(mode="json")
    assert all(key.help for key in reference.config_keys())


def test_a_new_key_without_help_text_fails():
    """The check the reference runs on every field, on a model with an undocumented key."""
    from core.strict_model import StrictModel

    class Section(StrictModel):
        """A section."""

        documented: int = 1
        """Has its help."""
        undocumented: int = 2

    assert Section.model_fields["documented"].description == "Has its help."
    assert Section.model_fields["undocumented"].description is None

    class Root(BaseModel):
        section: Section = Field(default_factory=Section)

    import core.config

    original = core.config.Config
    core.config.Config = Root
    try:
        with pytest.raises(reference.MissingHelp, match="section.undocumented"):
            reference.config_keys()
    finally:
        core.config.Config = original


def _help_commands(args: list[str], monkeypatch, capsys) -> list[str]:
    """The command names `skillopt ... --help` lists in its Commands panel (run in-process,
    as the `skillopt` script runs `main`)."""
    from skillopt_tui.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "argv", ["skillopt", *args, "--help"])
    with pytest.raises(SystemExit) as exit_:
        main.main()
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    if "Commands" not in out:
        return []
    panel = out.split("Commands", 1)[1]
    return re.findall(r"^│ (\S+) {2,}", panel, flags=re.M)


def test_every_command_of_skillopt_help_is_in_the_reference(monkeypatch, capsys):
    documented = {c.path for c in reference.cli_commands()}  # registers the commands
    page = reference.cli_markdown()
    groups = [[]]
    seen = 0
    while groups:
        args = groups.pop()
        for name in _help_commands(args, monkeypatch, capsys):
            path = " ".join(["skillopt", *args, name])
            assert path in documented, f"`{path}` is in --help but not in the reference"
            assert f"`{path}`" in page
            seen += 1
            if any(c.path == path and c.group for c in reference.cli_commands()):
                groups.append([*args, name])
    assert seen >= 30  # train, eval, runs, skills ..., sleep ..., integrations ..., data ...


def test_every_option_is_in_the_reference_with_its_help():
    by_path = {c.path: c for c in reference.cli_commands()}
    train = by_path["skillopt train"]
    options = {written.split()[0].rstrip(","): what for written, what in train.params}
    for flag in ("--config", "--set", "--out", "--fresh", "--estimate", "--json"):
        assert options.get(flag) or any(flag in w for w, _ in train.params), flag


def test_every_event_type_is_documented():
    from core.run.events import EVENT_TYPES

    page = reference.events_markdown()
    for name in EVENT_TYPES:
        assert f"## `{name}`" in page


def test_every_run_file_is_documented():
    from core.run.directory import RUN_FILE_NAMES, RUN_FILES

    assert set(RUN_FILES) == RUN_FILE_NAMES
    page = reference.run_files_markdown()
    for name in RUN_FILE_NAMES:
        assert f"`{name}`" in page
    assert all(what.strip() for what in RUN_FILES.values())


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_exit_code_a_command_can_end_with_is_documented():
    import importlib

    from skillopt_tui.cli import commands, train_cmds

    for name in commands.COMMAND_MODULES:
        importlib.import_module(name)
    importlib.import_module("sleep.night.run")
    codes = {getattr(c, "exit_code", None) for c in _subclasses(UserError)} | {UserError.exit_code}
    codes |= {train_cmds.EXIT_STOPPED, exit_codes.SUCCESS, exit_codes.INTERRUPTED}
    assert codes - {None} <= set(exit_codes.EXIT_CODES), codes - set(exit_codes.EXIT_CODES)
    page = reference.exit_codes_markdown()
    for code in exit_codes.EXIT_CODES:
        assert f"| `{code}` |" in page


def _glance_commands(page: str, commands: set[str]) -> tuple[set[str], set[str]]:
    """The commands the hand-written overview names, and the ones it names that do not
    exist: each backticked `skillopt ...` (or `sleep ...`) of its table's first column,
    word by word while the words are command names (`a|b|c` stands for each), so
    arguments such as an agent's name end it."""
    named: set[str] = set()
    unknown: set[str] = set()
    for row in re.findall(r"^\| (.+?) \| .*\|$", page, flags=re.M):
        for code in re.findall(r"`([^`]+)`", row.replace("\\|", "|")):
            words = code.split()
            if words[0] == "sleep":
                words = ["skillopt", *words]
            if words[0] != "skillopt" or len(words) == 1:
                continue
            paths = {"skillopt"}
            for depth, word in enumerate(words[1:]):
                longer = {f"{p} {alt}" for p in paths for alt in word.split("|")}
                if longer <= commands:
                    paths = longer
                    continue
                if depth == 0 or longer & commands:
                    unknown |= longer - commands
                break
            named |= paths - {"skillopt"}
    return named, unknown


def test_the_commands_at_a_glance_page_names_every_command_and_only_real_ones():
    """The overview is written by hand, beside the generated reference: a command added
    without a line there, or a line left for a command that is gone, fails here."""
    page = (ROOT / "docs/guides/commands.md").read_text()
    commands = {c.path for c in reference.cli_commands()}
    named, unknown = _glance_commands(page, commands)
    assert unknown == set(), "docs/guides/commands.md names commands that do not exist"
    leaves = {c.path for c in reference.cli_commands() if not c.group}
    assert leaves - named == set(), "commands missing from docs/guides/commands.md"
