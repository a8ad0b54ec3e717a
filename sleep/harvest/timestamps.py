"""Transcript timestamps (UTC ISO-8601, `Z` suffix, milliseconds) and `--since` dates."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(value: str | None) -> datetime | None:
    """An aware datetime, or None for a missing or unreadable stamp (never raises)."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def parse_since(value: str) -> datetime:
    """`2026-03-01` (midnight in the local time zone) or a full ISO-8601 time (naive
    means local time). Raises ValueError with a message for the user."""
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"bad --since {value!r}: give a date like 2026-03-01 or a time like "
            "2026-03-01T14:00:00+01:00"
        ) from None
    return when if when.tzinfo else when.astimezone()
