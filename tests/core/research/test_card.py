"""The run card on recorded runs of the scenario (tests/support/recorded_runs.py)."""

from __future__ import annotations

import json

import pytest

from core.environment.contract import TaskItem
from core.research.card import read_card
from core.research.card_text import card_lines
from core.research.split_hash import split_fingerprint
from tests.support.recorded_runs import record_run
from tests.support.train_scenario import TEST


def _items(rows):
    return [
        TaskItem(id=i, task_type="country_to_capital", question=q, answer=a) for i, q, a, _ in rows
    ]


def test_split_hash_changes_when_one_item_changes():
    items = _items(TEST)
    before = split_fingerprint(items)
    relabelled = list(items)
    relabelled[1] = TaskItem(
        id="x02", task_type="country_to_capital", question=TEST[1][1], answer="Cusco"
    )
    after = split_fingerprint(relabelled)
    assert before["size"] == after["size"] == 3
    assert before["sha256"] != after["sha256"]
    assert split_fingerprint(items) == before  # the same items hash the same


def test_card_of_a_recorded_run(tmp_path):
    run = record_run(tmp_path, "full")
    card = read_card(run)
    assert card is not None
    assert card["splits"]["test"]["size"] == 3 and card["splits"]["val"]["size"] == 5
    assert len(card["splits"]["test"]["sha256"]) == 64
    assert card["seeds"] == {"run.seed": 0}
    assert card["items_averaged"] == {
        "val.initial": 5,
        "val.best": 5,
        "test.initial": 3,
        "test.best": 3,
        "test.final": 3,
    }
    # step 0 is the only accepted candidate: v03 v04 v05 improved, nothing regressed
    [edit] = card["accepted_edits"]
    assert (edit["step"], edit["val_before"], edit["val_after"]) == (0, 0.0, 0.6)
    assert (edit["items_improved"], edit["items_regressed"]) == (3, 0)
    assert edit["p"] == pytest.approx(0.25)
    assert len(edit["edits"]) == 4
    assert card["test"] == pytest.approx({"initial": 0.0, "best": 2 / 3, "final": 2 / 3})
    assert card["models"][0]["role"] == "target" and card["models"][0]["calls"] > 0
    assert card["spend"]["calls"] == card["models"][0]["calls"]
    json.dumps(card)  # a card is plain JSON


def test_card_shows_the_significance_gates_own_p(tmp_path):
    # The p the gate decided by (one-sided, over the items it counted) is a field of the
    # card and a line of `runs show`, not only words inside gate.json's reason.
    card = read_card(record_run(tmp_path, "significance"))
    first = card["significance_tests"][0]
    assert (first["step"], first["source"], first["kept"]) == (0, "step", False)
    assert first["p"] == pytest.approx(1 / 8) and first["items_counted"] == 3
    assert first["alpha"] == 0.1 and first["rescored"] is False
    lines = list(card_lines(card))
    assert (
        "  gate test step 0: one-sided p=0.125 over 3 changed items (alpha 0.1): rejected" in lines
    )


def test_card_hash_changes_when_one_test_item_changes(tmp_path):
    """The same run recorded on a test split with one item re-labelled gets another hash."""
    first = read_card(record_run(tmp_path / "one", "no_edit"))
    data = tmp_path / "two" / "data" / "capitals.jsonl"
    second_root = tmp_path / "two"
    record_run(second_root, "no_edit")  # writes the fixture, then change one item's answer
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for row in rows:
        if row["id"] == "x02":
            row["answer"] = "Cusco"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from core.research.card import build_card
    from skillopt_tui.cli.run_cards import splits_of_run

    rebuilt = build_card(
        second_root / "runs" / "no_edit", splits_of_run(second_root / "runs" / "no_edit")
    )
    assert rebuilt["splits"]["test"]["size"] == first["splits"]["test"]["size"]
    assert rebuilt["splits"]["test"]["sha256"] != first["splits"]["test"]["sha256"]
    assert rebuilt["splits"]["val"]["sha256"] == first["splits"]["val"]["sha256"]
