"""Cards for runs, as the commands need them: written at the end of `skillopt train`, and
rebuilt on demand for a run that has none (an older run) from its config.yaml, whose
environment loads the splits again. core.research.card derives everything else."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import UserError
from core.research.card import SPLITS, build_card, read_card, write_card
from core.run.directory import RunDirectory, run_info

if TYPE_CHECKING:
    from core.research.compare import Comparison


def load_splits(env) -> dict[str, list] | str:
    """The splits as the environment loads them, or the first reason one cannot be."""
    splits = {}
    for name in SPLITS:
        try:
            splits[name] = env.load_split(name)
        except UserError as exc:
            if name == "test":  # a run without a final test may have no test split
                continue
            return f"{name} split not loadable: {exc}"
    return splits


def _started_env(run_path: Path) -> str | None:
    """The environment the run's first RunStarted names (what actually ran)."""
    try:
        with (run_path / "events.jsonl").open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"RunStarted"' in line:
                    with contextlib.suppress(ValueError):
                        return str(json.loads(line).get("env") or "") or None
    except OSError:
        return None
    return None


def night_splits(run_path: Path) -> dict[str, list] | str:
    """A Sleep night's skill folder: its tasks as the night froze them in tasks.json
    (`<night>/tasks.json`, skills.<skill>.<split>); a night replays no test split."""
    try:
        tasks = json.loads((run_path.parent / "tasks.json").read_text(encoding="utf-8"))
        splits = tasks["skills"][run_path.name]
    except (OSError, ValueError, KeyError, TypeError):
        return "its tasks are not recorded (no tasks.json beside it names this skill)"
    if not isinstance(splits, dict):
        return "its tasks.json entry is not a mapping of splits"
    return {name: list(splits.get(name) or []) for name in SPLITS}


def splits_of_run(run_path: Path) -> dict[str, list] | str:
    """The splits of a recorded run: loaded through the environment its config names, or,
    for a Sleep night (whose replay environment no config names), from its tasks.json."""
    from core.config import config_from_dict
    from envs import get_environment

    config = RunDirectory(run_path).read_config()
    if config is None:
        return "the run has no config.yaml"
    started = _started_env(run_path)
    named = (config.get("env") or {}).get("name") if isinstance(config.get("env"), dict) else None
    from sleep.night.replay_env import NAME as NIGHT_ENV

    if started == NIGHT_ENV:
        return night_splits(run_path)
    if started is not None and started != named:
        return f"it ran environment {started!r}, which its config.yaml does not name"
    try:
        cfg = config_from_dict(config)
        env = get_environment(cfg.env, target_backend=cfg.models.target.backend)
    except UserError as exc:
        return f"its environment could not be loaded: {exc}"
    return load_splits(env)


def config_sources(config_path: Path, overrides: list[str]) -> dict[str, Any]:
    """The config file, the overlays it inherits (`_base_`, depth first) and the --set
    overrides: what `config.yaml` was resolved from."""
    import yaml

    bases: list[str] = []

    def walk(path: Path, seen: tuple[Path, ...]) -> None:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            return
        named = data.get("_base_", []) if isinstance(data, dict) else []
        for base in [named] if isinstance(named, str) else named:
            base_path = (path.parent / str(base)).resolve()
            if base_path not in seen:
                walk(base_path, (*seen, base_path))
                bases.append(str(base_path))

    walk(config_path.resolve(), (config_path.resolve(),))
    return {"file": str(config_path.resolve()), "overlays": bases, "set": list(overrides)}


def card_for(run_path: Path, *, rebuild: bool = False) -> dict[str, Any]:
    """The run's card: the stored one, else built now (and stored when the run is not
    live, so the next reader gets the same card)."""
    info = run_info(run_path)
    if info is None:
        raise UserError(
            f"{run_path} is not a run directory (no state.json or events.jsonl); "
            "give a folder `skillopt runs` lists"
        )
    card = None if rebuild else read_card(run_path)
    if card is None:
        stored = read_card(run_path) or {}
        card = build_card(run_path, splits_of_run(run_path), stored.get("config_sources"))
        if info.status != "live":
            write_card(run_path, card)
    return card


def comparison_of(runs: list[Path], skill: str = "best") -> tuple[Comparison, list[dict[str, Any]]]:
    """The comparison of `runs` against the first and their cards: what `skillopt compare`
    prints and the TUI's Compare screen shows, from one place. Raises SplitsDiffer (one
    line) when the test splits differ."""
    from core.research.compare import check_same_test_split, compare_runs, load_run_scores

    cards = [card_for(path) for path in runs]
    check_same_test_split(cards)
    scores = [load_run_scores(path, card, skill) for path, card in zip(runs, cards, strict=True)]
    return compare_runs(scores, skill), cards
