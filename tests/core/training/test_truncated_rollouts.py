"""A target reply cut at its token limit (finish_reason "length") is flagged in the rollout
(`truncated: true`) and counted in summary.json by split (issue 22 item 2): an environment
scores whatever text it got, so without the flag a cut-off answer reads as a wrong one.
The hand-checkable scenario with the skill-sensitive TEST DOUBLE behind the scripted
backend, which ends a reply at `max_tokens` words with finish_reason "length"."""

from __future__ import annotations

import json

from core.config import config_from_dict
from tests.core.training.test_method_fidelity import run
from tests.support.train_scenario import scenario_config


def config(tmp_path, max_tokens: int):
    tree = scenario_config(tmp_path)
    tree["models"]["target"]["max_tokens"] = max_tokens
    return config_from_dict(tree)


def step_rollouts(tmp_path) -> list[dict]:
    path = tmp_path / "run" / "steps" / "0000" / "rollouts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_reply_cut_at_the_limit_is_flagged_and_counted(tmp_path):
    # Without a format rule the double answers in a sentence ("The answer is Paris.",
    # "I don't know."), longer than two words: every step-0 reply is cut.
    summary, _ = await run(tmp_path, config=config(tmp_path, 2))
    rows = step_rollouts(tmp_path)
    assert rows and all(r["truncated"] is True for r in rows)
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    counts = written["truncated_rollouts"]
    assert set(counts) == {"train", "val", "test"} and all(n > 0 for n in counts.values())
    assert counts["train"] >= len(rows) and summary.truncated_rollouts == counts


async def test_a_complete_reply_is_not_flagged(tmp_path):
    summary, _ = await run(tmp_path, config=config(tmp_path, 64))
    assert not any(r["truncated"] for r in step_rollouts(tmp_path))
    assert summary.truncated_rollouts == {}


async def test_the_event_log_carries_the_flag_for_the_tui(tmp_path):
    await run(tmp_path, config=config(tmp_path, 2))
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").open()]
    finished = [e for e in events if e["type"] == "RolloutFinished"]
    assert finished and all(e["truncated"] is True for e in finished)
