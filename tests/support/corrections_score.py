"""Scores what `skillopt sleep dry-run --json` mined from the corrections corpus against
its ground truth (tests/support/corrections_labels.py): the figures issue 37's "Done
when" names. Nothing here is tuned to today's miner: a request is found by its own text,
a correction is attached when the task of the request it corrects carries it (its words in
the rubric, or a check that fits it), a check fits when its kind is one the label names
and its value matches the label's pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

HELD_OUT = ("val", "test")  # splits the optimizer never sees
WORKSPACE_MODES = ("agent", "tools", "handoff-workspace")


def normalised(text: str) -> str:
    """Lowercase words: quoting, dashes and line breaks do not decide a match."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def plan_tasks(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for route in plan.get("skills", []) for t in route.get("tasks", [])]


def plan_preferences(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """`preferences` at the top level or per skill (issue 37 allows both)."""
    found = list(plan.get("preferences") or [])
    for route in plan.get("skills", []):
        found += route.get("preferences") or []
    return found


def _request_key(request: dict[str, Any], secrets: list[str]) -> str:
    text = request["text"]
    for secret in secrets:  # redacted in what Sleep shows: match on what comes before it
        text = text.split(secret)[0]
    return normalised(text)


@dataclass
class Figures:
    corrections: int = 0
    attached: list[str] = field(default_factory=list)
    # per form (after | up_front | after_interrupt): [attached, of all]
    by_form: dict[str, list[int]] = field(default_factory=dict)
    own_tasks: list[str] = field(default_factory=list)  # corrections mined as requests
    mechanical: int = 0
    checked: list[str] = field(default_factory=list)  # mechanical ones with a fitting check
    requests: int = 0
    found: list[str] = field(default_factory=list)  # requests mined as a task of their own
    kinds_right: list[str] = field(default_factory=list)
    kinds_wrong: dict[str, str] = field(default_factory=dict)  # request -> mined kind
    agentic: int = 0
    agentic_as_chat: list[str] = field(default_factory=list)
    preferences: int = 0
    preferences_found: list[str] = field(default_factory=list)
    held_out: list[str] = field(default_factory=list)  # preferences with a held-out occurrence
    committed: int = 0
    starts_before_commit: list[str] = field(default_factory=list)
    # misfires: requests mined as no task of their own but as a correction of another's
    swallowed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"corrections attached to the request they correct: {len(self.attached)}/{self.corrections}",
            "  by form: " + ", ".join(f"{f} {a}/{n}" for f, (a, n) in self.by_form.items()),
            f"corrections mined as tasks of their own: {len(self.own_tasks)}/{self.corrections}",
            f"mechanical corrections with a fitting check: {len(self.checked)}/{self.mechanical}",
            f"requests mined as a task: {len(self.found)}/{self.requests}",
            f"requests swallowed as a correction (misfires): {len(self.swallowed)}/{self.requests}",
            f"requests of the right kind: {len(self.kinds_right)}/{self.requests}"
            + (f" (wrong: {self.kinds_wrong})" if self.kinds_wrong else ""),
            f"agentic requests replayed as chat or not agentic: {len(self.agentic_as_chat)}/{self.agentic}",
            f"preferences found: {len(self.preferences_found)}/{self.preferences}",
            f"preferences with a held-out occurrence: {len(self.held_out)}/{self.preferences}",
            f"committed requests whose replay starts before the commit: "
            f"{len(self.starts_before_commit)}/{self.committed}",
        ]


def request_tasks(plan: dict[str, Any], labels: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each labelled request's task in the plan (found by the request's own text)."""
    tasks = plan_tasks(plan)
    by_request: dict[str, dict[str, Any]] = {}
    for request in labels["requests"]:
        key = _request_key(request, labels["planted_secrets"])
        match = [t for t in tasks if normalised(t.get("text", "")).startswith(key)]
        if match:
            by_request[request["id"]] = match[0]
    return by_request


def score(plan: dict[str, Any], labels: dict[str, Any]) -> Figures:
    tasks = plan_tasks(plan)
    by_request = request_tasks(plan, labels)
    figures = Figures(requests=len(labels["requests"]), found=sorted(by_request))
    rubrics = [normalised(t.get("rubric", "")) for t in tasks]
    figures.swallowed = [
        r["id"]
        for r in labels["requests"]
        if r["id"] not in by_request
        and any(_request_key(r, labels["planted_secrets"]) in rubric for rubric in rubrics)
    ]
    for request in labels["requests"]:
        task = by_request.get(request["id"])
        if task is None:
            continue
        if task.get("kind") == request["kind"]:
            figures.kinds_right.append(request["id"])
        else:
            figures.kinds_wrong[request["id"]] = str(task.get("kind"))
    _score_corrections(figures, labels, tasks, by_request)
    _score_agentic(figures, labels, by_request)
    _score_preferences(figures, labels, plan, by_request)
    _score_commits(figures, labels, by_request)
    return figures


def fitting_check(task: dict[str, Any], correction: dict[str, Any]) -> bool:
    return any(
        check.get("kind") in correction["check_kinds"]
        and re.search(correction["check_value"], str(check.get("value", "")))
        for check in task.get("checks", [])
    )


def carries(task: dict[str, Any], correction: dict[str, Any]) -> bool:
    """The task holds the correction: its words in the rubric, or a check that fits it."""
    in_rubric = normalised(correction["text"]) in normalised(task.get("rubric", ""))
    return in_rubric or (correction["mechanical"] and fitting_check(task, correction))


def _score_corrections(figures: Figures, labels, tasks, by_request) -> None:
    for correction in labels["corrections"]:
        figures.corrections += 1
        task = by_request.get(correction["corrects"])
        form = figures.by_form.setdefault(correction["form"], [0, 0])
        form[1] += 1
        if task is not None and carries(task, correction):
            figures.attached.append(correction["id"])
            form[0] += 1
        if correction["form"] != "up_front" and any(
            normalised(t.get("text", "")) == normalised(correction["text"]) for t in tasks
        ):
            figures.own_tasks.append(correction["id"])
        if correction["mechanical"]:
            figures.mechanical += 1
            if task is not None and fitting_check(task, correction):
                figures.checked.append(correction["id"])


def _score_agentic(figures: Figures, labels, by_request) -> None:
    for request in labels["requests"]:
        if request["kind"] != "agentic":
            continue
        figures.agentic += 1
        task = by_request.get(request["id"])
        if task is None:
            continue
        if task.get("kind") != "agentic" or task.get("replay") not in WORKSPACE_MODES:
            figures.agentic_as_chat.append(request["id"])


def _score_preferences(figures: Figures, labels, plan, by_request) -> None:
    mined = plan_preferences(plan)
    for pref in labels["preferences"]:
        figures.preferences += 1
        ours = [c for c in labels["corrections"] if c["preference"] == pref]
        carried = [
            by_request[c["corrects"]]
            for c in ours
            if c["corrects"] in by_request and carries(by_request[c["corrects"]], c)
        ]
        if any(t.get("split") in HELD_OUT for t in carried):
            figures.held_out.append(pref)
        targets = {by_request[c["corrects"]]["id"] for c in ours if c["corrects"] in by_request}
        for group in mined:
            tasks = [o.get("task") for o in group.get("occurrences", [])]
            hits = sum(1 for t in tasks if t in targets)
            if hits >= 2 and hits * 2 >= len(tasks):
                figures.preferences_found.append(pref)
                break


def _score_commits(figures: Figures, labels, by_request) -> None:
    """A request whose work was committed after its session must replay from the commit
    before it: the plan names that commit for the task (in any field)."""
    for request in labels["requests"]:
        if not (request["committed_after"] and request["changes_files"]):
            continue
        figures.committed += 1
        task = by_request.get(request["id"])
        if task is not None and request["base_commit"] in repr(task):
            figures.starts_before_commit.append(request["id"])


def _described(task: dict[str, Any]) -> str:
    checks = ", ".join(f"{c.get('kind')} {c.get('value', '')!r}" for c in task.get("checks", []))
    return (
        f"{task.get('id')} ({task.get('kind')}, {task.get('replay')}, {task.get('split')}; "
        f"rubric {'empty' if not task.get('rubric') else 'set'}; checks: {checks or 'none'})"
    )


def _shown(text: str, labels: dict[str, Any]) -> str:
    """A labelled text as printed: never with the planted key in it."""
    for secret in labels["planted_secrets"]:
        text = text.replace(secret, "[planted secret]")
    return text


def misses(plan: dict[str, Any], labels: dict[str, Any]) -> list[str]:
    """What mining did with each correction it did not attach to the request it corrects,
    and with each request it mined as no task of its own: one line each, to read."""
    tasks = list({t.get("id"): t for t in reversed(plan_tasks(plan))}.values())  # first of each id
    by_request = request_tasks(plan, labels)
    figures = score(plan, labels)
    lines = []
    for c in labels["corrections"]:
        if c["id"] in figures.attached:
            continue
        words = normalised(c["text"])
        request = by_request.get(c["corrects"])
        did = [
            f"its request {c['corrects']} is "
            + (_described(request) if request else "no task of its own")
        ]
        did += [f"its own task {_described(t)}" for t in tasks if normalised(t["text"]) == words]
        did += [
            f"in the rubric of {t['id']} ({t['text'][:40]!r})"
            for t in tasks
            if words in normalised(t.get("rubric", "")) and t["id"] != (request or {}).get("id")
        ]
        shown = _shown(c["text"], labels)
        lines.append(f"{c['id']} [{c['preference']}, {c['form']}] {shown!r} -> " + "; ".join(did))
    left_out = {
        normalised(x.get("prompt", "")): x.get("reason", "") for x in plan.get("left_out", [])
    }
    for r in labels["requests"]:
        if r["id"] in by_request:
            continue
        words = _request_key(r, labels["planted_secrets"])
        where = [f"in the rubric of {t['id']} ({t['text'][:40]!r})" for t in tasks
                 if words in normalised(t.get("rubric", ""))]  # fmt: skip
        where += [f"left out: {why}" for text, why in left_out.items() if text == words]
        shown = _shown(r["text"], labels)
        lines.append(f"request {r['id']} ({r['kind']}) {shown[:60]!r} -> "
                     + ("; ".join(where) or "nowhere"))  # fmt: skip
    return lines
