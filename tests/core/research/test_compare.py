"""compare on recorded runs of the scenario (tests/support/recorded_runs.py): the per-item
table and the sign test's p follow from the double's documented behaviour."""

from __future__ import annotations

import json

import pytest

from core.research.card import build_card, read_card
from core.research.compare import SplitsDiffer, check_same_test_split, compare_runs, load_run_scores
from core.research.compare_text import comparison_lines
from skillopt_tui.cli.run_cards import splits_of_run
from tests.support.recorded_runs import record_run


def _compare(paths, skill="best"):
    cards = [read_card(p) for p in paths]
    check_same_test_split(cards)
    return compare_runs(
        [load_run_scores(p, c, skill) for p, c in zip(paths, cards, strict=True)], skill
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("recorded")
    return {shape: record_run(root, shape) for shape in ("no_edit", "one_edit", "full")}


def _table(split):
    return {row["item"]: (row["scores"], row["outcomes"][1:]) for row in split.rows}


def test_two_runs_item_by_item(recorded):
    comparison = _compare([recorded["no_edit"], recorded["full"]])
    val, test = comparison.splits
    assert _table(val) == {
        "v01": ([0.0, 0.0], ["same"]),
        "v02": ([0.0, 0.0], ["same"]),
        "v03": ([0.0, 1.0], ["improved"]),
        "v04": ([0.0, 1.0], ["improved"]),
        "v05": ([0.0, 1.0], ["improved"]),
    }
    assert _table(test) == {
        "x01": ([0.0, 0.0], ["same"]),
        "x02": ([0.0, 1.0], ["improved"]),
        "x03": ([0.0, 1.0], ["improved"]),
    }
    base, full = val.runs
    assert base["p"] is None and (base["n"], base["mean"]) == (5, 0.0)
    assert (full["improved"], full["regressed"], full["same"]) == (3, 0, 2)
    assert full["p"] == pytest.approx(0.25)  # 3 of 3 changed items up: 2 * (1/2)^3
    assert test.runs[1]["p"] == pytest.approx(0.5)
    # Wilson's 95% interval of 0 of 5 and of 3 of 5
    assert (base["low"], base["high"]) == pytest.approx((0.0, 0.4345), abs=1e-4)
    assert (full["low"], full["high"]) == pytest.approx((0.2307, 0.8824), abs=1e-4)
    assert full["method"] == "wilson"
    assert [r["tokens"] > 0 for r in comparison.runs] == [True, True]


def test_three_runs_against_the_first(recorded):
    comparison = _compare([recorded["no_edit"], recorded["one_edit"], recorded["full"]])
    val, test = comparison.splits
    assert [(r["improved"], r["regressed"], r["p"]) for r in val.runs[1:]] == [
        (2, 0, pytest.approx(0.5)),
        (3, 0, pytest.approx(0.25)),
    ]
    assert _table(test)["x02"] == ([0.0, 0.0, 1.0], ["same", "improved"])
    assert comparison.seed_groups == []  # three configs, one seed each


def test_the_initial_skills_are_the_same_in_every_run(recorded):
    comparison = _compare([recorded["no_edit"], recorded["full"]], skill="initial")
    for split in comparison.splits:
        assert {o for row in split.rows for o in row["outcomes"]} == {"same"}


def test_seeds_of_one_config_give_mean_and_spread(tmp_path):
    runs = [record_run(tmp_path, "full", name=f"seed{s}", seed=s) for s in (0, 1)]
    comparison = _compare(runs)
    [group] = comparison.seed_groups
    assert group["runs"] == ["seed0", "seed1"]
    assert group["test"] == pytest.approx({"mean": 2 / 3, "sd": 0.0, "n_runs": 2})


def test_runs_tested_on_different_items_are_refused(tmp_path, recorded):
    other = record_run(tmp_path, "full", name="relabelled")
    data = tmp_path / "data" / "capitals.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for row in rows:
        if row["id"] == "x03":
            row["question"] = "What is the capital city of Japan?"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    card = build_card(other, splits_of_run(other))
    with pytest.raises(SplitsDiffer) as refused:
        check_same_test_split([read_card(recorded["full"]), card])
    message = str(refused.value)
    assert "\n" not in message
    assert "different test splits" in message and "relabelled" in message


def test_the_markdown_table(recorded):
    lines = list(comparison_lines(_compare([recorded["no_edit"], recorded["full"]]), markdown=True))
    assert "| item | no_edit | full |" in lines
    assert "| v05 | 0.000 | 1.000 ▲ |" in lines
    assert "| full | 5 | 0.600 | [0.231, 0.882] | +3 -0 =2 | 0.25 |" in lines
