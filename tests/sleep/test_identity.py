"""SessionIdentity.to_json and the saved cursors are what `dataclasses.asdict` gave, built
without its deep copies (a tenth of a first harvest of many files)."""

import dataclasses
import json

from sleep.harvest.cursors import Cursor, HarvestState
from sleep.harvest.identity import SessionIdentity


def _identity() -> SessionIdentity:
    return SessionIdentity(
        "s1", "/srv/app", "main", True, "subagent", ["tdd"], ["/srv/app/AGENTS.md"],
        {"events": True, "fallback_keys": ["ab", "cd"], "fork": {"of": ["x"], "n": 3}},
    )  # fmt: skip


def test_to_json_is_asdict_and_a_copy():
    ident = _identity()
    data = ident.to_json()
    assert data == dataclasses.asdict(ident)
    assert list(data) == [f.name for f in dataclasses.fields(SessionIdentity)]
    data["skills"].append("other")
    data["carry"]["fallback_keys"].append("ef")
    data["carry"]["fork"]["of"].append("y")
    assert ident.skills == ["tdd"]
    assert ident.carry["fallback_keys"] == ["ab", "cd"]
    assert ident.carry["fork"]["of"] == ["x"]
    assert SessionIdentity.from_json(ident.to_json()) == ident


def test_saved_state_is_what_asdict_wrote(tmp_path):
    state = HarvestState()
    state.cursors["b"] = Cursor("b.jsonl", 10, 5, 10, "h", "t", True, _identity().to_json())
    state.cursors["a"] = Cursor("a.jsonl", 0, 1, 0, "", "", False)
    state.save(tmp_path / "state.json")
    saved = json.loads((tmp_path / "state.json").read_text())
    assert saved["cursors"] == {k: dataclasses.asdict(c) for k, c in sorted(state.cursors.items())}
    assert list(saved["cursors"]["b"]) == [f.name for f in dataclasses.fields(Cursor)]
    assert HarvestState.load(tmp_path / "state.json").cursors == state.cursors
