"""Refusing to resume a run with a config that would change its results.

A resumed run must end exactly as an uninterrupted one would, so any key that changes
which items run, what the models see or how candidates are judged must match the config
saved in the run directory. Keys that only change *how* (concurrency, timeouts, retries),
*where caches live*, or *how much may be spent* may change between attempts: raising the
budget cap to resume a stopped run is the point of the cap.
"""

from __future__ import annotations

from typing import Any

from core.config import Config
from core.errors import UserError
from core.run.state import TrainState

HARMLESS_PREFIXES = (
    "budget.",
    "cache.",
    "run.runs_dir",
    "run.name",
    "models.env_file",
    "models.prices",
    "models.local.",
)
HARMLESS_ROLE_KEYS = (
    "concurrency",
    "timeout_s",
    "max_retries",
    "api_key_env",
    "cache",
    "binary",
    "keep_workspace",
)


class ConfigChanged(UserError):
    """The config differs from the one the run was started with."""


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): data}


def _harmless(key: str) -> bool:
    if key.startswith(HARMLESS_PREFIXES):
        return True
    parts = key.split(".")
    return len(parts) == 3 and parts[0] == "models" and parts[2] in HARMLESS_ROLE_KEYS


def config_differences(saved: dict[str, Any], new: Config) -> list[tuple[str, Any, Any]]:
    a, b = _flatten(saved), _flatten(new.to_public_dict())
    diffs = []
    for key in sorted(set(a) | set(b)):
        if _harmless(key):
            continue
        if a.get(key) != b.get(key):
            diffs.append((key, a.get(key), b.get(key)))
    return diffs


def check_resume_config(saved: dict[str, Any] | None, new: Config, run_path: str) -> None:
    if saved is None:
        return
    diffs = config_differences(saved, new)
    if not diffs:
        return
    raise ConfigChanged(
        f"the config differs from the one run {run_path} was started with: "
        f"{first_difference(diffs)}; rerun with the same config to resume, or with "
        f"--fresh --force to start over"
    )


def first_difference(diffs: list[tuple[str, Any, Any]]) -> str:
    """The first of config_differences() in words, with how many more there are."""
    key, old, cur = diffs[0]
    more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
    return f"{key} was {old!r}, now {cur!r}{more}"


def check_resume_models(state: TrainState, resolved: dict[str, str], run_path: str) -> None:
    """The same config can resolve to other models in another environment (`backend: auto`
    picks the API model when OPENAI_API_KEY is set, else the embedded one; `strategy: auto`
    follows): refuse a resume that would continue the run on different models. `resolved`
    holds the TrainState fields target_key, target_model, optimizer_model and strategy;
    a field the state never recorded (an older run) is not compared."""
    checks = (
        ("target model", "target_key", "target_model"),
        ("optimizer model", "optimizer_model", "optimizer_model"),
        ("strategy", "strategy", "strategy"),
    )
    for what, key, shown in checks:
        saved = getattr(state, key, None)
        if saved is None or saved == resolved[key]:
            continue
        before = getattr(state, shown, None) or saved
        now = resolved[shown]
        if before == now:  # same label, other settings (endpoint, sampling)
            before, now = saved, resolved[key]
        raise ConfigChanged(
            f"run {run_path} was started with {what} {before}, this environment resolves "
            f"it to {now} (backend/strategy auto follow API keys such as OPENAI_API_KEY); "
            f"restore that environment to resume, or rerun with --fresh --force to start over"
        )


def check_resume_val_items(state: TrainState, val_ids: list[str], run_path: str) -> None:
    """The best score so far was measured on the val items of the baseline: a resume that
    would gate on other items (a manifest edited, or a run started when `val_limit` kept
    the first N val items instead of its seeded sample) compares scores of different
    splits. A run whose baseline never finished records no items and is not compared."""
    if not state.baseline_items or set(state.baseline_items) == set(val_ids):
        return
    raise ConfigChanged(
        f"run {run_path} was scored on {len(state.baseline_items)} val items, this "
        f"environment and config give {len(val_ids)} others (val_limit keeps a seeded "
        "sample since this version; an older one kept the first items): rerun with "
        "--fresh --force to start over"
    )
