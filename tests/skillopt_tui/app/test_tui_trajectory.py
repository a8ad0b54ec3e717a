"""The trajectory view shows what is needed to understand a score: the question, the
prompt the target saw (system and skill text collapsed until `e`), the reply, the
reference and the explanation, for every phase — test rollouts, which have no step file,
are read from the run directory's rollouts.sqlite."""

from __future__ import annotations

import json

from core.environment.contract import RolloutResult
from core.run.events import RolloutFinished, RunStarted
from core.training.rollout_cache import RolloutCache
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.trajectory_screen import TrajectoryScreen
from tests.support.tui_app import wait_until

SKILL_LINES = [f"- rule {i}: answer with the country's common name" for i in range(12)]


def _result() -> RolloutResult:
    return RolloutResult(
        item_id="cap-1b2c3d4e5f",
        task_type="capital_to_country",
        question="Amman is the capital of which country?",
        reference="Jordan",
        prediction="Saudi Arabia",
        hard=0.0,
        soft=0.0,
        explanation='expected "Jordan"; got "Saudi Arabia" — verdict: wrong answer',
        trajectory=[
            {"role": "system", "content": "# Capitals skill\n" + "\n".join(SKILL_LINES)},
            {"role": "user", "content": "Amman is the capital of which country?"},
            {"role": "assistant", "content": "Saudi Arabia"},
        ],
        input_tokens=226,
        output_tokens=3,
    )


def _run_dir(tmp_path):
    run_dir = tmp_path / "runs" / "finished"
    run_dir.mkdir(parents=True)
    cache = RolloutCache(run_dir / "rollouts.sqlite", target_key="local:x", env_key="capitals:1")
    cache.put("skillhash", "test", _result())
    cache.close()
    start = RunStarted(
        run_id="finished",
        env="capitals",
        strategy="fewshot",
        target_model="local:x",
        optimizer_model="none",
        epochs=1,
        steps_per_epoch=2,
        train_items=2,
        val_items=1,
        test_items=1,
    )
    rollout = RolloutFinished(
        phase="test",
        step=2,  # the engine gives end-of-run rollouts the step count: no steps/0002 exists
        split="test",
        skill_hash="skillhash",
        item_id="cap-1b2c3d4e5f",
        task_type="capital_to_country",
        hard=0.0,
        soft=0.0,
        latency_s=6.9,
        prediction="Saudi Arabia",
        skill_role="best",
    )
    events = "".join(json.dumps(e.to_dict()) + "\n" for e in (start, rollout))
    (run_dir / "events.jsonl").write_text(events, encoding="utf-8")
    return run_dir


def _body(app) -> str:
    return str(app.screen.query_one("#trajectory").render())


async def test_a_test_rollout_shows_question_prompt_reply_reference_explanation(tmp_path):
    run_dir = _run_dir(tmp_path)
    app = SkillOptApp(run_dir.parent, None, refresh_runs=False, poll_interval=0.05, run=run_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        await pilot.press("t")
        assert await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen))
        body = _body(app)
        for part in (
            "question:\nAmman is the capital of which country?",
            "reply:\nSaudi Arabia",
            "reference:\nJordan",
            'explanation:\nexpected "Jordan"; got "Saudi Arabia"',
            "prompt the target saw:",
            "user:\nAmman is the capital",
        ):
            assert part in body, part
        assert "test (best)" in str(app.screen.query_one("#dialog-title").render())
        assert SKILL_LINES[1] in body and SKILL_LINES[-1] not in body
        assert "… 10 more lines (e expands)" in body
        await pilot.press("e")
        assert SKILL_LINES[-1] in _body(app) and "more lines" not in _body(app)
