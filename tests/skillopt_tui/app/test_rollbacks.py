"""What of an adoption was rolled back, read from the rollback commits in a log."""

from __future__ import annotations

from core.skills_repo import LogEntry
from skillopt_tui.app.rollbacks import rollbacks


def _entry(sha: str, kind: str, **trailers: str) -> LogEntry:
    return LogEntry(sha, f"{kind} {sha}", kind, trailers, "2026-12-01T00:00:00+00:00", "t")


def test_partial_rollbacks_add_up_and_a_whole_one_ends_the_adoption():
    log = [
        _entry("r3", "rollback", Reverts="b", **{"Skillopt-Op": "rollback"}),
        _entry("r2", "rollback", Reverts="a", Hunks="3"),
        _entry("r1", "rollback", Reverts="a", Hunks="1"),
        _entry("b", "adopt"),
        _entry("a", "adopt"),
    ]
    found = rollbacks(log)
    assert set(found) == {"a", "b"}
    assert found["a"].describe() == "hunks 1, 3 rolled back"
    assert found["a"].live(3) == [2] and found["a"].by == ("r2", "r1")
    assert found["b"].describe() == "rolled back" and found["b"].live(3) == []
