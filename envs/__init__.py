"""The environment registry: config name -> a ready `Environment`.

Faces build the environment here and hand the object to the trainer; `core/` never imports
a concrete environment. Concrete modules are imported lazily so that naming one
environment never pays for another's imports. The table of environments is
`envs.catalog.SPECS`.
"""

from __future__ import annotations

import difflib
import importlib
from pathlib import Path

from core.config import AGENT_BACKENDS, EnvConfig
from core.environment.contract import EnvError, Environment
from envs.catalog import BY_NAME, EnvSpec

ENVIRONMENTS: tuple[str, ...] = tuple(BY_NAME)

# The checkout holding `envs/` and `manifests/`: the default base for relative paths.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _resolve(path: str | None, root: Path) -> Path | None:
    if path is None:
        return None
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


def spec_of(name: str) -> EnvSpec:
    if name not in BY_NAME:
        close = difflib.get_close_matches(name, ENVIRONMENTS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise EnvError(f"unknown environment {name!r}; {hint}allowed: {', '.join(ENVIRONMENTS)}")
    return BY_NAME[name]


def manifest_dir_of(name: str, root: Path | None = None) -> Path:
    """The published manifest folder of an environment in the checkout."""
    return (
        (Path(root) if root is not None else PROJECT_ROOT) / "manifests" / spec_of(name).manifests
    )


def get_environment(
    env_config: EnvConfig, *, root: Path | None = None, target_backend: str | None = None
) -> Environment:
    """Build the configured environment.

    `root` is the base for relative `manifest_dir` / `data_dir` and for the default manifest
    folder `<root>/manifests/<folder>`; it defaults to the project checkout. Unknown names and
    unknown or invalid options raise EnvError (a UserError) naming what is allowed.
    `target_backend` (models.target.backend) picks the kind of target of an environment
    that can run either: a coding-agent CLI (claude_code, codex) does each item as an agent.
    """
    spec = spec_of(env_config.name)
    base = Path(root) if root is not None else PROJECT_ROOT
    manifest_dir = _resolve(env_config.manifest_dir, base) or manifest_dir_of(spec.name, base)
    data_dir = _resolve(env_config.data_dir, base)
    module_name, class_name = spec.factory.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if len(spec.targets) < 2:
        return cls(manifest_dir, data_dir, dict(env_config.options))
    kind = "agent" if target_backend in AGENT_BACKENDS else "chat"
    return cls(manifest_dir, data_dir, dict(env_config.options), target_kind=kind)


__all__ = ["ENVIRONMENTS", "EnvError", "Environment", "get_environment", "manifest_dir_of"]
