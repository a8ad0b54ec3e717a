"""No optimizer reply can fail a run (issue 22 item 4): replies of every shape — analyst
edits and lapses, merges, rankings, suggestions, rewrites, consolidated notes, the
learning-rate decision, slow update, meta notes — carrying random `<!-- skillopt:… -->`
markers (whole, half, nested so that stripping one forms another) on the hand-checkable
scenario with skill-aware reflection on. The optimizer is a scripted TEST DOUBLE that
answers each prompt in the shape the prompt asks for; the target is the skill-sensitive
double. A resumed run replays the same (cached) replies, so it must survive them too."""

from __future__ import annotations

import asyncio
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.skill.protected_blocks import marker_problems
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

PIECES = [
    "<!-- skillopt:execution-notes:start -->",
    "<!-- skillopt:execution-notes:end -->",
    "<!-- skillopt:slow-update:start -->",
    "<!-- skillopt:slow-update:end -->",
    "<!--skillopt:other:start-->",
    "<!-- skill",  # with the next piece: a marker that only appears once one is stripped
    "opt:execution-notes:start -->",
    "Answer with only the city name.",
    "- Norway: Oslo",
    "\n",
    " ",
]

marker_text = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)


def skill_in(prompt: str) -> str:
    if "<skill>\n" in prompt:
        return prompt.split("<skill>\n", 1)[1].split("\n</skill>", 1)[0]
    return INITIAL_SKILL


def marker_optimizer(texts: list[str], seed: int):
    """Answers each prompt in its own shape, every string field drawn from `texts`."""
    rnd = random.Random(seed)

    def t() -> str:
        return rnd.choice(texts)

    def edit(skill: str) -> dict:
        op = rnd.choice(["insert_after", "append", "replace", "delete"])
        target = rnd.choice([*skill.splitlines(), t()]) or t()
        return {"op": op, "target": target, "content": t(), "rationale": t()}

    def respond(request) -> str:
        prompt = request.messages[-1]["content"]
        skill = skill_in(prompt)
        if '"count": <an integer' in prompt:
            reply = {"count": 1, "reasoning": t(), "confidence": "low", "risks": t()}
        elif '{"order": [2, 0, 1]' in prompt:
            reply = {"order": [1, 0], "reason": t()}
        elif "epoch-level guidance" in prompt or "notes for yourself" in prompt:
            reply = {"reasoning": "r", "content": t()}
        elif '{"notes": ["<note>"' in prompt:
            reply = {"notes": [t(), t(), t()]}
        elif '{"pick": 1' in prompt:
            reply = {"pick": None, "skill": skill + t(), "summary": t()}
        elif '"suggestions": [' in prompt:
            suggestion = {
                "kind": "add",
                "title": t(),
                "motivation": t(),
                "instruction": t(),
                "priority": "high",
            }
            reply = {"analysis": t(), "suggestions": [suggestion], "lapses": [t(), t()]}
        elif '"skill": "<the whole' in prompt:
            reply = {"analysis": t(), "summary": t(), "skill": skill + t(), "lapses": [t()]}
        else:  # analysts and merges: edits
            reply = {
                "analysis": t(),
                "edits": [edit(skill) for _ in range(3)],
                "lapses": [t(), t(), t()],
            }
        return json.dumps(reply)

    return respond


async def train(tmp_path, respond, mode: str, autonomous: bool, gated: bool):
    tree = scenario_config(
        tmp_path,
        strategy="llm",
        steps_per_epoch=1,
        slow_update={"sample_size": 3},
        optimizer={
            "update_mode": mode,
            "skill_aware": True,
            "notes_max_chars": 100,  # so the consolidation call runs too
            "notes_gated": gated,  # in the candidate (ours) or after the gate (published)
            "lr_control": "autonomous" if autonomous and mode != "full_rewrite" else "fixed",
        },
    )
    config = config_from_dict(tree)
    client = build_model_client(
        config,
        scripted={"target": SkillSensitiveTarget(), "optimizer": respond},
        cache_path=tmp_path / "replies.sqlite",
    )
    try:
        return await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / "run"),
            bus=EventBus(),
            client=client,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(marker_text, min_size=1, max_size=6),
    seed=st.integers(0, 10_000),
    mode=st.sampled_from(["patch", "rewrite", "full_rewrite"]),
    autonomous=st.booleans(),
    gated=st.booleans(),
)
def test_no_marker_bearing_reply_fails_a_run(
    tmp_path_factory, texts, seed, mode, autonomous, gated
):
    tmp_path = tmp_path_factory.mktemp("markers")
    respond = marker_optimizer(texts, seed)
    summary = asyncio.run(train(tmp_path, respond, mode, autonomous, gated))
    assert summary.status == "finished"
    for skill in (tmp_path / "run" / "skills").iterdir():  # every version, best and final
        assert marker_problems(skill.read_text()) == [], skill.name  # blocks still balanced
