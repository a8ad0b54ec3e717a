"""The night's gate when the held-out tasks hold what the person corrected.

A mean score over a handful of graded items moves by noise (a judge's 0.1); what the
person wants to know is narrower: does the candidate do what they asked for more often,
and does it break nothing they were happy with? So, where the val split holds preference
occurrences (sleep/held_out.gate_roles), a candidate is accepted only when
- its held-out occurrences pass (metric ≥ the pass mark) more often than the current
  file's, and
- no guard (a task accepted without correction) that passed with the current file fails.
The engine asks the environment for this rule (`gate_rule`, core/training/candidate_gate.py)
in place of "the mean beats the best". A night always gates by it: with no held-out
occurrence it stages nothing (what Sleep learns is what the person corrected).

Then edit by edit (`attribute`, core/training/edit_attribution.py): a candidate is judged
whole, so a rule with no evidence would ride along with one that moved the gate. Each edit
names in its rationale the preference ids it addresses (the analysts see each item's id,
sleep/night/replay_env.py); an edit is kept only when every preference it names has a
held-out occurrence that moved under the candidate: from failing to passing, by more than
a judge's rounding (JUDGE_STEP: its scores come in tenths). A judge's 0.5 → 0.6 on a reply
it still says breaks the rubric is no evidence, even where that lands the item on the
pass mark (the billing "one line" rule staged so, issue 37). Where the occurrence has
mechanical checks (diff_adds, ran, answer_first_line_max, a command check…), a check that
flipped decides directly (core/training/check_flips.py): failing → passing is evidence on
its own, passing → failing is evidence against the edit, whatever the judge's step. An
edit naming none ("write commit messages in the imperative", a generic rule from a
judge-only failure) or naming one whose occurrences did not move is dropped, and the
engine gates the rest again without it.

A held-out item may carry several preferences (one request corrected twice), so a check
that flipped on it is evidence only for the preference it was mined from (`origins`: item
→ check → preference ids, sleep/night/check_origins.py); a check of unknown origin counts
only where the item carries one preference. And a judge-only rise on an item where another
preference's check flipped up is that check's doing, not evidence for every edit whose
preference the item carries (issue 37: the UTC rule was kept on the add-a-test check);
where no check tells, edits whose preferences share the item are `rivals`, and the
engine's bounded ablation drops the one whose absence changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.skill.edits import Edit
from core.training.check_flips import CheckFlips

PREFERENCE_ID = re.compile(r"\bp-[0-9a-f]{10}\b")  # sleep/mine/preferences._preference_id
# The judge scores in tenths: a rise of one tenth or less is the judge's rounding, not a
# change of behaviour (scores are rounded to 6 places: hence the tolerance).
JUDGE_STEP = 0.1
_TOLERANCE = 1e-6


def named_preferences(rationale: str) -> list[str]:
    """The preference ids an edit's rationale names, in order, each once."""
    return list(dict.fromkeys(PREFERENCE_ID.findall(rationale)))


@dataclass(frozen=True)
class PreferenceGate:
    roles: Mapping[str, str]  # val item id -> "occurrence" | "guard"
    pass_mark: float
    # preference id -> its held-out occurrences (val item ids; none yet: an empty tuple)
    held_out: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # val item id -> check (its description) -> the preference ids it was mined from
    origins: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)

    def _carried(self, item: str) -> list[str]:
        """The preferences whose held-out occurrences include `item`."""
        return [p for p, items in self.held_out.items() if item in items]

    def _mined_for(self, pref: str, item: str, checks: Sequence[str]) -> tuple[str, ...]:
        """The checks among `checks` of `item` that were mined from `pref` (one of unknown
        origin: only where the item carries `pref` alone)."""
        known = self.origins.get(item, {})
        alone = self._carried(item) == [pref]
        return tuple(c for c in checks if (pref in known[c] if c in known else alone))

    def _own_flips(
        self, pref: str, item: str, flips: Mapping[str, CheckFlips] | None
    ) -> CheckFlips:
        flipped = (flips or {}).get(item, CheckFlips())
        return CheckFlips(
            self._mined_for(pref, item, flipped.up), self._mined_for(pref, item, flipped.down)
        )

    def _passes(self, metrics: Mapping[str, float], item: str) -> bool:
        return metrics.get(item, 0.0) >= self.pass_mark

    def __call__(self, before: Mapping[str, float], after: Mapping[str, float]) -> tuple[bool, str]:
        """(accepted, why) for a candidate scoring `after` against the current `before`."""
        occurrences = sorted(i for i, r in self.roles.items() if r == "occurrence")
        guards = sorted(i for i, r in self.roles.items() if r == "guard")
        was = sum(self._passes(before, i) for i in occurrences)
        now = sum(self._passes(after, i) for i in occurrences)
        broken = [g for g in guards if self._passes(before, g) and not self._passes(after, g)]
        counts = (
            f"held-out preference occurrences pass {now}/{len(occurrences)} "
            f"(current file {was}/{len(occurrences)})"
        )
        if not occurrences:
            return False, (
                "rejected: no held-out task is something the person corrected; a rule is "
                "staged only for a corrected preference whose held-out occurrence moved"
            )
        if broken:
            return False, f"rejected: {counts}, but guard(s) regressed: {', '.join(broken)}"
        if now <= was:
            return False, f"rejected: {counts}: not more often"
        return True, f"accepted: {counts}; no guard regressed ({len(guards)} guard(s))"

    def moved(self, item: str, before: Mapping[str, float], after: Mapping[str, float]) -> bool:
        """The held-out item went from failing to passing by more than a judge's rounding."""
        was, now = before.get(item, 0.0), after.get(item, 0.0)
        crossed = not self._passes(before, item) and self._passes(after, item)
        return crossed and now - was > JUDGE_STEP + _TOLERANCE

    def evidence(
        self,
        pref: str,
        before: Mapping[str, float],
        after: Mapping[str, float],
        flips: Mapping[str, CheckFlips] | None = None,
    ) -> list[str]:
        """The preference's held-out occurrences that are evidence for an edit, each as
        "id before → after" and why: a check of it that flipped from failing to passing
        (and none back), else the item itself from failing to passing past a judge step."""
        out = []
        for item in self.held_out.get(pref, ()):
            flipped = self._own_flips(pref, item, flips)
            if flipped.down:
                continue
            if flipped.up:
                out.append(f"{_change(item, before, after)} ({'; '.join(flipped.lines())})")
            elif self.moved(item, before, after) and not self._others_flipped(pref, item, flips):
                out.append(f"{_change(item, before, after)} (failing → passing)")
        return out

    def _others_flipped(self, pref: str, item: str, flips: Mapping[str, CheckFlips] | None) -> bool:
        """Another preference's check of `item` flipped up: that explains the item's rise."""
        return any(self._own_flips(p, item, flips).up for p in self._carried(item) if p != pref)

    def counter_evidence(self, pref: str, flips: Mapping[str, CheckFlips] | None) -> list[str]:
        """The preference's held-out occurrences with a check that flipped from passing
        to failing: evidence against an edit for it, whatever else moved."""
        out = []
        for item in self.held_out.get(pref, ()):
            down = self._own_flips(pref, item, flips).down
            if down:
                out.append(f"{item}: " + "; ".join(f"check {c} passing → failing" for c in down))
        return out

    def attribute(
        self,
        edits: list[Edit],
        before: Mapping[str, float],
        after: Mapping[str, float],
        flips: Mapping[str, CheckFlips] | None = None,
    ) -> list[tuple[int, str]]:
        """The edits without held-out evidence of their own: (index, why) each."""
        out = []
        for index, edit in enumerate(edits):
            why = self._unsupported(edit, before, after, flips)
            if why:
                out.append((index, why))
        return out

    def kept_because(
        self,
        edit: Edit,
        before: Mapping[str, float],
        after: Mapping[str, float],
        flips: Mapping[str, CheckFlips] | None = None,
    ) -> str:
        """Why an edit the gate kept was kept (night.json), or why it lacks evidence."""
        why = self._unsupported(edit, before, after, flips)
        if why:
            return why
        return "held-out evidence: " + "; ".join(
            f"{p}: {', '.join(self.evidence(p, before, after, flips))}"
            for p in named_preferences(edit.rationale)
        )

    def _unsupported(
        self,
        edit: Edit,
        before: Mapping[str, float],
        after: Mapping[str, float],
        flips: Mapping[str, CheckFlips] | None = None,
    ) -> str:
        named = named_preferences(edit.rationale)
        if not named:
            return "no held-out evidence: it names no preference the person corrected"
        unheld = [p for p in named if not self.held_out.get(p)]
        if unheld:
            return f"no held-out evidence: {', '.join(unheld)} has no held-out occurrence yet"
        against = [c for p in named for c in self.counter_evidence(p, flips)]
        if against:
            return f"held-out evidence against it: {', '.join(against)}"
        unmoved = [p for p in named if not self.evidence(p, before, after, flips)]
        if not unmoved:
            return ""
        risen = [
            (p, i)
            for p in unmoved
            for i in self.held_out[p]
            if after.get(i, 0.0) > before.get(i, 0.0)
        ]
        # an item another preference's check lifted rose for that preference, not this one
        by_other = [
            _change(i, before, after) for p, i in risen if self._others_flipped(p, i, flips)
        ]
        rounding = [
            _change(i, before, after) for p, i in risen if not self._others_flipped(p, i, flips)
        ]
        said = [
            f"rose with another preference's flipped check: {', '.join(by_other)}"
            if by_other
            else "",
            f"rose only by a judge's rounding or stayed short of passing: {', '.join(rounding)}"
            if rounding
            else "",
        ]
        within = "; ".join(s for s in said if s)
        return (
            f"no held-out evidence: {', '.join(unmoved)} did not move from failing to "
            f"passing" + (f" ({within})" if within else "")
        )

    def rivals(self, edits: list[Edit]) -> list[list[int]]:
        """Edits naming the same preference, or preferences that share a held-out item
        (which of them moved it is ambiguous where only the judge moved): the engine
        ablates them one by one (core/training/edit_attribution.py)."""
        naming: dict[str, list[int]] = {}
        for index, edit in enumerate(edits):
            for pref in named_preferences(edit.rationale):
                naming.setdefault(pref, []).append(index)
                for item in self.held_out.get(pref, ()):
                    naming.setdefault(f"item:{item}", []).append(index)
        groups = [sorted(set(g)) for g in naming.values()]
        return [list(g) for g in dict.fromkeys(map(tuple, groups)) if len(g) > 1]


def _change(item: str, before: Mapping[str, float], after: Mapping[str, float]) -> str:
    return f"{item} {before.get(item, 0.0):.2f} → {after.get(item, 0.0):.2f}"
