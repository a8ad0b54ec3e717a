"""The "add a benchmark" guide, followed to the letter: its own blocks build the `antonyms`
environment (manifest, source data, materialiser, environment, catalog entry, seed skill,
config, tests) in a sandbox copy of the checkout, run the guide's tests, materialise the
data and train one step on the embedded model."""

from __future__ import annotations

import json

import pytest

from core.run.directory import RUN_FILE_NAMES, STEP_FILES
from tests.support.doc_examples import ROOT, blocks, run_page

GUIDE = ROOT / "docs/guides/add-a-benchmark.md"


def test_the_guide_shows_every_part_of_an_environment():
    titles = {b.title for b in blocks(GUIDE) if b.title}
    for part in (
        "manifests/antonyms/train/items.json",
        "manifests/antonyms/val/items.json",
        "manifests/antonyms/test/items.json",
        "envs/antonyms/materialize.py",
        "envs/antonyms/environment.py",
        "envs/catalog.py",
        "envs/antonyms/initial.md",
        "configs/antonyms/default.yaml",
        "tests/envs/test_antonyms.py",
    ):
        assert part in titles, f"the guide has no block for {part}"


@pytest.mark.embedded
def test_following_the_guide_trains_one_step(tmp_path):
    outcome = run_page(GUIDE, tmp_path)
    assert outcome.skipped == 0  # every command of the guide ran
    run = outcome.root / "runs/antonyms"
    history = json.loads((run / "history.json").read_text())
    assert len(history["steps"]) == 1  # one step trained on the new environment
    assert (run / "summary.json").is_file()  # the run finished
    config = (run / "config.yaml").read_text()
    assert "name: antonyms" in config
    # The new environment's data went where the materialiser puts it, not into the checkout.
    data = tmp_path / "home/.cache/skillopt/data/antonyms/val/items.json"
    assert [row["id"] for row in json.loads(data.read_text())] == ["up", "light", "open", "wet"]
    # The run-directory reference (generated from RUN_FILES / STEP_FILES) names every file
    # a real run wrote.
    assert {p.name for p in run.iterdir()} <= RUN_FILE_NAMES
    written = {p.name for step in (run / "steps").iterdir() for p in step.iterdir()}
    assert written <= set(STEP_FILES), written - set(STEP_FILES)
