"""The held-out tasks a night gates on: gathered across nights, and enough of them.

A skill's gate decided on 2 held-out tasks, by one item: that is no evidence. So a night
gates only on at least `min_val_tasks` held-out (val) tasks of the skill, and says how
many it is waiting for until then, staging nothing.

The held-out tasks accumulate: the split is stable by task id (sleep/mine/split.py), and the
mined-task archive (`<state>/tasks.json`, redacted as mined) keeps every night's tasks,
so a night takes its val tasks from every earlier night of the project and skill too —
the most recent `max_val_tasks` of them (a cap on the gate's cost, kept apart from
`max_tasks`, so that tonight's many train tasks never crowd out the held-out ones).
Train-only tasks (nothing to judge them by) are train by their split: they never count.

A preference the person corrected in two tasks or more (sleep/mine/preferences.py) always has
one held out: when the hash put none of its tasks in val, its newest task the person
corrected after an answer (else its newest) is held out, never one an earlier night
trained on (those are pinned to train); an older one goes back to train when a newer
one arrives, which shows the optimizer nothing it should not see. So the first week
can gate on what the person actually corrected, not only on what the hash happened to
hold out.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

from core.atomic import write_json
from sleep.mine.heuristic import priority
from sleep.mine.preferences import Preference, group_preferences
from sleep.mine.split import task_split
from sleep.mine.tasks import MinedTask
from sleep.night.replay_modes import SKIP_REASONS
from sleep.state.settings import DEFAULT_MAX_VAL_TASKS


def _recent_first(task: MinedTask) -> tuple:
    """Replayable kinds first (an external or redacted task never replays, so it must not
    take a held-out place), then the most recently seen; the id breaks ties."""
    stamp = task.last_seen or ""
    return (task.kind in SKIP_REASONS, tuple(-ord(c) for c in stamp), task.id)


def night_splits(
    tasks: Iterable[MinedTask],
    *,
    max_tasks: int,
    max_val_tasks: int = DEFAULT_MAX_VAL_TASKS,
    val_fraction: float,
    test_fraction: float,
    pinned: Mapping[str, str] | None = None,
    gated_by: Callable[[MinedTask], Hashable] | None = None,
) -> dict[str, list[MinedTask]]:
    """The splits a night replays from `tasks` (the archive's tasks of one project and
    skill, every night's): every val task up to the most recent `max_val_tasks`, and the
    train and test tasks by priority (sleep/mine.priority) up to `max_tasks`. `pinned`:
    the stored tasks that keep an older scheme's split (sleep/night/split_scheme.py);
    `gated_by`: which instruction files gate on a task (see `preference_splits`)."""
    tasks = list(tasks)
    splits = preference_splits(
        tasks,
        val_fraction=val_fraction,
        test_fraction=test_fraction,
        pinned=pinned,
        gated_by=gated_by,
    )
    held = [t for t in tasks if splits[t.id] == "val"]
    rest = [t for t in tasks if splits[t.id] != "val"]
    kept = sorted(held, key=_recent_first)[:max_val_tasks]
    learn = sorted(rest, key=priority)[:max_tasks]
    out: dict[str, list[MinedTask]] = {"train": [], "val": [], "test": []}
    for task in sorted(learn + kept, key=lambda t: t.id):
        out[splits[task.id]].append(task)
    return out


def preference_splits(
    tasks: list[MinedTask],
    *,
    val_fraction: float,
    test_fraction: float,
    pinned: Mapping[str, str] | None = None,
    gated_by: Callable[[MinedTask], Hashable] | None = None,
) -> dict[str, str]:
    """Each task's split (task id → split): by its request's hash (sleep/mine/split.py), or
    as `pinned` (an older scheme's, kept; a task an earlier night trained on), except that
    every preference seen in two tasks or more has one held out, unless `val_fraction` is
    0 (the person asked for no held-out tasks). The one held out is an occurrence the
    person corrected after an answer when there is one (the newest), else the newest
    stated up front; never one pinned to train. Why corrected after: where the person
    stated the need in the request itself ("dont delete anything without asking - add an
    archive subcommand"), the current file already passes it (the request says it), so
    no rule for it can ever show evidence there; where they had to correct the answer,
    the model had failed it (issue 37, ledger round 6). So a preference the hash held out
    only up front gets a corrected occurrence held out beside it.

    `gated_by` tells which instruction files gate on a task (CLAUDE.md on Claude Code's
    tasks, AGENTS.md on Codex's): the occurrences are chosen within each such group, so
    each file has its own held-out occurrence; on the greenhouse corpus the one held out
    of "add a test" was a Codex task, so CLAUDE.md had none (issue 37, round 6). And where
    a group has two occurrences or more but all are held out (by the hash), the one least
    worth holding out goes to train, so some analyst sees the failure (all three "UTC"
    occurrences were held out; nothing could learn it). Val may teach; train never gates."""
    pinned = pinned or {}
    splits = {
        t.id: pinned.get(t.id)
        or task_split(t, val_fraction=val_fraction, test_fraction=test_fraction)
        for t in tasks
    }
    if val_fraction <= 0:  # nothing held out, as asked
        return splits
    by_id = {t.id: t for t in tasks}
    group = gated_by or (lambda _task: None)
    grouped = []  # (preference, all its tasks, its tasks by group) in a stable order
    for pref in group_preferences(tasks):
        every = [by_id[i] for i in preference_tasks(pref) if i in by_id]
        groups: dict[Hashable, list[MinedTask]] = {}
        for task in every:
            groups.setdefault(group(task), []).append(task)
        grouped.append((pref, every, [groups[k] for k in sorted(groups, key=repr)]))
    # every preference trains first, then each is held out: a task two preferences share,
    # held out for one, is not sent back to train for the other afterwards
    for pref, _every, ordered in grouped:
        for occurrences in ordered:
            _keep_one_in_train(occurrences, pref, splits)
    for pref, every, ordered in grouped:
        for occurrences in ordered:
            _hold_one_out(occurrences, every, pref, splits, pinned)
    return splits


def _keep_one_in_train(occurrences: list[MinedTask], pref: Preference, splits: dict[str, str]):
    """A group's occurrences (two or more) all held out: the one least worth holding out
    (stated up front, else the oldest) trains, so an analyst sees the failure."""
    if len(occurrences) > 1 and all(splits[t.id] == "val" for t in occurrences):
        worst = min(occurrences, key=lambda t: (corrected_after(t, pref), _newest(t)))
        splits[worst.id] = "train"


def _hold_one_out(
    occurrences: list[MinedTask],
    every: list[MinedTask],
    pref: Preference,
    splits: dict[str, str],
    pinned: Mapping[str, str],
) -> None:
    """One of a group's occurrences held out (the best: corrected after an answer, the
    newest), where another occurrence of `pref` (`every`: all of them, in any group) stays
    in train or can go there (one of this group's held out only as stated up front);
    never one pinned to train."""
    candidates = [t for t in occurrences if not t.train_only and pinned.get(t.id) != "train"]
    after = [t for t in candidates if corrected_after(t, pref)]
    held = [t for t in candidates if splits[t.id] == "val"]
    if any(t in held for t in after) or (held and not after):
        return
    best = max(after or candidates, key=_newest, default=None)
    others = [t for t in every if t is not best]
    if best is None or not any(
        splits[t.id] == "train" or (t in held and t in occurrences) for t in others
    ):
        return  # holding it out would leave no occurrence to learn from
    splits[best.id] = "val"
    _keep_one_in_train(occurrences, pref, splits)  # a held one stated up front trains


def corrected_after(task: MinedTask, pref: Preference) -> bool:
    """Whether the person said `pref` of `task` after an answer, not only in the request
    itself (a constraint stated up front is a correction whose words are the request's)."""
    said = {(o.session, o.agent, o.date) for o in pref.occurrences if o.task == task.id}
    return any(
        (c.session, c.agent, c.date) in said and c.text not in task.intent for c in task.corrections
    )


def _newest(task: MinedTask) -> tuple:
    return (task.session_started or task.first_seen or "", task.last_seen or "", task.id)


def gate_roles(val: Iterable[MinedTask]) -> dict[str, str]:
    """What each held-out task gates as: `occurrence` (of a preference the person
    corrected) or `guard` (accepted without correction: it must not regress)."""
    return {t.id: "occurrence" if t.preference or t.corrections else "guard" for t in val}


def held_out_occurrences(
    preferences: Iterable[Preference], roles: Mapping[str, str]
) -> dict[str, tuple[str, ...]]:
    """Each preference's held-out occurrences (val task ids; none held out: empty), so a
    night can tell edit by edit whose preference moved (sleep/night/preference_gate.py)."""
    return {
        p.id: tuple(i for i in preference_tasks(p) if roles.get(i) == "occurrence")
        for p in preferences
    }


def preferences_by_task(preferences: Iterable[Preference]) -> dict[str, list[str]]:
    """Each task's preferences (task id → ids, most said first): a task corrected for two
    preferences shows the analysts both, and is a held-out occurrence of each."""
    out: dict[str, list[str]] = {}
    for pref in preferences:
        for task in preference_tasks(pref):
            out.setdefault(task, []).append(pref.id)
    return out


def waiting_preferences(
    tasks: Iterable[MinedTask], held: Iterable[str] | None = None
) -> list[Preference]:
    """The preferences in `tasks` with no occurrence among the `held` task ids (None: the
    preferences seen in one task only, which none can be held out of yet)."""
    prefs = group_preferences(tasks)
    if held is None:
        return [p for p in prefs if len(preference_tasks(p)) < 2]
    out = set(held)
    return [p for p in prefs if not out & set(preference_tasks(p))]


def preference_tasks(pref: Preference) -> list[str]:
    """The ids of the tasks a preference occurs in, in the order of its occurrences."""
    return list(dict.fromkeys(o.task for o in pref.occurrences))


def waiting_for_val(
    val_tasks: int, min_val_tasks: int, waiting: Iterable[Preference] = ()
) -> str | None:
    """Why the night gates nothing for a skill with `val_tasks` replayable held-out
    tasks (preference occurrences and guards), or None when that is enough; naming the
    preferences that wait for a second occurrence to be held out."""
    if val_tasks >= min_val_tasks:
        return None
    texts = [_waiting_line(p) for p in waiting]
    second = (
        f"; no held-out occurrence yet of: {', '.join(texts[:5])}"
        + (f" and {len(texts) - 5} more" if len(texts) > 5 else "")
        if texts
        else ""
    )
    return (
        f"waiting for more held-out tasks ({val_tasks} of {min_val_tasks}): the gate "
        f"decides on at least that many; later nights' sessions add to them{second}"
    )


def _waiting_line(pref: Preference) -> str:
    """A waiting preference by its name, with how often the person said it (issue 37:
    "all timestamps in UTC please" was said to need a second occurrence; it had three)."""
    said = len(preference_tasks(pref))
    why = (
        "said once, waiting for a second occurrence"
        if said < 2
        else f"said in {said} tasks, none of them held out for this file yet"
    )
    return f'"{_excerpt(pref.name)}" ({why})'


NO_OCCURRENCE = (
    "none of its held-out tasks is something the person corrected: nothing can be staged "
    "tonight (a rule is staged only for a corrected preference whose held-out occurrence "
    "moved)"
)


def _excerpt(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def gate_signature(splits: dict[str, list[MinedTask]], settings: dict[str, Any]) -> str:
    """What a skill's gate decides on: its tasks' ids per split and the settings the gate
    reads. A night with no new sessions gates a skill again when this changed."""
    shape = {k: sorted(t.id for t in v) for k, v in splits.items()}
    text = json.dumps([shape, settings], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class GatedRecord:
    """`<state>/gated.json`: per project and skill, the gate signature of the last night
    that ran it (gated it or said what it waits for)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / "gated.json"

    def _read(self) -> dict[str, str]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                return {str(k): str(v) for k, v in data.items()}
        return {}

    def get(self, key: str) -> str | None:
        return self._read().get(key)

    def put(self, key: str, signature: str) -> None:
        write_json(self.path, {**self._read(), key: signature})
