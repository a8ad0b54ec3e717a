"""The miner names needs, and preferences group by them (issue 37, round 6): corrections
worded with nothing in common ("that timestamp has no tzinfo", "store times as UTC
please") are one preference when the miner model names one need for them; a prompt that
states two needs joins two preferences; a constraint stated up front that the heuristic
does not recognise joins its preference when the model names its need; and the heuristic
splits a correction that states two demands into clauses. Wordings here are not from the
corrections corpora. The miner model is a TEST DOUBLE (its replies scripted)."""

from __future__ import annotations

import json

from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import Correction, MinedTask, merged
from sleep.mine.with_model import mine_with_model
from tests.sleep.test_mine_model_keeps import scripted  # the miner model's TEST DOUBLE

UTC = "timezone-aware UTC times"


def session(sid: str, day: int, *prompts: str) -> dict:
    return {
        "source": "claude", "session_id": sid, "cwd": "/p", "branch": "main",
        "automation": False,
        "tasks": [
            {"text": text, "timestamp": f"2026-11-{day:02d}T10:0{i}:00Z",
             "answer": f"Done: {text[:20]}", "tools": ["Edit"]}
            for i, text in enumerate(prompts)
        ],
    }  # fmt: skip


SESSIONS = [
    session("u1", 1, "add a last_seen(device) helper to devices.py",
            "that timestamp has no tzinfo, fix it"),
    session("u2", 2, "log when the pump starts in pump.py", "store times as UTC please, not local"),
    session("u3", 3, "add expires_at to the token model and set it on login",
            "naive datetimes again..."),
]  # fmt: skip


def task(intent: str, source: int, correction: int, *needs: str) -> dict:
    return {
        "intent": intent, "kind": "agentic", "rubric": "", "checks": [], "sources": [source],
        "corrections": [correction],
        "needs": [{"prompt": correction, "need": need} for need in needs],
    }  # fmt: skip


REPLY = {"tasks": [
    task("add a last_seen(device) helper to devices.py", 1, 2, UTC),
    task("log when the pump starts in pump.py", 3, 4, "Timezone-aware  UTC times"),
    task("add expires_at to the token model and set it on login", 5, 6, UTC),
]}  # fmt: skip


async def test_corrections_the_model_names_one_need_for_are_one_preference():
    """Fails on the old code: the reply's needs were ignored and the three wordings share
    no concept or words, so they stayed three preferences."""
    tasks = await mine_with_model(SESSIONS, scripted(REPLY))
    preferences = group_preferences(tasks)
    utc = [p for p in preferences if len(p.sessions) == 3]
    assert len(utc) == 1, [(p.text, p.sessions) for p in preferences]
    assert utc[0].need == UTC  # spelled as most answers spelled it
    assert utc[0].to_dict()["need"] == UTC
    assert len(preferences) == 1


async def test_the_prompt_shows_the_needs_named_before_and_learns_new_ones():
    seen: list[str] = []
    needs = ["run the tests before saying done"]
    await mine_with_model(SESSIONS, scripted(REPLY, seen=seen), needs=needs)
    assert "- run the tests before saying done" in seen[0]
    assert needs == ["run the tests before saying done", UTC]  # one spelling kept


async def test_a_prompt_naming_two_needs_joins_two_preferences():
    two = session("e1", 4, "write the release notes for 2.3", "no emoji, and way shorter pls")
    emoji = session("e2", 5, "draft the upgrade guide", "lose the emoji")
    short = session("e3", 6, "summarise the open bugs", "too much text")
    reply = {"tasks": [
        task("write the release notes for 2.3", 1, 2, "no emoji", "short answers"),
        task("draft the upgrade guide", 3, 4, "no emoji"),
        task("summarise the open bugs", 5, 6, "short answers"),
    ]}  # fmt: skip
    tasks = await mine_with_model([two, emoji, short], scripted(reply))
    by_need = {p.need: set(p.sessions) for p in group_preferences(tasks)}
    assert by_need == {
        "no emoji": {"claude:e1", "claude:e2"},
        "short answers": {"claude:e1", "claude:e3"},
    }


async def test_a_constraint_stated_up_front_joins_its_preference_when_named():
    """Fails on the old code: a constraint the heuristic does not recognise got the
    model's rubric but no correction, so it joined no preference."""
    up_front = session("u4", 4, "add a retry to fetch.py, and every time we log is zulu")
    reply = {"tasks": [
        *REPLY["tasks"],
        {**task("add a retry to fetch.py, and every time we log is zulu", 7, 0, UTC),
         "corrections": [], "needs": [{"prompt": 7, "need": UTC}]},
    ]}  # fmt: skip
    tasks = await mine_with_model([*SESSIONS, up_front], scripted(reply))
    [utc] = [p for p in group_preferences(tasks) if p.need == UTC]
    assert "claude:u4" in utc.sessions and len(utc.sessions) == 4


def said(tid: str, *texts: str) -> MinedTask:
    return MinedTask(
        id=tid,
        intent=f"request {tid}",
        project=None,
        corrections=[
            Correction(text, f"codex:{tid}-{i}", "codex", f"2026-10-0{i + 1}")
            for i, text in enumerate(texts)
        ],
    )


def test_the_heuristic_splits_a_correction_that_states_two_demands():
    """Fails on the old code: "drop the emoji and keep it short" was one meaning
    {no-emoji, brief}, so it joined the emoji and the length corrections into one
    preference."""
    tasks = [
        said("t-both", "drop the emoji and keep it short"),
        said("t-emoji", "skip the emoji please"),
        said("t-short", "shorter please"),
    ]
    groups = sorted(sorted(o.task for o in p.occurrences) for p in group_preferences(tasks))
    assert groups == [["t-both", "t-emoji"], ["t-both", "t-short"]]


def test_one_demand_in_two_halves_stays_one_preference():
    tasks = [said("t-a", "use logging and not print"), said("t-b", "keep it short and simple")]
    assert len(group_preferences(tasks)) == 2
    assert all(len(p.occurrences) == 1 for p in group_preferences(tasks))


def test_needs_survive_the_archive_and_older_archives_still_read():
    named = Correction("naive again", "claude:x", "claude", None, (UTC,))
    task = MinedTask(id="t-x", intent="x", project=None, rubric="r", corrections=[named])
    again = MinedTask.from_dict(json.loads(json.dumps(task.to_dict())))
    assert again.corrections == [named]
    plain = MinedTask(id="t-y", intent="y", project=None, corrections=[Correction("a", "s", "c")])
    assert "needs" not in plain.to_dict()["corrections"][0]


def test_a_correction_named_tonight_replaces_its_unnamed_sighting_in_the_archive():
    """An archive mined by the heuristic alone, then a night with the miner: the
    correction counts once, under its need (not also under its wording)."""
    plain = Correction("naive again", "claude:x", "claude", "2026-11-01")
    old = MinedTask(id="t-x", intent="x", project=None, rubric="r", corrections=[plain])
    named = Correction("naive again", "claude:x", "claude", "2026-11-01", (UTC,))
    new = MinedTask(id="t-x", intent="x", project=None, rubric="r", corrections=[named])
    assert merged(old, new).corrections == [named]
    assert merged(new, old).corrections == [named]
