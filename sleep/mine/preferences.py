"""Preferences: what one person keeps correcting, across sessions and agents.

Mining gives each corrected task a stable preference id (`MinedTask.preference`): the
tasks whose corrections say the same thing ("use logging, not print" four times) share
it. A preference is the unit a night learns and is judged on: the split holds out one of
its occurrences the optimizer never sees (sleep/night/held_out.py), the gate asks whether the
held-out ones pass more often (sleep/night/preference_gate.py), and after adoption the later
sessions are read for it again (sleep/state/adoption_effect.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sleep.mine.tasks import MinedTask


@dataclass(frozen=True)
class Occurrence:
    """One time the person corrected (or stated) a preference: in which task's request,
    in which session (`source:id`), by which agent, when."""

    task: str
    session: str
    agent: str
    date: str | None = None


@dataclass
class Preference:
    id: str
    text: str
    occurrences: list[Occurrence] = field(default_factory=list)

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(o.session for o in self.occurrences))

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "text": self.text,
            "occurrences": [
                {"task": o.task, "session": o.session, "agent": o.agent, "date": o.date}
                for o in self.occurrences
            ],
        }


def _occurrences(task: MinedTask) -> list[Occurrence]:
    """A task's corrections, each an occurrence; a task given its preference without a
    recorded correction (a constraint stated up front) is one, in its first session."""
    if task.corrections:
        return [Occurrence(task.id, c.session, c.agent, c.date) for c in task.corrections]
    session = (task.source_sessions or ["?:?"])[0]
    return [Occurrence(task.id, session, session.split(":", 1)[0], task.first_seen)]


def group_preferences(tasks: Iterable[MinedTask]) -> list[Preference]:
    """The preferences of `tasks` (those with a preference id), with every occurrence,
    most occurrences first; the text is the first correction's (or the task's rubric)."""
    found: dict[str, Preference] = {}
    for task in sorted(tasks, key=lambda t: (t.first_seen or "", t.id)):
        if not task.preference:
            continue
        text = task.corrections[0].text if task.corrections else task.rubric or task.intent
        pref = found.setdefault(task.preference, Preference(task.preference, text))
        pref.occurrences += [o for o in _occurrences(task) if o not in pref.occurrences]
    return sorted(found.values(), key=lambda p: (-len(p.occurrences), p.id))
