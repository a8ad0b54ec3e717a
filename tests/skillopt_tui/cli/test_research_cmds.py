"""`skillopt compare` as a user runs it, on runs recorded with the scenario's TEST DOUBLE."""

from __future__ import annotations

import json

from tests.skillopt_tui.cli.test_train_cmds import one_line_error, skillopt
from tests.support.recorded_runs import record_run


def test_compare_prints_the_table_and_json(tmp_path):
    base, full = record_run(tmp_path, "no_edit"), record_run(tmp_path, "full")
    shown = skillopt(tmp_path, "compare", str(base), str(full))
    assert shown.returncode == 0, shown.stderr
    assert "v05   0.000    1.000 ▲" in shown.stdout
    assert "full     5  0.600  [0.231, 0.882]  +3 -0 =2  0.25" in shown.stdout
    as_json = json.loads(skillopt(tmp_path, "compare", str(base), str(full), "--json").stdout)
    test = next(s for s in as_json["splits"] if s["split"] == "test")
    assert test["runs"][1]["p"] == 0.5


def test_compare_refuses_runs_of_different_test_splits_in_one_line(tmp_path):
    first = record_run(tmp_path / "a", "full")
    data = tmp_path / "b" / "data" / "capitals.jsonl"
    second = record_run(tmp_path / "b", "full")
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows[-1]["answer"] = "Kyoto"  # x03, one test item, changed
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (second / "card.json").unlink()  # rebuilt from the changed data
    result = skillopt(tmp_path, "compare", str(first), str(second))
    assert result.returncode == 2
    assert "were tested on different test splits" in one_line_error(result)


def test_compare_needs_two_runs(tmp_path):
    run = record_run(tmp_path, "no_edit")
    result = skillopt(tmp_path, "compare", str(run))
    assert "at least two run directories" in one_line_error(result)
