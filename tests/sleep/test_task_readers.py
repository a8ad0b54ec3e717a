"""Every agent's transcript reader is one module behind one protocol (sleep.harvest.model
.TaskReader), so the harvest reads a new agent without knowing which it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleep.harvest.identity import SessionIdentity
from sleep.harvest.model import TaskReader
from sleep.harvest.run import Harvest, HarvestOptions
from sleep.harvest.sources import TranscriptFile


@pytest.mark.parametrize("tool", ["claude", "codex", "pi", "copilot", "vscode", "cursor"])
def test_the_harvest_gets_every_agents_reader_through_one_protocol(tool, tmp_path):
    harvest = Harvest(HarvestOptions(state_dir=tmp_path / "state", project=tmp_path))
    file = TranscriptFile(tool=tool, path=tmp_path / "t.jsonl", key="k")
    stat = Path(__file__).stat()
    reader = harvest._reader(file, stat, SessionIdentity())
    assert isinstance(reader, TaskReader), f"{tool}: {type(reader).__name__}"
    reader.finish()  # a file with no records closes cleanly
    assert reader.tasks == [] and reader.abandoned == 0
