"""A resumed run redoing its step serves the step's rollouts from the rollout cache: the
events it logs for them say `replayed: true`, so events.jsonl counts each rollout once.
On the old code these events were plain repeats (no `replayed` field): the counts below
came out higher than the uninterrupted run's."""

from __future__ import annotations

import sqlite3
from collections import Counter

from core.run.events import RolloutFinished, read_events
from core.training.rollout_cache import RolloutCache
from tests.core.training.test_trainer import train


def logged_rollouts(run_dir) -> list[RolloutFinished]:
    return [e for e in read_events(run_dir / "events.jsonl") if isinstance(e, RolloutFinished)]


def key(e: RolloutFinished) -> tuple:
    return (e.phase, e.step, e.split, e.skill_hash, e.item_id, e.skill_role, e.hard)


async def test_a_redone_step_marks_its_cached_rollouts_replayed(tmp_path):
    await train(tmp_path / "ref")
    reference = Counter(key(e) for e in logged_rollouts(tmp_path / "ref" / "run"))
    assert not any(e.replayed for e in logged_rollouts(tmp_path / "ref" / "run"))
    replays = 0
    for cap in (450, 650, 900):  # stops mid-step, after some of the step's rollouts
        root = tmp_path / f"cap{cap}"
        stopped, _, _ = await train(root, overrides={"budget.max_tokens": cap})
        assert stopped.status == "stopped", cap
        resumed, _, _ = await train(root, overrides={"budget.max_tokens": 10**6})
        assert resumed.status == "finished", cap
        logged = logged_rollouts(root / "run")
        replays += sum(e.replayed for e in logged)
        fresh = Counter(key(e) for e in logged if not e.replayed)
        assert fresh == reference, cap
    assert replays > 0  # the caps did stop inside steps whose rollouts were then replayed


async def test_a_cache_hit_from_another_step_is_not_a_replay(tmp_path):
    # Epoch 2 trains the same (unchanged) skill on items epoch 1 already scored: those
    # hits are new rollouts of their step (cached: true), not replays.
    _summary, events, _ = await train(tmp_path)
    train_hits = [e for e in events if isinstance(e, RolloutFinished) and e.cached]
    assert train_hits and not any(e.replayed for e in train_hits)


def test_a_cache_written_before_the_log_table_gains_it(tmp_path):
    path = tmp_path / "rollouts.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE rollouts (key TEXT PRIMARY KEY, skill_hash TEXT NOT NULL, "
        "item_id TEXT NOT NULL, split TEXT NOT NULL, result TEXT NOT NULL)"
    )
    db.commit()
    db.close()
    cache = RolloutCache(path, target_key="t", env_key="e")
    assert cache.note_logged("h", "i", "val", 0, "[]") is True
    assert cache.note_logged("h", "i", "val", 0, "[]") is False
    cache.close()
