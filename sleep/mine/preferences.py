"""Preferences: what a person keeps asking for across sessions, whatever the request.

"use logging, not print" typed in four sessions, under four different requests, is one
need the instruction file should carry: a **preference**, with each time it was said as
an occurrence (the task, session, agent and date). A night gates on held-out occurrences
of each preference (sleep/mine/split.py), and after adoption later sessions tell whether it
is still corrected.

Two corrections say the same thing when the miner model named the same need for both
("datetime.now() with no tz??" and "all timestamps in UTC please": "timezone-aware UTC
times", sleep/mine/with_model.py); else, as the heuristic reads them, when their
mechanical meaning is the same (sleep/mine/correction_checks.py `concepts`: {want:logging,
avoid:print}), or, for those with no mechanical shape ("keep the public API unchanged"),
when their content words mostly agree. One correction may say two things ("no emojis and
no essay pls"): named as two needs, or split into clauses that each mean something, it
joins two preferences. A preference's id is a hash of that meaning, so it is stable from
night to night whichever wording came first.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from sleep.mine.correction_checks import concepts
from sleep.mine.tasks import Correction, MinedTask

SAME_WORDS = 0.6  # the share of content words two plain-worded corrections must share
_STOP = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "for", "with", "without",
        "it", "its", "this", "that", "these", "those", "is", "are", "be", "was", "were", "do",
        "does", "did", "don't", "dont", "not", "no", "please", "just", "i", "you", "we", "me",
        "my", "your", "our", "so", "as", "at", "by", "from", "instead", "rather", "than", "use",
        "using", "keep", "make", "sure", "again", "also", "always", "never", "pls", "plz",
        "thx", "thanks", "thank",
    ]
)  # fmt: skip


@dataclass(frozen=True)
class Occurrence:
    """One time the person said it: in which task's session, with which agent, when."""

    task: str
    session: str
    agent: str
    date: str | None = None


def said_in(o: Occurrence) -> tuple[str, str]:
    """The prompt an occurrence was said in: its session and time (no time recorded: the
    task stands for it)."""
    return (o.session, o.date or f"task:{o.task}")


@dataclass
class Preference:
    id: str
    text: str  # the clearest wording the person used (`clearest_wording`)
    occurrences: list[Occurrence] = field(default_factory=list)
    need: str | None = None  # the need the miner model named, when it named one

    @property
    def name(self) -> str:
        """What a person is shown: the need the miner model named, else their wording."""
        return self.need or self.text

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(o.session for o in self.occurrences))

    @property
    def times_said(self) -> int:
        """How many prompts said it: one message that corrects one task and states the
        need up front for the next ("thx. tests with every change pls. next: …") is an
        occurrence of both tasks (each keeps its rubric) but was said once (issue 37)."""
        return len(set(map(said_in, self.occurrences)))

    def to_dict(self) -> dict:
        data = {
            "id": self.id,
            "text": self.text,
            "name": self.name,
            "said": self.times_said,
            "occurrences": [o.__dict__.copy() for o in self.occurrences],
        }
        return {**data, "need": self.need} if self.need else data


def _words(text: str) -> frozenset[str]:
    words = (w.rstrip(".") for w in re.findall(r"[a-z][a-z0-9_.()-]+", text.lower()))
    return frozenset(w.rstrip("s") for w in words if w not in _STOP and len(w) > 2)


def _meaning(text: str) -> tuple[str, frozenset[str]]:
    """("concepts", …) for a mechanical correction, else ("words", …)."""
    found = concepts(text)
    return ("concepts", found) if found else ("words", _words(text))


# Where one correction may start a second demand: "and", ";", "&" or "+" before a word
# that gives one ("no emojis and no essay pls", "drop the emoji & keep it short"); not
# before "not" ("use logging and not print" is one need) nor a bare comma ("no, use …").
_SECOND_DEMAND = re.compile(
    r"\s*(?:,?\s*\band\b|;|&|\+)\s*(?=(?:no|don'?t|do not|never|stop|skip|drop|avoid|use|keep|"
    r"make|add|remove|run|less|fewer|shorter|only|without|always|just|please|pls)\b)",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """The demands one correction states, split where a second one starts."""
    return [c.strip(" ,.;") for c in _SECOND_DEMAND.split(text) if c.strip(" ,.;")]


def need_key(need: str) -> str:
    """A need name as it is compared: case, punctuation and spacing do not tell needs apart."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", need.lower()).split())


Meaning = tuple[str, frozenset[str]]


def _meanings(correction: Correction) -> list[tuple[Meaning, str]]:
    """What a correction says, each with the words that say it: the needs the miner model
    named, else the heuristic's reading of each clause that means something (two where
    it states two demands), else of the whole text."""
    if correction.needs:
        return [(("need", frozenset([need_key(n)])), correction.text) for n in correction.needs]
    parts = [(m, c) for c in clauses(correction.text) if (m := _meaning(c))[1]]
    restated = any(_same(a, b) for i, (a, _) in enumerate(parts) for b, _ in parts[i + 1 :])
    if len(parts) > 1 and not restated:
        return parts
    return [(_meaning(correction.text), correction.text)]


def _named_readings(tasks: Iterable[MinedTask]) -> list[tuple[Meaning, Meaning]]:
    """How the heuristic reads each need the miner model named — the need's own words, and
    the correction it named it for when that says one thing — beside the need itself."""
    out: dict[tuple[Meaning, Meaning], None] = {}
    for task in tasks:
        for correction in task.corrections:
            for need in correction.needs:
                named: Meaning = ("need", frozenset([need_key(need)]))
                out[(_meaning(need), named)] = None
                if len(correction.needs) == 1:
                    out[(_meaning(correction.text), named)] = None
    return list(out)


def _as_named(meaning: Meaning, named: list[tuple[Meaning, Meaning]]) -> Meaning:
    """A correction the miner named no need for ("thx. tests with every change pls.")
    joins the need its heuristic reading matches ("add a test with every change"), so one
    need is one preference whichever reader saw which wording."""
    return next((need for reading, need in named if _same(reading, meaning)), meaning)


def _same(a: Meaning, b: Meaning) -> bool:
    """Two corrections say the same thing: the miner named the same need for both; they
    share a mechanical meaning ("don't print debug output" {avoid:print} and "use logging,
    not print" {want:logging, avoid:print}); or, worded plainly, mostly the same words."""
    if a[0] != b[0] or not a[1] or not b[1]:
        return False
    if a[0] == "need":
        return a[1] == b[1]
    if a[0] == "concepts":
        return bool(a[1] & b[1])
    return len(a[1] & b[1]) / len(a[1] | b[1]) >= SAME_WORDS


def _preference_id(kind: str, meanings: list[frozenset[str]]) -> str:
    """Stable whichever wording came first: the meaning most of its occurrences share."""
    if kind == "concepts":
        counts = Counter(c for m in meanings for c in m)
        key = [min(counts, key=lambda c: (-counts[c], c))]
    else:
        key = sorted(min(meanings, key=lambda m: (len(m), sorted(m))))
    digest = hashlib.sha256("\n".join([kind, *key]).encode()).hexdigest()
    return f"p-{digest[:10]}"


# One thing a correction says: its meaning, the task and correction it is in, its words.
_Said = tuple[Meaning, MinedTask, Correction, str]


class _Groups:
    """Corrections joined when they say the same thing (`_same`), found through an index
    of the concepts and words each holds, so an archive of thousands stays quick."""

    def __init__(self) -> None:
        self.said: list[_Said] = []
        self.parent: list[int] = []
        self.holding: dict[tuple[str, str], list[int]] = {}  # (kind, concept or word) → items

    def root(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def add(self, said: _Said) -> None:
        i = len(self.said)
        self.said.append(said)
        self.parent.append(i)
        kind, meaning = said[0]
        candidates = {j for key in meaning for j in self.holding.get((kind, key), [])}
        for j in sorted(candidates):
            if _same(self.said[j][0], said[0]):
                self.parent[self.root(j)] = i
        for key in meaning:
            self.holding.setdefault((kind, key), []).append(i)

    def groups(self) -> list[list[_Said]]:
        out: dict[int, list[_Said]] = {}
        for i, said in enumerate(self.said):
            out.setdefault(self.root(i), []).append(said)
        return list(out.values())


def group_preferences(tasks: Iterable[MinedTask]) -> list[Preference]:
    """The preferences in these tasks' corrections, most often said first (one said
    once is a preference too: it waits for a second occurrence to be tested)."""
    tasks = list(tasks)
    named = _named_readings(tasks)
    grouped = _Groups()
    for task in tasks:
        for correction in task.corrections:
            for meaning, words in _meanings(correction):
                if meaning[1]:
                    grouped.add((_as_named(meaning, named), task, correction, words))
    out = []
    for said in grouped.groups():
        occurrences = list(
            dict.fromkeys(Occurrence(t.id, c.session, c.agent, c.date) for _m, t, c, _w in said)
        )
        occurrences.sort(key=lambda o: (o.date or "", o.session, o.task))
        text = clearest_wording(w for _m, _t, _c, w in said)
        kind = said[0][0][0]
        meanings = [m[1] for m, _t, _c, _w in said]
        need = _named_need(said) if kind == "need" else None
        out.append(Preference(_preference_id(kind, meanings), text, occurrences, need))
    return sorted(out, key=lambda p: (-len(p.sessions), p.id))


def clearest_wording(wordings: Iterable[str]) -> str:
    """The wording that says the most: not a bare question ("test?" says little of what
    the person wants), then the most content words, then the shorter (issue 37: the
    shortest wording, "test?", stood for "add a test with every change")."""
    return min(
        wordings,
        key=lambda w: (w.rstrip().endswith("?"), -min(len(_words(w)), 8), len(w), w),
    )


def _named_need(said: list[_Said]) -> str:
    """The need's name as the miner model spelled it most often."""
    [key] = said[0][0][1]
    names = [n for _m, _t, c, _w in said for n in c.needs if need_key(n) == key]
    return max(set(names), key=lambda n: (names.count(n), n))


def assign_preferences(tasks: list[MinedTask]) -> list[Preference]:
    """Group the tasks' corrections and mark each task with the preference said in the
    most sessions among those its corrections belong to (none when it has none left: a
    correction the miner moved to a task of its own takes its preference with it)."""
    preferences = group_preferences(tasks)
    first: dict[str, str] = {}
    for preference in preferences:  # most said first
        for occurrence in preference.occurrences:
            first.setdefault(occurrence.task, preference.id)
    for task in tasks:
        task.preference = first.get(task.id)  # none when no correction is left to it
    return preferences


def named_needs(tasks: Iterable[MinedTask]) -> list[str]:
    """The needs the miner model named in these tasks' corrections, each once, in order:
    what a night shows the model so it names a need seen before the same way."""
    out: dict[str, str] = {}
    for task in tasks:
        for correction in task.corrections:
            for need in correction.needs:
                out.setdefault(need_key(need), need)
    return list(out.values())
