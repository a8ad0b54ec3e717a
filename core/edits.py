"""Bounded edits to a skill document (DESIGN §3).

Types are fixed here; the application logic (exact-then-whitespace-normalised matching,
protected blocks, statuses) lives below them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Literal

EditOp = Literal["insert_after", "append", "replace", "delete"]
EDIT_OPS: tuple[str, ...] = ("insert_after", "append", "replace", "delete")


@dataclass(frozen=True)
class Edit:
    op: str  # one of EDIT_OPS; anything else is reported as `invalid`, not raised
    target: str = ""  # exact text from the skill ("" for append)
    content: str = ""
    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edit:
        return cls(
            op=str(data.get("op", "")),
            target=str(data.get("target", "") or ""),
            content=str(data.get("content", "") or ""),
            rationale=str(data.get("rationale", "") or ""),
        )


class EditStatus(str, Enum):
    APPLIED = "applied"
    TARGET_NOT_FOUND = "target_not_found"
    AMBIGUOUS = "ambiguous"
    PROTECTED = "protected"
    INVALID = "invalid"


@dataclass(frozen=True)
class EditOutcome:
    edit: Edit
    status: EditStatus
    reason: str = ""


@dataclass(frozen=True)
class ApplyReport:
    outcomes: tuple[EditOutcome, ...]

    @property
    def applied(self) -> int:
        return sum(o.status is EditStatus.APPLIED for o in self.outcomes)

    def unmatched(self) -> list[EditOutcome]:
        return [o for o in self.outcomes if o.status is not EditStatus.APPLIED]

    def to_dict(self) -> list[dict[str, Any]]:
        return [
            {**o.edit.to_dict(), "status": o.status.value, "reason": o.reason}
            for o in self.outcomes
        ]
