"""The tools' input schemas: one pydantic model per tool, `extra="forbid"`, so an unknown or
misspelt argument is refused instead of silently ignored (the schema says
`additionalProperties: false` and the server validates against the same model).

Every string and list is bounded: a 10 MB path or 100,000 overrides is an invalid argument
(JSON-RPC -32602, a short message that does not echo it), not an OSError from deep inside a
tool. Which folders a path may name is the roots' business (roots.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from sleep.state.settings import NightBackend

MAX_PATH = 4096  # PATH_MAX on Linux: no longer path can name a file
MAX_NAME = 256  # branch names, skill names, commit ids, confirmation codes
MAX_SET_ITEMS = 100
MAX_HUNKS = 1000


def _no_nul(value: str) -> str:
    """No path or argv can hold a NUL (pydantic itself refuses lone surrogates)."""
    if "\x00" in value:
        raise ValueError("contains a NUL character")
    return value


# A filesystem path, absolute or relative to the server's working directory.
PathText = Annotated[str, Field(min_length=1, max_length=MAX_PATH), AfterValidator(_no_nul)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_no_nul)]
Override = Annotated[str, Field(max_length=MAX_PATH), AfterValidator(_no_nul)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StateArgs(Strict):
    state_dir: PathText | None = Field(
        None,
        description="Sleep state directory (default: the server's, else ~/.local/state/skillopt/sleep).",
    )


class SleepStatusArgs(StateArgs):
    pass


class RepoArgs(StateArgs):
    skills_repo: PathText | None = Field(
        None,
        description="Skills repository (default: the server's, else the one `sleep init` recorded).",
    )


class NightArgs(RepoArgs):
    project: PathText | None = Field(
        None, description="Project directory (default: recorded by `sleep init`)."
    )
    skill: Name | None = Field(
        None, description="Improve only this skill (default: route by transcripts)."
    )
    backend: NightBackend | None = Field(
        None,
        description="Model backend for the night (default: recorded; `handoff` writes prompt files).",
    )


class SleepDryRunArgs(NightArgs):
    pass


class SleepRunArgs(NightArgs):
    pass


class SleepReviewArgs(RepoArgs):
    staged: Name | None = Field(
        None, description="staged/<run-id> or <run-id> (default: every staged branch)."
    )


class SleepAdoptArgs(RepoArgs):
    staged: Name = Field(description="staged/<run-id> or <run-id>, as sleep_review lists it.")
    hunks: list[Annotated[int, Field(ge=1, le=10**6)]] | None = Field(
        None,
        description="Hunk numbers from sleep_review (default: every hunk).",
        min_length=1,
        max_length=MAX_HUNKS,
    )
    confirm: Name | None = Field(
        None,
        description="The code the user typed back after seeing the preview. Never fill it in "
        "yourself: call without it first, show the preview and the code, and wait for the user.",
    )


class SleepRollbackArgs(RepoArgs):
    target: Name | None = Field(
        None,
        description="Adoption commit, or skill name (its last adoption; default: the last adoption).",
    )
    confirm: Name | None = Field(
        None,
        description="The code the user typed back after seeing the preview. Never fill it in yourself.",
    )


class TrainArgs(Strict):
    config: PathText = Field(description="Run config YAML.")
    out: PathText | None = Field(
        None, description="Run directory (rerunning with the same one resumes)."
    )
    skills_repo: PathText | None = Field(
        None, description="Skills repository to stage into (with skill)."
    )
    skill: Name | None = Field(None, description="Skill name in skills_repo (with skills_repo).")
    set: list[Override] | None = Field(
        None, description="Config overrides, section.key=value.", max_length=MAX_SET_ITEMS
    )
    estimate: bool = Field(False, description="Only print the estimate of calls, tokens and cost.")


class EvalArgs(Strict):
    config: PathText = Field(description="Run config YAML.")
    skill: PathText = Field(description="Skill file to score.")
    split: Literal["val", "test"] = "val"
    set: list[Override] | None = Field(
        None, description="Config overrides, section.key=value.", max_length=MAX_SET_ITEMS
    )


class RunsArgs(Strict):
    runs_dir: PathText | None = Field(
        None, description="Folder holding run directories (default: the server's, else ./runs)."
    )
