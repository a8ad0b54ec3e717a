"""The files an environment declares in `worker_needs.files`, on workers that lack them.

A worker that reads the path (a shared mount, or the driver's own machine) uses it; else
the driver's copy, packed once per run and shipped through Ray's object store, is unpacked
once per node into a cache keyed by its content, and the item's paths under the declared
one are rewritten to that copy before the rollout. So a cluster of fresh machines runs
spreadsheetbench or a small ALFWorld split with nothing mounted. What the object store
should not carry (the full ALFWorld game files are gigabytes) stays a mount: a folder over
`SHIP_LIMIT_BYTES` is not packed, and a worker without it says so in one line.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ray

from core.environment.contract import TaskItem

SHIP_LIMIT_BYTES = 256 * 1024**2  # what one declared path may weigh to be shipped
CACHE_DIR = "skillopt-ray-files"  # under the worker's temp folder, one folder per content
PRUNE_AFTER_S = 24 * 3600  # a node's copy no task used for this long is removed


def pack(folder: Path) -> bytes:
    """The folder as an in-memory tar (symlinks kept as links, as the workspace copy does)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(blob: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: refuse odd members
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)


@dataclass(frozen=True)
class ShippedPath:
    """One declared path as the driver saw it: its packed copy in the object store (None
    when it was missing or over the limit there, and so must be mounted) and its digest."""

    path: str
    blob: Any | None = None  # a Ray ObjectRef of the tar
    digest: str = ""
    why_not: str = ""  # why it was not shipped, for the worker's error


def _weight(path: Path, limit: int) -> int:
    """Bytes under `path`, counted until past `limit` (a huge folder is not walked whole)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
            if total > limit:
                return total
    return total


def ship(paths: tuple[str, ...]) -> tuple[ShippedPath, ...]:
    """Pack each declared folder that exists here and is small enough, once per run."""
    shipped = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            why = "it is not a folder on the driver" if path.exists() else "the driver lacks it"
            shipped.append(ShippedPath(raw, why_not=why))
            continue
        if _weight(path, SHIP_LIMIT_BYTES) > SHIP_LIMIT_BYTES:
            why = f"it is over the {SHIP_LIMIT_BYTES // 1024**2} MiB the executor ships"
            shipped.append(ShippedPath(raw, why_not=why))
            continue
        blob = pack(path)
        digest = hashlib.sha256(blob).hexdigest()[:32]
        shipped.append(ShippedPath(raw, ray.put(blob), digest))
    return tuple(shipped)


def _copy_on_this_node(shipped: ShippedPath) -> str:
    """The unpacked copy in this node's cache, made by the first task that needs it (a
    task racing it on the node unpacks aside and keeps whichever copy landed first).
    Each use touches the copy, and a new copy prunes the ones no task used for a day."""
    root = Path(tempfile.gettempdir()) / CACHE_DIR
    root.mkdir(mode=0o700, exist_ok=True)
    final = root / shipped.digest
    if not final.is_dir():
        _prune(root)
        aside = Path(tempfile.mkdtemp(prefix=f".{shipped.digest}-", dir=root))
        unpack(ray.get(shipped.blob), aside)
        os.utime(aside)  # fresh before it is visible: the tar set the driver's old mtime
        try:
            os.rename(aside, final)
        except OSError:  # another task's copy landed first
            shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(OSError):  # in use now
        os.utime(final)
    return str(final)


def _prune(root: Path) -> None:
    """Copies (and a crashed task's half-unpacked ones) untouched for PRUNE_AFTER_S."""
    stale = time.time() - PRUNE_AFTER_S
    for entry in root.iterdir():
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < stale:
                shutil.rmtree(entry, ignore_errors=True)


def _rewritten(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        if value == old or value.startswith(old.rstrip(os.sep) + os.sep):
            return new + value[len(old.rstrip(os.sep)) :]
        return value
    if isinstance(value, dict):
        return {k: _rewritten(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewritten(v, old, new) for v in value]
    return value


def localize(item: TaskItem, shipped: tuple[ShippedPath, ...]) -> tuple[TaskItem, str | None]:
    """(the item with its paths pointing at this node's copies, None) or (the item, why a
    declared path cannot be had here) — on the worker, before the rollout."""
    for one in shipped:
        if os.path.exists(one.path):
            continue  # mounted here (or the driver's machine)
        if one.blob is None:
            return item, f"cannot read {one.path} ({one.why_not}): mount it at that path"
        local = _copy_on_this_node(one)
        item = replace(item, data=_rewritten(item.data, one.path, local))
    return item, None
