"""The published split manifests (copied from shared/manifests/, MIT) are complete: the
counts the issue and the paper list, ids unique and disjoint across splits, licence kept."""

import json
from pathlib import Path

import pytest

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"

# From the published method (DESIGN §6, issue 14). ALFWorld's val/test are valid_seen/unseen.
PUBLISHED_COUNTS = {
    "searchqa_id_split": {"train": 400, "val": 200, "test": 1400},
    "livemathematicianbench_id_split": {"train": 35, "val": 17, "test": 125},
    "docvqa_id_split": {"train": 107, "val": 53, "test": 374},
    "officeqa_id_split": {"train": 50, "val": 24, "test": 172},
    "spreadsheetbench_id_split": {"train": 80, "val": 40, "test": 280},
    "alfworld_path_split": {"train": 39, "val": 18, "test": 134},
}


def _items(folder: str, split: str) -> list[dict]:
    return json.loads((MANIFESTS / folder / split / "items.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("folder", sorted(PUBLISHED_COUNTS))
def test_split_counts_match_the_published_ones(folder):
    counts = {split: len(_items(folder, split)) for split in ("train", "val", "test")}
    assert counts == PUBLISHED_COUNTS[folder]
    summary = json.loads((MANIFESTS / folder / "split_manifest.json").read_text())
    assert summary["counts"] == PUBLISHED_COUNTS[folder]


@pytest.mark.parametrize("folder", sorted(PUBLISHED_COUNTS))
def test_ids_are_unique_and_splits_disjoint(folder):
    seen: dict[str, str] = {}
    for split in ("train", "val", "test"):
        for entry in _items(folder, split):
            assert isinstance(entry["id"], str) and entry["id"]
            assert entry["id"] not in seen, f"{entry['id']} in {seen.get(entry['id'])} and {split}"
            seen[entry["id"]] = split


def test_alfworld_val_and_test_are_valid_seen_and_unseen():
    assert {e["gamefile"].split("/")[1] for e in _items("alfworld_path_split", "train")} == {
        "train"
    }
    assert {e["gamefile"].split("/")[1] for e in _items("alfworld_path_split", "val")} == {
        "valid_seen"
    }
    assert {e["gamefile"].split("/")[1] for e in _items("alfworld_path_split", "test")} == {
        "valid_unseen"
    }


def test_the_upstream_licence_and_notice_travel_with_the_copy():
    licence = (MANIFESTS / "LICENSE-upstream-MIT.txt").read_text()
    assert "MIT License" in licence and "Microsoft" in licence
    assert "LICENSE-upstream-MIT.txt" in (MANIFESTS / "NOTICE.md").read_text()
