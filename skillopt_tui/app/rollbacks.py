"""Which adoptions on main were rolled back, and which of their hunks: read from the log's
rollback commits (`Reverts: <sha>`, and `Hunks: 2,3` when only some were), so History shows
it and offers to roll back only what is still live. Recomputed from each log read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RolledBack:
    whole: bool  # a rollback of the whole adoption (no Hunks: trailer)
    hunks: frozenset[int]  # the hunks rolled back one by one
    by: tuple[str, ...]  # the rollback commits, newest first

    def describe(self) -> str:
        """ "rolled back", or "hunk 2 rolled back", "hunks 1, 3 rolled back"."""
        if self.whole:
            return "rolled back"
        names = ", ".join(str(i) for i in sorted(self.hunks))
        return f"hunk{'s' if len(self.hunks) > 1 else ''} {names} rolled back"

    def live(self, count: int) -> list[int]:
        """The adoption's hunks (1..count) a rollback can still revert."""
        return [] if self.whole else [i for i in range(1, count + 1) if i not in self.hunks]


def rollbacks(entries: Iterable[Any]) -> dict[str, RolledBack]:
    """{adoption sha: what of it was rolled back} over log entries (newest first)."""
    found: dict[str, RolledBack] = {}
    for entry in entries:
        if entry.kind != "rollback":
            continue
        target = entry.trailers.get("Reverts", "")
        if not target:
            continue
        known = found.get(target, RolledBack(False, frozenset(), ()))
        numbers = _numbers(entry.trailers.get("Hunks"))
        found[target] = RolledBack(
            known.whole or numbers is None,
            known.hunks | (numbers or frozenset()),
            (*known.by, entry.sha),
        )
    return found


def _numbers(value: str | None) -> frozenset[int] | None:
    """The hunk numbers of a `Hunks:` trailer; None when there is none (all hunks)."""
    if value is None:
        return None
    return frozenset(int(part) for part in value.split(",") if part.strip().isdigit())
