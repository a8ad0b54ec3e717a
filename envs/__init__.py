"""The environment registry: config name -> a ready `Environment`.

Faces build the environment here and hand the object to the trainer; `core/` never imports
a concrete environment. Concrete modules are imported lazily so that naming one
environment never pays for another's imports.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from core.config import EnvConfig
from core.environment.contract import EnvError, Environment

# name -> "module:class"; the class takes (manifest_dir, data_dir, options).
_FACTORIES = {
    "capitals": "envs.capitals.environment:CapitalsEnvironment",
    "repo_tasks": "envs.repo_tasks.environment:RepoTasksEnvironment",
}
ENVIRONMENTS: tuple[str, ...] = tuple(_FACTORIES)

# The checkout holding `envs/` and `manifests/`: the default base for relative paths.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _resolve(path: str | None, root: Path) -> Path | None:
    if path is None:
        return None
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


def get_environment(env_config: EnvConfig, *, root: Path | None = None) -> Environment:
    """Build the configured environment.

    `root` is the base for relative `manifest_dir` / `data_dir` and for the default manifest
    folder `<root>/manifests/<name>`; it defaults to the project checkout. Unknown names and
    unknown or invalid options raise EnvError (a UserError) naming what is allowed.
    """
    name = env_config.name
    if name not in _FACTORIES:
        raise EnvError(f"unknown environment {name!r}; allowed: {', '.join(ENVIRONMENTS)}")
    base = Path(root) if root is not None else PROJECT_ROOT
    manifest_dir = _resolve(env_config.manifest_dir, base) or base / "manifests" / name
    data_dir = _resolve(env_config.data_dir, base)
    module_name, class_name = _FACTORIES[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(manifest_dir, data_dir, dict(env_config.options))


__all__ = ["ENVIRONMENTS", "EnvError", "Environment", "get_environment"]
