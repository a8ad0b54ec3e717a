"""Each instruction file has its own held-out occurrence of a preference, and none loses
every occurrence to val (sleep/night/held_out.preference_splits, `gated_by`). On the
greenhouse corpus (issue 37, round 6) the one occurrence of "add a test" held out across
both files was a Codex task, so CLAUDE.md had none to gate on; and all three "UTC"
occurrences were held out by the hash, so no analyst ever saw one fail."""

from __future__ import annotations

from sleep.mine.split import split_key, split_of
from sleep.mine.tasks import Correction, MinedTask
from sleep.night.held_out import preference_splits
from tests.sleep.test_held_out import FRACTIONS, _letters

FIX = "add a test with every change please"


def _ids(split: str, n: int) -> list[str]:
    """Task ids whose request the hash puts in `split`."""
    ids = [f"t-{_letters(i)}" for i in range(300)]
    return [t for t in ids if split_of(split_key(f"task {t}"), **FRACTIONS) == split][:n]


def _occurrence(tid: str, agent: str, day: str) -> MinedTask:
    session = f"{agent}:{tid}"
    said = Correction(FIX, session, agent, day)
    return MinedTask(tid, f"task {tid}", "/p", kind="agentic", rubric="a test", first_seen=day,
                     last_seen=day, session_started=day, corrections=[said],
                     source_sessions=[session])  # fmt: skip


def _agent(task: MinedTask) -> str:
    return task.source_sessions[0].split(":", 1)[0]


def _splits(tasks: list[MinedTask]) -> dict[str, str]:
    return preference_splits(tasks, **FRACTIONS, gated_by=_agent)


def test_each_file_holds_out_an_occurrence_of_its_own_agent():
    """Fails on the old code: one occurrence was held out across both agents' tasks."""
    claude = [_occurrence(t, "claude", f"2026-11-0{i + 1}") for i, t in enumerate(_ids("train", 2))]
    codex = [
        _occurrence(t, "codex", f"2026-11-0{i + 5}") for i, t in enumerate(_ids("train", 4)[2:])
    ]
    splits = _splits(claude + codex)
    for own in (claude, codex):
        assert [splits[t.id] for t in own].count("val") == 1
        assert [splits[t.id] for t in own].count("train") == 1
    assert splits == _splits(list(reversed(claude + codex)))  # whatever the order


def test_all_occurrences_held_out_by_the_hash_leave_one_to_train():
    """Fails on the old code: all three stayed held out; nothing could learn from one."""
    tasks = [_occurrence(t, "claude", f"2026-11-0{i + 1}") for i, t in enumerate(_ids("val", 3))]
    splits = _splits(tasks)
    assert [splits[t.id] for t in tasks] == ["train", "val", "val"]  # the oldest teaches


def test_a_single_occurrence_in_a_file_is_left_where_the_hash_put_it():
    (one,) = _ids("val", 1)
    (other,) = _ids("train", 1)
    tasks = [_occurrence(one, "claude", "2026-11-01"), _occurrence(other, "codex", "2026-11-02")]
    assert _splits(tasks) == {one: "val", other: "train"}


def test_a_task_an_earlier_night_trained_on_never_moves_to_val():
    claude = [_occurrence(t, "claude", f"2026-11-0{i + 1}") for i, t in enumerate(_ids("train", 2))]
    newest = claude[1].id
    splits = preference_splits(claude, **FRACTIONS, gated_by=_agent, pinned={newest: "train"})
    assert splits == {claude[0].id: "val", newest: "train"}


def test_a_waiting_preference_is_named_by_its_need_with_its_count():
    """Fails on the old code: the shortest wording ("test?") stood for the need the miner
    named, and a preference said three times was said to wait for a second occurrence."""
    from sleep.mine.preferences import group_preferences
    from sleep.night.held_out import waiting_for_val, waiting_preferences

    days = [f"2026-11-0{i + 1}" for i in range(3)]
    tasks = [_occurrence(t, "codex", d) for t, d in zip(_ids("train", 3), days, strict=True)]
    for task, said in zip(tasks, ("test?", FIX, "no test again?"), strict=True):
        need = ["a test with every change"]
        task.corrections = [
            Correction(said, task.source_sessions[0], "codex", task.first_seen, need)
        ]
    (pref,) = group_preferences(tasks)
    assert pref.name == "a test with every change"
    why = waiting_for_val(0, 3, waiting_preferences(tasks, held=[]))
    assert '"a test with every change" (said in 3 tasks, none of them held out' in why
    assert "test?" not in why


def test_the_clearest_wording_stands_for_an_unnamed_preference():
    from sleep.mine.preferences import clearest_wording

    assert clearest_wording(["test?", FIX, "tests pls"]) == FIX


def test_one_occurrence_in_each_file_holds_one_out_and_trains_on_the_other():
    """Said once to each agent: one file holds its occurrence out and both learn from the
    other (held out by both, no analyst would see it; by neither, nothing could gate)."""
    claude_id, codex_id = _ids("train", 2)
    tasks = [
        _occurrence(claude_id, "claude", "2026-11-01"),
        _occurrence(codex_id, "codex", "2026-11-02"),
    ]
    assert sorted(_splits(tasks).values()) == ["train", "val"]
    assert _splits(tasks) == _splits(list(reversed(tasks)))
