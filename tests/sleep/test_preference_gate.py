"""Per-edit acceptance of the preference gate (sleep/night/preference_gate.py): what counts
as an edit's held-out evidence."""

from __future__ import annotations

import json
import re

from core.skill.edits import Edit
from sleep.night.preference_gate import PreferenceGate
from tests.sleep.test_preference_night import night_with, project, repo  # noqa: F401

ONE_LINE = "p-571b1e15e7"
LOGGING = "p-14b58f0f2a"


def gate() -> PreferenceGate:
    roles = {"walk": "occurrence", "fees": "occurrence", "verbose": "occurrence", "g": "guard"}
    held = {ONE_LINE: ("walk", "fees"), LOGGING: ("verbose",)}
    return PreferenceGate(roles, 0.7, held)


def rule(pref: str) -> Edit:
    return Edit(op="append", content="a rule", rationale=f"addresses {pref}")


def test_a_judge_step_that_lands_on_the_pass_mark_is_no_evidence():
    """Fails on the old code: the billing night kept the "one line" rule because the
    walk-through went 0.625 -> 0.70 (the judge 0.5 -> 0.6 on a reply it still called the
    long version; 0.75 x 0.6 + 0.25 = the pass mark), its other occurrence still 0."""
    before = {"walk": 0.625, "fees": 0.0, "verbose": 0.0, "g": 1.0}
    after = {"walk": 0.70, "fees": 0.0, "verbose": 1.0, "g": 1.0}
    [(index, why)] = gate().attribute([rule(ONE_LINE), rule(LOGGING)], before, after)
    assert index == 0
    assert "did not move from failing to passing" in why and "walk 0.62 → 0.70" in why


def test_a_judge_only_tenth_across_the_pass_mark_is_no_evidence():
    """Fails on the old code (any higher score was evidence)."""
    before = {"walk": 0.6, "fees": 0.0}
    after = {"walk": 0.7, "fees": 0.0}
    assert [i for i, _ in gate().attribute([rule(ONE_LINE)], before, after)] == [0]


def test_a_rise_that_does_not_pass_is_no_evidence_and_a_real_pass_is():
    edit = rule(ONE_LINE)
    assert gate().attribute([edit], {"walk": 0.2}, {"walk": 0.6})  # higher, still failing
    assert gate().attribute([edit], {"walk": 0.7}, {"walk": 1.0})  # passed before already
    before, after = {"walk": 0.625, "fees": 0.0}, {"walk": 0.625, "fees": 0.775}
    assert gate().attribute([edit], before, after) == []  # a check flipped with the judge
    why = gate().kept_because(edit, before, after)
    assert why == f"held-out evidence: {ONE_LINE}: fees 0.00 → 0.78 (failing → passing)"


async def test_night_json_says_why_each_staged_edit_was_kept(tmp_path, repo, project):  # noqa: F811
    """Fails on the old code: night.json listed the staged edits without why."""
    night, _result, _lines = await night_with(tmp_path, repo, project, "brain_rule")
    saved = json.loads((night.folder / "night.json").read_text())
    [edit] = saved["skills"]["project"]["evidence"]["edits"]
    assert re.fullmatch(
        r"held-out evidence: p-\w{10}: t-\w+ 0\.\d\d → 0\.\d\d \(failing → passing\), "
        r"t-\w+ 0\.\d\d → 0\.\d\d \(failing → passing\)",
        edit["kept_because"],
    ), edit["kept_because"]
