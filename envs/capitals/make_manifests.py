"""(Re)generate manifests/capitals/{train,val,test}.json and split_manifest.json.

Run `python -m envs.capitals.make_manifests [--out DIR]`. The split is a pure function of
the data file and SEED, so running it again writes identical files.

Items are split by *country*, not by item: both questions about one country ("capital of
France?" and "Paris is the capital of which country?") land in the same split, so a worked
example taken from train can never give away a val or test answer. A country's bucket is
sha256("<seed>:<country>") mod 100 compared with the cumulative fractions; a threshold (not
a sorted cut) keeps every other country in place when one is added.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from core.atomic import write_json
from envs.capitals.environment import DATA_FILE, DEFAULT_DATA_DIR, read_items

SEED = 20261129
FRACTIONS = {"train": 0.6, "val": 0.2, "test": 0.2}
PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = PROJECT_ROOT / "manifests" / "capitals"


def split_of(country: str, seed: int = SEED) -> str:
    bucket = int(hashlib.sha256(f"{seed}:{country}".encode()).hexdigest()[:8], 16) % 100
    edge = 0.0
    for split, fraction in FRACTIONS.items():
        edge += fraction * 100
        if bucket < round(edge):
            return split
    return "test"


def make_splits(data_dir: Path = DEFAULT_DATA_DIR, seed: int = SEED) -> dict[str, list[str]]:
    """Ids per split, in data-file order."""
    splits: dict[str, list[str]] = {name: [] for name in FRACTIONS}
    for item in read_items(data_dir / DATA_FILE).values():
        splits[split_of(item.data["country"], seed)].append(item.id)
    return splits


def write_manifests(out: Path, data_dir: Path = DEFAULT_DATA_DIR, seed: int = SEED) -> dict:
    splits = make_splits(data_dir, seed)
    for name, ids in splits.items():
        write_json(out / f"{name}.json", ids)
    data_bytes = (data_dir / DATA_FILE).read_bytes()
    summary = {
        "benchmark": "capitals",
        "manifest_type": "id_split",
        "data_file": f"envs/capitals/data/{DATA_FILE}",
        "data_sha256": hashlib.sha256(data_bytes).hexdigest(),
        "seed": seed,
        "method": "by country: sha256('<seed>:<country>') mod 100 vs cumulative fractions",
        "fractions": FRACTIONS,
        "counts": {name: len(ids) for name, ids in splits.items()},
        "generator": "python -m envs.capitals.make_manifests",
    }
    write_json(out / "split_manifest.json", summary)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    summary = write_manifests(args.out)
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v}" for k, v in summary["counts"].items()))


if __name__ == "__main__":
    main()
