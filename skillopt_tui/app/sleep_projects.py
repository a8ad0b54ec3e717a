"""Which recorded project the Sleep screen shows, and which nights and mined tasks are
that project's.

`sleep init --project P` records several projects and `sleep run` runs a night for each,
so the screen shows one project at a time and `p` moves to the next. A night records its
project in night.json and a mined task its `project`; one from before projects were a
list (no project), or of a project no longer recorded, is shown with the first project,
so nothing the state directory holds ever drops out of sight.
"""

from __future__ import annotations

import os
from pathlib import Path


def _same(a: str | Path, b: Path) -> bool:
    return os.path.normpath(os.path.expanduser(str(a))) == os.path.normpath(str(b))


def shown_with(item_project: str | None, selected: Path, recorded: list[Path]) -> bool:
    """Whether a night or task of `item_project` is shown while `selected` is."""
    if len(recorded) <= 1:
        return True
    if item_project and any(_same(item_project, p) for p in recorded):
        return _same(item_project, selected)
    return _same(selected, recorded[0])


def choice_line(selected: Path, recorded: list[Path]) -> str:
    """The header's note on which project is shown ("" for one)."""
    if len(recorded) <= 1:
        return ""
    at = next((i for i, p in enumerate(recorded) if _same(p, selected)), 0)
    return f" ({at + 1} of {len(recorded)} projects, p: next)"
