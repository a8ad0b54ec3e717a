"""Runs compared item by item against the first (the baseline run).

Per split, the chosen skill's per-item scores of every run side by side, each item marked
improved / regressed / same against the baseline run, the paired sign test's p (the same
test the gate puts on its staged commits, core.sign_test) over the items both runs scored,
each run's mean with its 95% interval, and tokens and cost. Runs whose cards show the same
config apart from the seed are grouped: their test means as mean ± spread.

Comparing runs tested on different items makes no sense, so a test split whose content
hash differs (or is unknown) is refused in one line before anything is compared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.research.interval import mean_interval, spread
from core.research.item_scores import item_scores
from core.run.directory import RunDirectory
from core.sign_test import sign_test_p

COMPARED_SPLITS = ("val", "test")


class SplitsDiffer(UserError):
    """Two runs' test splits are not the same items."""


@dataclass
class RunScores:
    run_id: str
    path: Path
    card: Mapping[str, Any]
    per_split: dict[str, dict[str, float]]  # split -> item -> score of the chosen skill
    tokens: int
    cost_usd: float


@dataclass
class SplitComparison:
    split: str
    items: list[str]
    rows: list[dict[str, Any]]  # item, scores per run (None: not scored), outcome per run
    runs: list[dict[str, Any]]  # run_id, n, mean, low, high, method, improved, regressed, p
    note: str = ""


@dataclass
class Comparison:
    skill: str
    metric: str
    runs: list[dict[str, Any]]  # run_id, tokens, cost_usd, seed
    splits: list[SplitComparison] = field(default_factory=list)
    seed_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def load_run_scores(path: Path, card: Mapping[str, Any], skill: str) -> RunScores:
    rd = RunDirectory(path)
    summary = rd.read_summary() or {}
    metric = str(card.get("metric") or "hard")
    best_hash = str((summary.get("val") or {}).get("skill_hash", ""))
    scores = item_scores(rd.events_path, metric, best_hash)
    usage = summary.get("usage") or {}
    return RunScores(
        run_id=str(card.get("run_id") or rd.run_id),
        path=path,
        card=card,
        per_split={split: scores.of(split, skill) for split in COMPARED_SPLITS},
        tokens=int(usage.get("input_tokens", 0) or 0) + int(usage.get("output_tokens", 0) or 0),
        cost_usd=float(summary.get("cost_usd", 0.0) or 0.0),
    )


def check_same_test_split(cards: Sequence[Mapping[str, Any]]) -> None:
    """Refuse runs whose test splits are not provably the same items."""
    first = cards[0]
    want = (first.get("splits") or {}).get("test", {}).get("sha256")
    if not want:
        raise SplitsDiffer(
            f"run {first.get('run_id')} has no test split hash (its data could not be loaded); "
            "restore its data and run `skillopt runs show RUN --rebuild`"
        )
    for card in cards[1:]:
        got = (card.get("splits") or {}).get("test", {}).get("sha256")
        if got != want:
            raise SplitsDiffer(
                f"runs {first.get('run_id')} and {card.get('run_id')} were tested on different "
                f"test splits (sha256 {want[:12]} vs {str(got)[:12]}); compare runs of one test split"
            )


def distinct_names(ids: Sequence[str], paths: Sequence[Path]) -> list[str]:
    """Each run's id, or, where two runs share it, its folder with its parent's name: a
    skill's folders in two Sleep nights are both named after the skill, and two columns
    both headed `notes-app` would not say which night is which."""
    return [
        f"{path.parent.name}/{path.name}" if ids.count(run_id) > 1 else run_id
        for run_id, path in zip(ids, paths, strict=True)
    ]


def compare_runs(runs: Sequence[RunScores], skill: str = "best") -> Comparison:
    """The comparison of `runs` against runs[0]; the caller checked the test splits."""
    names = distinct_names([r.run_id for r in runs], [r.path for r in runs])
    runs = [dataclasses.replace(r, run_id=name) for r, name in zip(runs, names, strict=True)]
    base = runs[0]
    metric = str(base.card.get("metric") or "hard")
    comparison = Comparison(
        skill=skill,
        metric=metric,
        runs=[
            {
                "run_id": r.run_id,
                "tokens": r.tokens,
                "cost_usd": r.cost_usd,
                "seed": (r.card.get("seeds") or {}).get("run.seed"),
            }
            for r in runs
        ],
    )
    for split in COMPARED_SPLITS:
        comparison.splits.append(_compare_split(split, runs))
    comparison.seed_groups = _seed_groups(runs)
    return comparison


def _compare_split(split: str, runs: Sequence[RunScores]) -> SplitComparison:
    base = runs[0].per_split[split]
    hashes = {(r.card.get("splits") or {}).get(split, {}).get("sha256") for r in runs}
    note = "" if len(hashes) == 1 else f"the runs' {split} splits differ: items paired by id"
    items = sorted({item for r in runs for item in r.per_split[split]})
    rows = []
    for item in items:
        scores = [r.per_split[split].get(item) for r in runs]
        rows.append(
            {
                "item": item,
                "scores": scores,
                "outcomes": [_outcome(base.get(item), s) for s in scores],
            }
        )
    summaries = []
    for index, r in enumerate(runs):
        values = list(r.per_split[split].values())
        mean, low, high, method = mean_interval(values)
        outcomes = [row["outcomes"][index] for row in rows]
        improved, regressed = outcomes.count("improved"), outcomes.count("regressed")
        summaries.append(
            {
                "run_id": r.run_id,
                "n": len(values),
                "mean": mean,
                "low": low,
                "high": high,
                "method": method,
                "improved": improved,
                "regressed": regressed,
                "same": outcomes.count("same"),
                "p": None if index == 0 else sign_test_p(improved, regressed),
            }
        )
    return SplitComparison(split=split, items=items, rows=rows, runs=summaries, note=note)


def _outcome(base: float | None, score: float | None) -> str:
    if base is None or score is None:
        return "unpaired"
    if score > base:
        return "improved"
    if score < base:
        return "regressed"
    return "same"


def _config_without_seed(card: Mapping[str, Any]) -> str:
    import json

    config = {k: v for k, v in (card.get("config") or {}).items()}
    run = dict(config.get("run") or {})
    for key in ("seed", "name", "runs_dir"):
        run.pop(key, None)
    config["run"] = run
    return json.dumps(config, sort_keys=True, default=str)


def _seed_groups(runs: Sequence[RunScores]) -> list[dict[str, Any]]:
    """Runs of one config that differ only by seed: their test means, mean ± spread."""
    groups: dict[str, list[RunScores]] = {}
    for r in runs:
        groups.setdefault(_config_without_seed(r.card), []).append(r)
    result = []
    for members in groups.values():
        if len(members) < 2:
            continue
        row: dict[str, Any] = {"runs": [m.run_id for m in members]}
        for split in COMPARED_SPLITS:
            means = [mean_interval(list(m.per_split[split].values()))[0] for m in members]
            mean, sd = spread(means)
            row[split] = {"mean": mean, "sd": sd, "n_runs": len(means)}
        result.append(row)
    return result
