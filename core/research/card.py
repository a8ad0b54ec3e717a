"""The run card (`card.json`): what every number a run reports rests on.

A reader of a results table asks how a number was obtained: which config (and which
overlays and --set overrides), which seeds, how many items each mean is over, whether
the test split is the one they think (its size and content hash), which models answered,
which edits were accepted on what evidence, and what it cost. Everything is derived from
the run directory (config.yaml, summary.json, steps/NNNN/gate.json and apply_report.json,
events.jsonl, spend.jsonl) plus the splits as the environment loads them, so a card can be
rebuilt for any older run whose data is still there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from core.atomic import write_text
from core.environment.contract import TaskItem
from core.research.item_scores import ROLES, item_scores
from core.research.split_hash import split_fingerprint
from core.run.directory import RunDirectory
from core.sign_test import sign_test_p

CARD_NAME = "card.json"
CARD_VERSION = 1
SPLITS = ("train", "val", "test")


def build_card(
    run_path: str | Path,
    splits: Mapping[str, list[TaskItem]] | str,
    config_sources: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The card of the run at `run_path`. `splits` are the items the environment loads
    for it, or why they could not be loaded (then the hashes are null with that reason:
    the card says what it does not know rather than guessing)."""
    rd = RunDirectory(run_path)
    config = rd.read_config() or {}
    summary = rd.read_summary() or {}
    metric = str(summary.get("metric") or "hard")
    best_hash = str((summary.get("val") or {}).get("skill_hash", ""))
    scores = item_scores(rd.events_path, metric, best_hash)
    return {
        "card_version": CARD_VERSION,
        "run_id": rd.run_id,
        # what ran: a Sleep night's config names a default environment it never uses
        "env": summary.get("env") or (config.get("env") or {}).get("name", ""),
        "status": summary.get("status", "unfinished"),
        "metric": metric,
        "config": config,
        "config_sources": dict(config_sources) if config_sources else None,
        "seeds": _seeds(config),
        "splits": _splits(splits, _items_run(rd)),
        "items_averaged": {
            f"{split}.{role}": len(scores.of(split, role))
            for split, roles in ROLES.items()
            for role in roles
            if scores.of(split, role)
        },
        "models": _models(rd),
        "accepted_edits": _accepted_edits(rd),
        "significance_tests": _significance_tests(rd),
        "val": {
            "baseline": summary.get("baseline_val"),
            "best": summary.get("best_val"),
            "final": summary.get("final_val"),
        },
        "test": {
            role: (summary.get("test") or {}).get(role, {}).get(metric)
            for role in ROLES["test"]
            if role in (summary.get("test") or {})
        },
        "spend": {"cost_usd": summary.get("cost_usd"), **_spend(summary)},
    }


def write_card(run_path: str | Path, card: Mapping[str, Any]) -> Path:
    path = Path(run_path) / CARD_NAME
    write_text(path, json.dumps(card, indent=2, ensure_ascii=False, default=str) + "\n")
    return path


def read_card(run_path: str | Path) -> dict[str, Any] | None:
    """The stored card, or None when the run has none (or an unreadable one)."""
    try:
        data = json.loads((Path(run_path) / CARD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("card_version") == CARD_VERSION else None


def _splits(splits: Mapping[str, list[TaskItem]] | str, run: Mapping[str, int]) -> dict[str, Any]:
    """Each split's fingerprint, plus `run_items` when the run's RunStarted counted other
    than the split holds (a limit, or tasks a night could not replay): then the reader
    knows the hash covers more items than were run."""
    if isinstance(splits, str):
        out = {name: {"size": None, "sha256": None, "unknown": splits} for name in SPLITS}
    else:
        out = {name: split_fingerprint(items) for name, items in splits.items()}
    for name, fingerprint in out.items():
        if name in run and run[name] != fingerprint["size"]:
            fingerprint["run_items"] = run[name]
    return out


def _items_run(rd: RunDirectory) -> dict[str, int]:
    """The items per split the run's first RunStarted says it loaded."""
    try:
        with rd.events_path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"RunStarted"' not in line:
                    continue
                try:
                    data = json.loads(line)
                except ValueError:
                    continue
                return {
                    name: int(data[f"{name}_items"])
                    for name in SPLITS
                    if isinstance(data.get(f"{name}_items"), int)
                }
    except OSError:
        pass
    return {}


def _seeds(config: Mapping[str, Any]) -> dict[str, Any]:
    seeds = {"run.seed": (config.get("run") or {}).get("seed")}
    for role, settings in (config.get("models") or {}).items():
        if isinstance(settings, dict) and settings.get("seed") is not None:
            seeds[f"models.{role}.seed"] = settings["seed"]
    return seeds


def _models(rd: RunDirectory) -> list[dict[str, Any]]:
    """Per role and configured model: calls, and the model names the backends said served
    them (`served_model` in spend.jsonl; absent when a backend names none)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        lines = rd.spend_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict) or "role" not in entry:
            continue
        key = (str(entry["role"]), str(entry.get("model", "")))
        row = rows.setdefault(key, {"role": key[0], "model": key[1], "calls": 0, "served": []})
        row["calls"] += 1
        served = entry.get("served_model")
        if served and served not in row["served"]:
            row["served"].append(served)
    return sorted(rows.values(), key=lambda r: (r["role"], r["model"]))


def _accepted_edits(rd: RunDirectory) -> list[dict[str, Any]]:
    """Each accepted candidate: its step, the edits that reached the gate, val before and
    after, and the sign test's p over the gate's paired items."""
    history = []
    for gate_path, gate in _gates(rd):
        if not gate.get("accepted"):
            continue
        improved = int(gate.get("items_improved", 0) or 0)
        regressed = int(gate.get("items_regressed", 0) or 0)
        applied = _json(gate_path.parent / "apply_report.json")
        edits = [
            {"op": e.get("op"), "rationale": e.get("rationale", "")}
            for e in (applied if isinstance(applied, list) else [])
            if isinstance(e, dict) and e.get("status") == "applied"
        ]
        history.append(
            {
                "step": gate.get("step"),
                "source": gate.get("source", "step"),
                "edits": edits if gate_path.name == "gate.json" else [],
                "val_before": gate.get("best_before"),
                "val_after": gate.get("candidate_score"),
                "items_improved": improved,
                "items_regressed": regressed,
                "p": sign_test_p(improved, regressed),
            }
        )
    return history


def _significance_tests(rd: RunDirectory) -> list[dict[str, Any]]:
    """Each candidate the significance gate tested (train.gate.significance): the
    one-sided p it decided by, over the items it counted, and whether it kept the
    candidate. Apart from the accepted edits' p, which is two-sided and always computed."""
    tests = []
    for _, gate in _gates(rd):
        test = gate.get("significance")
        if not isinstance(test, dict):
            continue
        tests.append(
            {
                "step": gate.get("step"),
                "source": gate.get("source", "step"),
                "kept": bool(gate.get("became_best")),
                "p": test.get("p"),
                "items_counted": test.get("items_counted"),
                "alpha": test.get("alpha"),
                "rescored": "rescored" in test,
            }
        )
    return tests


def _gates(rd: RunDirectory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every readable gate record (a step's gate.json, a merge's merge_gate.json), in
    step order."""
    for gate_path in sorted((rd.path / "steps").glob("[0-9][0-9][0-9][0-9]/*gate.json")):
        gate = _json(gate_path)
        if isinstance(gate, dict):
            yield gate_path, gate


def _spend(summary: Mapping[str, Any]) -> dict[str, Any]:
    usage = summary.get("usage") or {}
    return {
        key: usage.get(key)
        for key in ("calls", "cache_hits", "input_tokens", "output_tokens", "per_role")
        if key in usage
    }


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
