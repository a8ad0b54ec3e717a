"""A Sleep night's skill folder is a run directory; its card and compare use the tasks
the night froze (tasks.json), not the default environment its config.yaml names (a real
night on the scripted TEST DOUBLE, tests/support/sleep_world.py)."""

from __future__ import annotations

import json
import shutil

from core.research.compare import check_same_test_split, compare_runs, load_run_scores
from skillopt_tui.cli.run_cards import card_for
from tests.support.sleep_world import make_world, run_night


def test_a_nights_card_hashes_the_tasks_it_replayed(tmp_path):
    world = make_world(tmp_path)
    night = run_night(world)
    folder = world.state / "nights" / night["night_id"] / "notes-app"
    started = next(
        json.loads(line)
        for line in (folder / "events.jsonl").read_text().splitlines()
        if '"RunStarted"' in line
    )
    card = card_for(folder)
    assert card["env"] == "sleep"
    # before: the capitals splits its config.yaml names by default (78 val items)
    assert card["splits"]["val"]["size"] == started["val_items"]
    assert card["splits"]["test"]["size"] == 0
    # what the run itself loaded is on the card too when it differs from the frozen split
    train = card["splits"]["train"]
    assert train.get("run_items", train["size"]) == started["train_items"]
    assert card["items_averaged"]["val.initial"] == started["val_items"]

    # the same skill's val items across nights, paired by task id (here a copy of it)
    other = world.state / "nights" / "copy" / "notes-app"
    shutil.copytree(folder.parent, other.parent)
    (other / "card.json").unlink()
    cards = [card, card_for(other)]
    check_same_test_split(cards)  # no test split on either side: nothing to refuse
    comparison = compare_runs(
        [load_run_scores(p, c, "best") for p, c in zip((folder, other), cards, strict=True)]
    )
    val = comparison.splits[0]
    assert len(val.rows) == started["val_items"]
    assert val.runs[1]["same"] == started["val_items"] and val.runs[1]["p"] == 1.0
