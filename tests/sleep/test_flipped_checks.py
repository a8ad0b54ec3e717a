"""A held-out occurrence's mechanical check that flips decides an edit's attribution
directly (core/training/check_flips.py, sleep/night/preference_gate.py): failing → passing
is evidence on its own, even when the judge moved by a step only; passing → failing is
evidence against it, even when the judge moved a lot. The current skill's check results
come from the real rollout cache, where its val scoring left them; which check flipped is
said in night.json's kept_because and the commit's moved-items lines. The replays are a
scripted scorer (a TEST DOUBLE) over the real per-edit acceptance and preference gate."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from core.environment.contract import RolloutResult, TaskItem
from core.models.types import Completion, Usage
from core.skill.document import skill_hash
from core.skill.edits import Edit
from core.skills_repo.repo_stager import moved_lines
from core.training.candidate_gate import moved_items
from core.training.check_flips import CheckFlips, item_flips
from core.training.edit_attribution import keep_supported
from core.training.gate import GateDecision
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import GatedScore
from sleep.mine.tasks import Check, MinedTask
from sleep.night.preference_gate import PreferenceGate
from sleep.night.replay_env import ReplayEnvironment
from tests.sleep.test_preference_night import (  # noqa: F401
    YES_NO,
    corrected_tasks,
    night_with,
    project,
    repo,
    sessions,
)

ONE_LINE, LOGGING = "p-571b1e15e7", "p-14b58f0f2a"
SHORT = Check("answer_first_line_max", "1 words").describe()
NO_PRINT = Check("diff_not_adds", r"print\(").describe()
CURRENT = "# Skill\n"
ITEMS = [TaskItem("walk", "advice", "walk me through it", ""),
         TaskItem("verbose", "agentic", "add --verbose", ""), TaskItem("g", "advice", "q", "")]  # fmt: skip
# The current skill: the walk-through fails its one-line check, the --verbose replay
# adds no print (its check passes) but fails the judge.
BEFORE = {"walk": 0.625, "verbose": 0.0, "g": 1.0}
BEFORE_CHECKS = {"walk": {SHORT: False}, "verbose": {NO_PRINT: True}, "g": {}}
# The candidate: the walk-through's first line is one word now, the judge moved a step
# only (0.5 -> 0.6); the --verbose replay passes the judge but adds print() now.
AFTER = {"walk": 0.70, "verbose": 0.775, "g": 1.0}
AFTER_CHECKS = {"walk": {SHORT: True}, "verbose": {NO_PRINT: False}, "g": {}}


def result(item: str, soft: float, checks: dict[str, bool]) -> RolloutResult:
    return RolloutResult(item, "advice", item, "", "reply", float(soft >= 0.7), soft, "judge",
                         [], checks=checks)  # fmt: skip


class Scorer:
    """The candidate's val replays (a TEST DOUBLE): an item replays as AFTER when the text
    holds its rule (walk: one line, verbose: logging), else as the current skill's."""

    def __init__(self) -> None:
        self.cache = RolloutCache(None, target_key="t", env_key="sleep")
        for item in ITEMS:  # the current skill's val scoring, as the run left it
            self.cache.put(skill_hash(CURRENT), "val",
                           result(item.id, BEFORE[item.id], BEFORE_CHECKS[item.id]))  # fmt: skip

    async def score_with_gate(self, items, text, **_settings):
        rules = {"walk": "one line", "verbose": "logging", "g": ""}
        now = {i: (AFTER, AFTER_CHECKS) if r in text else (BEFORE, BEFORE_CHECKS)
               for i, r in rules.items()}  # fmt: skip
        results = {i: result(i, s[i], c[i]) for i, (s, c) in now.items()}
        decision = GateDecision(True, 0.5, 0.8, 3, 3, 0, "rule")
        return GatedScore(decision, results, {i: r.soft for i, r in results.items()}, 0, 3)


def gate() -> PreferenceGate:
    roles = {"walk": "occurrence", "verbose": "occurrence", "g": "guard"}
    return PreferenceGate(roles, 0.7, {ONE_LINE: ("walk",), LOGGING: ("verbose",)})


RULES = [Edit("append", "", "Answer in one line.", f"addresses {ONE_LINE}"),
         Edit("append", "", "Use logging.", f"addresses {LOGGING}")]  # fmt: skip


def test_a_flipped_check_decides_attribution_whatever_the_judge_step():
    """Fails on the old code: the one-line rule was dropped (the walk-through moved by a
    judge step only) and the logging rule kept (--verbose went 0.00 -> 0.78), though its
    print check went from passing to failing."""
    runner = Scorer()
    tr = SimpleNamespace(
        state=SimpleNamespace(best_items=dict(BEFORE), best_score=0.54),
        cfg=SimpleNamespace(optimizer=SimpleNamespace(edit_targets="first")),
        val_items=ITEMS,
        runner=runner,
    )
    text = CURRENT + "Answer in one line.\nUse logging.\n"
    first = asyncio.run(runner.score_with_gate(ITEMS, text))
    trimmed = asyncio.run(keep_supported(
        tr, gate(), CURRENT, text, RULES, first, first.decision,
        step=1, gate_cfg=None, margin=0,
    ))  # fmt: skip
    assert trimmed is not None
    [dropped] = trimmed.dropped
    assert dropped["content"] == "Use logging." and "evidence against it" in dropped["reason"]
    assert f"check {NO_PRINT} passing → failing" in dropped["reason"]
    assert [e.content for e in trimmed.edits] == ["Answer in one line."]
    assert trimmed.decision.accepted, trimmed.decision.reason  # re-gated without it


def test_which_check_flipped_is_in_kept_because_and_the_moved_items():
    """Fails on the old code: neither said which check flipped."""
    cache = Scorer().cache
    current = {i.id: cache.get(skill_hash(CURRENT), i.id, "val") for i in ITEMS}
    after = {i: result(i, AFTER[i], AFTER_CHECKS[i]) for i in AFTER}
    flips = item_flips(current, after)
    assert flips == {"walk": CheckFlips(up=(SHORT,)), "verbose": CheckFlips(down=(NO_PRINT,))}
    why = gate().kept_because(RULES[0], BEFORE, AFTER, flips)
    assert why == (
        f"held-out evidence: {ONE_LINE}: walk 0.62 → 0.70 (check {SHORT} failing → passing)"
    )
    gated = GatedScore(GateDecision(True, 0.5, 0.8, 3, 3, 0, "rule"), after, dict(AFTER), 0, 3)
    moved = moved_items(ITEMS, BEFORE, gated, flips)
    assert moved[0]["checks_flipped"] == {"up": [SHORT], "down": []}
    assert CheckFlips.from_dict(json.loads(json.dumps(moved[0]["checks_flipped"]))) == flips["walk"]
    lines = moved_lines(moved)
    assert f"checks flipped: {SHORT} failing -> passing" in lines[2]
    assert f"checks flipped: {NO_PRINT} passing -> failing" in lines[3]


def test_a_replay_records_each_mechanical_check_s_verdict():
    """Fails on the old code: a rollout kept no per-check verdicts to compare."""
    task = MinedTask("t-1", "are nulls kept?", "/p", rubric="one line",
                     checks=[Check("answer_first_line_max", "3 words")])  # fmt: skip

    async def reply(_messages, **_kw):  # TEST DOUBLES of the chat target and the judge
        return Completion("Kept, every row.\nBecause…", Usage(), "stop", 0.0, "t")

    async def judge(_messages, **_kw):
        return Completion('{"score": 1, "reason": "ok"}', Usage(), "stop", 0.0, "j")

    env = ReplayEnvironment({"val": [task]}, judge)
    [item] = env.load_split("val")
    done = asyncio.run(env.rollout(item, "", reply))
    assert done.checks == {Check("answer_first_line_max", "3 words").describe(): True}
    assert RolloutResult.from_dict(done.to_dict()).checks == done.checks  # cached as is


async def test_a_night_says_which_check_flipped_in_night_json_and_the_commit(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
):
    """The whole path on the preference night's TEST DOUBLE: the debug-message tasks carry
    a mechanical check (no `print(`), the current skill's replays fail it and the logging
    rule's pass it, and the real trainer's rollout cache serves the current skill's."""
    harvested = sessions(project)
    mined = corrected_tasks(project, harvested)
    for task in mined:
        task.checks = [Check("not_contains", "print(")]
    mined += corrected_tasks(project, harvested, YES_NO, "tests pass", preference=None)
    night, result, _lines = await night_with(tmp_path, repo, project, "brain_rule", mined=mined)
    no_print = Check("not_contains", "print(").describe()
    evidence = result.skills["project"]["evidence"]
    [edit] = evidence["edits"]
    assert f"(check {no_print} failing → passing)" in edit["kept_because"]
    flipped = [m for m in evidence["moved"] if m.get("checks_flipped")]
    assert flipped and all(m["checks_flipped"]["up"] == [no_print] for m in flipped)
    [commit] = repo.diff(result.skills["project"]["staged"]).evidence
    assert f"checks flipped: {no_print} failing -> passing" in commit.body
