"""TEST DOUBLE: the night double's brain, except its analysts first propose replacing a
line the skill does not have (the strong-model night's `target_not_found`), then append
the rule as before. Load it as `tests.sleep.night_double_missing:brain`."""

from __future__ import annotations

import json

from tests.sleep.night_double import RULE, Brain

MISSING = "Keep answers brief."


class MissingTargetBrain(Brain):
    def __call__(self, request) -> str:
        reply = super().__call__(request)
        try:
            data = json.loads(reply)
        except ValueError:
            return reply
        if isinstance(data, dict) and "edits" in data:
            replace = {"op": "replace", "target": MISSING, "content": RULE, "rationale": "r"}
            data["edits"] = [replace, *data["edits"]]
            return json.dumps(data)
        return reply


def brain() -> MissingTargetBrain:
    return MissingTargetBrain()
