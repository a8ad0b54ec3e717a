"""What a model call is for ("analyst-failure-2", "merge-0", "judge"), as the code that makes
it knows and the backend below it does not.

A context variable, so the label travels with the call through the client (and into tasks
an `asyncio.gather` starts) without becoming part of the request: the request key, the
response cache and the providers never see it. The handoff backend names its prompt files
after it, and states the expected answer shape from it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CallLabel:
    kind: str = ""  # e.g. "analyst-failure-2"; empty: the role names the call
    shape: str = ""  # the JSON shape's name (core/optimizer/json_reply.Shape), if one
    example: str = ""  # what such an answer looks like
    repair: int = 0  # the n-th repair re-ask of the same call
    repair_of: str = ""  # the handoff answer file the repair re-ask is about
    # What a free-text answer is, when more than the reply itself (a workspace replay's
    # answer is the final message plus the edits left in the workspace).
    expects: str = ""


CALL_LABEL: contextvars.ContextVar[CallLabel | None] = contextvars.ContextVar(
    "skillopt_call_label", default=None
)


@contextlib.contextmanager
def labelled(kind: str = "", **fields: object) -> Iterator[None]:
    """Calls made inside are labelled `kind` (an outer, more specific kind is kept) with
    `fields` (shape, example, repair) added."""
    current = current_label()
    token = CALL_LABEL.set(replace(current, kind=current.kind or kind, **fields))  # type: ignore[arg-type]
    try:
        yield
    finally:
        CALL_LABEL.reset(token)


def current_label() -> CallLabel:
    return CALL_LABEL.get() or CallLabel()
