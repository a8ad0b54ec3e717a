"""A night reads the mined-task archive once to mine and merge (review of round 6): the
re-split, the miner model's earlier names and the merge all use that one read, not a
read each. Real night on the scripted TEST DOUBLE (tests/sleep/night_double.py)."""

from __future__ import annotations

from sleep.mine.tasks import TaskArchive
from tests.sleep.test_night import BRAIN, make_night, night_config, project, repo  # noqa: F401


async def test_a_night_reads_the_archive_once_to_merge(tmp_path, repo, project, monkeypatch):  # noqa: F811
    """Fails on the old code: it read the archive twice before the merge (the re-split,
    the miner's earlier names) and the merge read it a third time."""
    config = night_config(tmp_path)
    config.models.miner.backend = "scripted"
    config.models.miner.model = BRAIN  # the miner model path reads the earlier names too
    night = make_night(tmp_path, repo, project, config=config)
    reads: list[str] = []
    merges: list[int] = []
    load, merge = TaskArchive.load, TaskArchive.merge

    def counted_load(self):
        reads.append(str(self.path))
        return load(self)

    def counted_merge(self, *args, **kwargs):
        merges.append(len(reads))
        return merge(self, *args, **kwargs)

    monkeypatch.setattr(TaskArchive, "load", counted_load)
    monkeypatch.setattr(TaskArchive, "merge", counted_merge)
    result = await night.run()
    assert result.status == "finished", result.message
    assert merges == [1]  # one read of the archive by the time tonight's tasks join it
