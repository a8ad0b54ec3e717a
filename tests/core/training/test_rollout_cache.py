"""The rollout cache: a hit only for the same skill, item, split, target settings and
environment version; errors are not stored; results survive reopening."""

from __future__ import annotations

from core.environment.contract import RolloutResult
from core.training.rollout_cache import RolloutCache


def result(item_id="i1", hard=1.0, error=None) -> RolloutResult:
    return RolloutResult(
        item_id=item_id,
        task_type="t",
        question="q?",
        reference="a",
        prediction="a",
        hard=hard,
        soft=hard,
        explanation="e",
        trajectory=[{"role": "user", "content": "q?"}],
        error=error,
    )


def test_hit_only_for_the_same_key(tmp_path):
    cache = RolloutCache(tmp_path / "c.sqlite", target_key="T", env_key="capitals:1")
    cache.put("skillA", "val", result())
    hit = cache.get("skillA", "i1", "val")
    assert hit is not None and hit.cached and hit.hard == 1.0
    assert hit.trajectory == [{"role": "user", "content": "q?"}]
    assert cache.get("skillB", "i1", "val") is None  # another skill's result is never reused
    assert cache.get("skillA", "i1", "test") is None
    assert cache.get("skillA", "i2", "val") is None
    cache.close()
    other_target = RolloutCache(tmp_path / "c.sqlite", target_key="T2", env_key="capitals:1")
    assert other_target.get("skillA", "i1", "val") is None
    other_target.close()
    other_env = RolloutCache(tmp_path / "c.sqlite", target_key="T", env_key="capitals:2")
    assert other_env.get("skillA", "i1", "val") is None
    other_env.close()
    reopened = RolloutCache(tmp_path / "c.sqlite", target_key="T", env_key="capitals:1")
    assert reopened.get("skillA", "i1", "val") is not None
    assert len(reopened) == 1
    reopened.close()


def test_model_errors_are_not_cached(tmp_path):
    cache = RolloutCache(tmp_path / "c.sqlite", target_key="T", env_key="e")
    cache.put("s", "val", result(hard=0.0, error="timeout"))
    assert cache.get("s", "i1", "val") is None
    assert len(cache) == 0


def test_in_memory_cache_for_one_off_evaluations():
    cache = RolloutCache(None, target_key="T", env_key="e")
    cache.put("s", "val", result(hard=0.5))
    hit = cache.get("s", "i1", "val")
    assert hit is not None and hit.cached
    assert (hit.item_id, hit.hard, hit.prediction) == ("i1", 0.5, "a")
