"""Split data on disk: the published manifests and the data a user materialises from them.

Both use one layout, the one the published materialisation writes:
`<dir>/{train,val,test}/items.json`, each a JSON array of objects with an `id`. A manifest
holds ids (and a few fields); a data directory holds the full items of the same ids. The
data of a benchmark we may not ship lives outside the checkout, under `$SKILLOPT_DATA`
(default `~/.cache/skillopt/data`) in a folder named after the environment, unless the
config's `env.data_dir` says otherwise.

A split is loaded in manifest order and must hold exactly the manifest's ids: a silently
shrunken or swapped split would make scores incomparable with the published ones.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from core.environment.contract import SPLITS, EnvError

DATA_ENV_VAR = "SKILLOPT_DATA"
ITEMS_FILE = "items.json"


class MissingDataError(EnvError):
    """The environment's data has not been materialised (or is not where the config says)."""


def data_root() -> Path:
    """Where materialised benchmark data lives by default."""
    configured = os.environ.get(DATA_ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".cache/skillopt/data"


def default_data_dir(env_name: str) -> Path:
    return data_root() / env_name


def materialise_hint(env_name: str, source_hint: str) -> str:
    return (
        f"run `skillopt data materialize {env_name} --source PATH` with PATH {source_hint}, "
        f"or set env.data_dir to a folder holding {{train,val,test}}/{ITEMS_FILE}"
    )


def read_items_file(path: Path) -> list[dict[str, Any]]:
    """One split file: a JSON array of objects, each with a string `id`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EnvError(f"{path}: malformed JSON ({exc.msg}, line {exc.lineno})") from None
    except UnicodeDecodeError as exc:
        raise EnvError(
            f"{path}: not UTF-8 text (a bad byte at offset {exc.start}); materialise the "
            "data again, or save the file as UTF-8"
        ) from None
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise EnvError(f"{path}: expected a JSON array of objects")
    for number, row in enumerate(data):
        if not isinstance(row.get("id"), str) or not row["id"]:
            raise EnvError(f"{path}: entry {number} has no string id")
    return data


def manifest_ids(manifest_dir: Path, split: str) -> list[str]:
    path = Path(manifest_dir) / split / ITEMS_FILE
    if not path.is_file():
        raise EnvError(f"split manifest not found: {path} (point env.manifest_dir at it)")
    ids = [row["id"] for row in read_items_file(path)]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise EnvError(f"{path}: id {dup!r} is listed more than once")
    return ids


def load_split_rows(
    env_name: str, manifest_dir: Path, data_dir: Path, split: str, source_hint: str
) -> list[dict[str, Any]]:
    """The split's data rows in manifest order; a one-line error naming how to materialise
    when the data is absent, and naming the ids when data and manifest disagree."""
    if split not in SPLITS:
        raise EnvError(f"{env_name}: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
    path = Path(data_dir) / split / ITEMS_FILE
    if not path.is_file():
        raise MissingDataError(
            f"{env_name}: no data at {path}: {materialise_hint(env_name, source_hint)}"
        )
    ids = manifest_ids(manifest_dir, split)
    rows = {row["id"]: row for row in read_items_file(path)}
    missing = [i for i in ids if i not in rows]
    extra = sorted(set(rows) - set(ids))
    if missing or extra:
        problem = []
        if missing:
            problem.append(f"{len(missing)} manifest id(s) missing, e.g. {missing[0]!r}")
        if extra:
            problem.append(f"{len(extra)} id(s) not in the manifest, e.g. {extra[0]!r}")
        raise EnvError(
            f"{path} does not match the manifest {Path(manifest_dir) / split / ITEMS_FILE}: "
            f"{'; '.join(problem)} (materialise it again from the same manifest)"
        )
    return [rows[i] for i in ids]


def split_sizes(manifest_dir: Path) -> dict[str, int] | None:
    """Ids per split of a manifest folder, or None when it is absent."""
    try:
        return {split: len(manifest_ids(manifest_dir, split)) for split in SPLITS}
    except EnvError:
        return None


def data_present(data_dir: Path) -> bool:
    return all((Path(data_dir) / split / ITEMS_FILE).is_file() for split in SPLITS)
