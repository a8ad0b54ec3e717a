"""A run card as lines a person reads in a terminal (`skillopt runs show`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core.words import counted


def _score(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def card_lines(card: Mapping[str, Any]) -> Iterator[str]:
    yield f"run {card['run_id']}  env {card['env']}  status {card['status']}  metric {card['metric']}"
    sources = card.get("config_sources") or {}
    if sources:
        yield f"config: {sources.get('file')}"
        for overlay in sources.get("overlays", []):
            yield f"  overlay: {overlay}"
        for override in sources.get("set", []):
            yield f"  --set {override}"
    seeds = ", ".join(f"{k}={v}" for k, v in card.get("seeds", {}).items())
    yield f"seeds: {seeds}"
    for name, split in card.get("splits", {}).items():
        if split.get("sha256"):
            ran = f" (the run used {split['run_items']})" if "run_items" in split else ""
            yield f"split {name}: {split['size']} items  sha256 {split['sha256'][:16]}{ran}"
        else:
            yield f"split {name}: unknown ({split.get('unknown', 'not recorded')})"
    averaged = ", ".join(f"{k} over {n}" for k, n in card.get("items_averaged", {}).items())
    yield f"scores averaged: {averaged or 'none recorded'}"
    for m in card.get("models", []):
        served = f" (served: {', '.join(m['served'])})" if m.get("served") else ""
        yield f"model {m['role']}: {m['model']}{served}  {m['calls']} calls"
    val = card.get("val", {})
    yield (
        f"val: baseline {_score(val.get('baseline'))} → best {_score(val.get('best'))}"
        f" · final {_score(val.get('final'))}"
    )
    for edit in card.get("accepted_edits", []):
        yield (
            f"  accepted step {edit['step']} ({edit['source']}): {len(edit['edits'])} edits, "
            f"val {_score(edit['val_before'])} → {_score(edit['val_after'])}, "
            f"+{edit['items_improved']}/-{edit['items_regressed']} items, p={edit['p']:.4g}"
        )
    for test in card.get("significance_tests", []):
        source = "" if test["source"] == "step" else f" ({test['source']})"
        rescored = ", rescored" if test.get("rescored") else ""
        yield (
            f"  gate test step {test['step']}{source}: one-sided p={test['p']:.4g} over "
            f"{counted(test['items_counted'], 'changed item')} (alpha {test['alpha']:g}{rescored}): "
            + ("kept" if test["kept"] else "rejected")
        )
    test = card.get("test", {})
    if test:
        yield "test: " + ", ".join(f"{role} {_score(v)}" for role, v in test.items())
    spend = card.get("spend", {})
    yield (
        f"spend: ${spend.get('cost_usd') or 0:.4f}  {spend.get('calls', 0)} calls  "
        f"{spend.get('input_tokens', 0)} in / {spend.get('output_tokens', 0)} out tokens"
    )
