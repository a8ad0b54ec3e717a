"""The stored tasks split again, once, when the split's scheme changed.

Why: the split used to hash a task's id and now hashes its request (sleep/mine/split.py).
The archive (`<state>/tasks.json`) keeps no split: every night computes it. So after the
upgrade every stored task would take the new scheme's split at once, and a task an
earlier night trained on could land in val, where it would gate on what the optimizer
already saw (a leak). Here, on the first night after the upgrade, each stored task an
earlier night replayed (its frozen `<state>/nights/<id>/tasks.json`: the splits the
optimizer really saw, whatever scheme made them) gets the new scheme's split only where
that moves it nowhere the optimizer could have seen it from: it may move from val (or
test) to train, or keep its old split; it never moves out of train. A task no night
replayed takes the new split. The tasks that keep an old split differing from the new
one are pinned in `<state>/split-scheme.json` with the scheme's version, so every later
night reads the same splits (no night mixes schemes, and the re-split happens once);
night.json says what moved and what was kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_json
from core.errors import UserError
from sleep.mine.split import task_split
from sleep.mine.tasks import MinedTask

SCHEME = 2  # 1: the task id's hash; 2: the request's hash (sleep/mine/split.py)
FILE = "split-scheme.json"
SPLITS = ("train", "val", "test")


@dataclass
class Resplit:
    """The splits pinned to an old scheme's (task id → split), and, on the night that
    split the archive again, what moved ({task, from, to}) and what kept its old split
    ({task, split, new}: the split the new scheme would have given it)."""

    pinned: dict[str, str] = field(default_factory=dict)
    moved: list[dict[str, str]] = field(default_factory=list)
    kept: list[dict[str, str]] = field(default_factory=list)
    now: bool = False  # this night split the archive again
    said: dict[str, Any] = field(default_factory=dict)  # what a resumed night said already

    def report(self) -> dict[str, Any]:
        """What night.json says of it ({} on a night that did not split again)."""
        if not self.now:
            return self.said
        return {"scheme": SCHEME, "moved": self.moved, "kept_old_split": self.kept}

    def line(self) -> str:
        return (
            f"the stored tasks were split again for the request-hashed split (scheme "
            f"{SCHEME}), once: {len(self.moved)} moved (only ever to train), "
            f"{len(self.kept)} kept their old split (a task trained on never moves to val); "
            "night.json lists them under resplit"
        )


def seen_splits(state_dir: Path) -> dict[str, str]:
    """Each task id an earlier night replayed → its split there; train when any night
    trained on it (an unreadable night says nothing)."""
    seen: dict[str, str] = {}
    for frozen in sorted((Path(state_dir) / "nights").glob("*/tasks.json")):
        try:
            skills = json.loads(frozen.read_text(encoding="utf-8")).get("skills", {})
            pairs = [(str(t["id"]), split) for splits in skills.values()
                     for split, tasks in splits.items() for t in tasks]  # fmt: skip
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            continue
        for task, split in pairs:
            if split in SPLITS and seen.get(task) != "train":
                seen[task] = split
    return seen


def trained_pins(state_dir: Path) -> dict[str, str]:
    """Each task an earlier night trained on, pinned to train: a night that picks which
    occurrence of a preference to hold out (sleep/night/held_out.py) never picks one the
    optimizer has seen."""
    return {task: split for task, split in seen_splits(state_dir).items() if split == "train"}


def upgraded(old: str, new: str) -> str:
    """The split a stored task takes: the new one when it moves it nowhere or to train
    (what was held out may teach; what taught may never be held out), else its old one."""
    return new if new in (old, "train") else old


def resplit_once(
    state_dir: Path,
    stored: Mapping[str, MinedTask],
    *,
    val_fraction: float,
    test_fraction: float,
    write: bool = True,
) -> Resplit:
    """The pinned splits; the first time (no record yet) the archive's tasks `stored` are
    split again and the record written (unless `write` is False: a dry run)."""
    path = Path(state_dir) / FILE
    if path.exists():
        return Resplit(pinned=pinned_splits(state_dir))
    out = Resplit(now=bool(stored))
    seen = seen_splits(state_dir)
    for task in sorted(stored.values(), key=lambda t: t.id):
        old = seen.get(task.id)
        if old is None:  # no night replayed it: the new split shows it nowhere it was
            continue
        new = task_split(task, val_fraction=val_fraction, test_fraction=test_fraction)
        split = upgraded(old, new)
        if split != old:
            out.moved.append({"task": task.id, "from": old, "to": split})
        if split != new:
            out.pinned[task.id] = split
            out.kept.append({"task": task.id, "split": split, "new": new})
    if write:
        write_json(path, {"scheme": SCHEME, "pinned": out.pinned, "moved": out.moved})
    return out


def pinned_splits(state_dir: Path) -> dict[str, str]:
    """The recorded pins ({} before the first re-split); a damaged record is one line."""
    path = Path(state_dir) / FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pinned = data.get("pinned") if isinstance(data, dict) else None
        if not isinstance(pinned, dict) or data.get("scheme") != SCHEME:
            raise ValueError(f"not {{scheme: {SCHEME}, pinned: {{...}}}}")
        if not all(isinstance(k, str) and v in SPLITS for k, v in pinned.items()):
            raise ValueError("a pinned split is not train, val or test")
    except (OSError, ValueError) as exc:
        raise UserError(
            f"{path}: the record of the stored tasks' splits is unreadable ({exc}); restore "
            "it from a backup (deleting it splits the stored tasks again, which may hold "
            "out tasks earlier nights trained on)"
        ) from None
    return dict(pinned)
