"""Tiny fixture data for the benchmark environments, made by us in the real shapes: a
manifest folder and a data folder in the published `{train,val,test}/items.json` layout,
and the scripted TEST DOUBLE client the rollouts run through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.config import config_from_dict
from core.models.factory import build_model_client

SPLIT_IDS = {"train": ["t1", "t2"], "val": ["v1"], "test": ["x1"]}


def write_split_dirs(root: Path, rows: dict[str, list[dict[str, Any]]]) -> Path:
    for split, items in rows.items():
        (root / split).mkdir(parents=True, exist_ok=True)
        (root / split / "items.json").write_text(json.dumps(items), encoding="utf-8")
    return root


def write_manifest(root: Path, ids: dict[str, list[str]] = SPLIT_IDS, **fields: Any) -> Path:
    """A manifest folder of `ids`; `fields[id]` adds manifest fields to an entry."""
    rows = {s: [{"id": i, **fields.get(i, {})} for i in v] for s, v in ids.items()}
    write_split_dirs(root, rows)
    counts = {s: len(v) for s, v in ids.items()}
    (root / "split_manifest.json").write_text(json.dumps({"counts": counts}), encoding="utf-8")
    return root


def scripted_client(responder):
    """A model client whose target is the scripted TEST DOUBLE `responder` (no cache)."""
    config = config_from_dict({"cache": {"enabled": False}})
    return build_model_client(config, scripted={"target": responder})
