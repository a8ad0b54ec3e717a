"""`sleep.yaml` in the state directory: what `skillopt sleep init` recorded, so a night (or
cron) needs no flags. Command-line flags override it for one night."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.atomic import write_text
from core.errors import UserError

SETTINGS_FILE = "sleep.yaml"
NightBackend = Literal[
    "auto", "handoff", "openai", "azure", "anthropic", "local", "scripted", "claude_code", "codex"
]


class SleepSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str | None = None
    skills_repo: str | None = None
    skill: str | None = None  # null = route by transcripts, else the project's main file
    backend: NightBackend | None = None  # null = handoff
    config: str | None = None  # a run config for the night (models, budget); null = defaults
    claude_home: str | None = None
    codex_home: str | None = None
    val_fraction: float = Field(default=0.3, ge=0, lt=1)
    test_fraction: float = Field(default=0.0, ge=0, lt=1)
    max_tasks: int = Field(default=40, ge=2)
    pass_mark: float = Field(default=0.7, gt=0, le=1)
    include_automation: bool = False
    auto_adopt: bool = False


def load_settings(state_dir: Path) -> SleepSettings:
    path = Path(state_dir) / SETTINGS_FILE
    if not path.exists():
        return SleepSettings()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return SleepSettings.model_validate(data)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{path}: unreadable ({' '.join(str(exc).split())[:200]})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserError(
            f"{path}: {key}: {first['msg']}; fix it or re-run skillopt sleep init"
        ) from None


def save_settings(state_dir: Path, settings: SleepSettings) -> Path:
    path = Path(state_dir) / SETTINGS_FILE
    data = settings.model_dump(exclude_defaults=False)
    write_text(
        path,
        "# Written by `skillopt sleep init`; flags override it per night.\n"
        + yaml.safe_dump(data, sort_keys=False),
    )
    return path
