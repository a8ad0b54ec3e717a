"""`skillopt train` writes card.json; `skillopt runs show RUN` prints it, and rebuilds a
missing one for an older run (subprocesses, on the scenario with the TEST DOUBLE target)."""

from __future__ import annotations

import json

from tests.skillopt_tui.cli.test_train_cmds import one_line_error, skillopt
from tests.support.train_scenario import write_config


def test_train_writes_the_card_and_runs_show_prints_it(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "scenario"
    done = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out),
                    "--set", "run.seed=7")  # fmt: skip
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "card.json").read_text())
    assert card["config_sources"]["file"] == str(config.resolve())
    assert card["config_sources"]["set"] == ["run.seed=7"]
    assert card["seeds"]["run.seed"] == 7
    shown = skillopt(tmp_path, "runs", "show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "split test: 3 items  sha256 " + card["splits"]["test"]["sha256"][:16] in shown.stdout
    assert "accepted step 0 (step): 4 edits, val 0.000 → 0.600, +3/-0 items, p=0.25" in shown.stdout
    assert "test: initial 0.000, best 0.667, final 0.667" in shown.stdout
    as_json = skillopt(tmp_path, "runs", "show", str(out), "--json")
    assert json.loads(as_json.stdout)["splits"] == card["splits"]
    listed = skillopt(tmp_path, "runs", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["scenario"]


def test_an_older_run_without_a_card_gets_one_on_demand(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "old"
    assert skillopt(tmp_path, "train", "--config", str(config), "--out", str(out)).returncode == 0
    written = json.loads((out / "card.json").read_text())
    (out / "card.json").unlink()  # as a run from before cards
    shown = skillopt(tmp_path, "runs", "show", str(out), "--json")
    assert shown.returncode == 0, shown.stderr
    rebuilt = json.loads(shown.stdout)
    assert rebuilt["splits"] == written["splits"]
    assert rebuilt["accepted_edits"] == written["accepted_edits"]
    assert (out / "card.json").is_file()  # stored for the next reader


def test_runs_show_on_a_folder_that_is_no_run_says_so(tmp_path):
    result = skillopt(tmp_path, "runs", "show", str(tmp_path))
    assert result.returncode == 2
    assert "is not a run directory" in one_line_error(result)
