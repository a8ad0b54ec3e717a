"""The corrections corpus's scorer (tests/support/corrections_score.py) on hand-made
plans: it credits a correction only where the request it corrects carries it, a check
only of a kind the label names, a preference only when its occurrences are that
preference's requests."""

from __future__ import annotations

from tests.support.corrections_score import misses, score

LABELS = {
    "planted_secrets": ["sk-ant-api03-SECRETsecretSECRETsecret"],
    "preferences": {"logging": "use logging", "short": "short answers"},
    "requests": [
        {"id": "r-a", "text": "add a --verbose flag", "kind": "agentic",
         "committed_after": "c2", "changes_files": True, "base_commit": "c1"},
        {"id": "r-b", "text": "warn on a missing due date", "kind": "agentic",
         "committed_after": None, "changes_files": True, "base_commit": "c2"},
        {"id": "r-c", "text": "why does it time out? key=sk-ant-api03-SECRETsecretSECRETsecret",
         "kind": "advice", "committed_after": None, "changes_files": False, "base_commit": "c2"},
    ],
    "corrections": [
        {"id": "k1", "preference": "logging", "corrects": "r-a", "form": "after",
         "text": "no, use logging instead of print", "mechanical": True,
         "check_kinds": ["diff_not_adds"], "check_value": "print"},
        {"id": "k2", "preference": "logging", "corrects": "r-b", "form": "after",
         "text": "use the logging module, not print", "mechanical": True,
         "check_kinds": ["diff_not_adds"], "check_value": "print"},
        {"id": "k3", "preference": "short", "corrects": "r-c", "form": "after",
         "text": "one line please", "mechanical": True,
         "check_kinds": ["answer_first_line_max"], "check_value": ""},
    ],
}  # fmt: skip


def _task(text, rubric="", checks=(), kind="agentic", replay="handoff-workspace", split="train",
          **more):  # fmt: skip
    return {"id": f"t-{text[:6]}", "text": text, "rubric": rubric, "kind": kind,
            "replay": replay, "split": split,
            "checks": [{"kind": k, "value": v} for k, v in checks], **more}  # fmt: skip


def test_a_correction_counts_only_on_the_request_it_corrects():
    plan = {"skills": [{"tasks": [
        _task("add a --verbose flag", rubric="The person said: 'no, use logging instead of print'"),
        _task("use the logging module, not print"),  # a correction mined as a request
        _task("warn on a missing due date", rubric="no, use logging instead of print"),
        _task("why does it time out? key=[REDACTED:anthropic]", kind="advice", replay="chat"),
    ]}]}  # fmt: skip
    figures = score(plan, LABELS)
    assert figures.attached == ["k1"]  # k2's words are not in r-b's rubric (k1's are)
    assert figures.by_form == {"after": [1, 3]}
    assert figures.own_tasks == ["k2"]
    assert figures.found == ["r-a", "r-b", "r-c"]  # the redacted request is still found
    assert figures.checked == [] and figures.mechanical == 3


def test_a_check_counts_only_when_its_kind_and_value_fit():
    plan = {"skills": [{"tasks": [
        _task("add a --verbose flag", checks=[("not_contains", "print")]),
        _task("warn on a missing due date", checks=[("diff_not_adds", r"print\(")]),
        _task("why does it time out? key=[REDACTED]", kind="advice", replay="chat",
              checks=[("answer_first_line_max", "1")]),
    ]}]}  # fmt: skip
    figures = score(plan, LABELS)
    assert figures.checked == ["k2", "k3"]
    assert figures.attached == ["k2", "k3"]  # a fitting check carries a mechanical correction


def test_agentic_replayed_as_chat_and_wrong_kinds_are_counted():
    plan = {"skills": [{"tasks": [
        _task("add a --verbose flag", kind="advice", replay="chat"),
        _task("warn on a missing due date"),
        _task("why does it time out? key=[REDACTED]", kind="agentic"),
    ]}]}  # fmt: skip
    figures = score(plan, LABELS)
    assert figures.agentic_as_chat == ["r-a"]
    assert figures.kinds_wrong == {"r-a": "advice", "r-c": "agentic"}


def test_preferences_found_and_held_out_need_the_right_tasks():
    a = _task("add a --verbose flag", rubric="no, use logging instead of print", split="val",
              base="c1")  # fmt: skip
    b = _task("warn on a missing due date", rubric="use the logging module, not print")
    c = _task("why does it time out? key=[REDACTED]", kind="advice", rubric="one line please")
    mixed = {"text": "logs", "occurrences": [{"task": a["id"]}, {"task": c["id"]}]}
    plan = {"skills": [{"tasks": [a, b, c], "preferences": [mixed]}]}
    figures = score(plan, LABELS)
    assert figures.preferences_found == []  # one logging occurrence is not two
    assert figures.held_out == ["logging"]  # r-a carries k1 and is held out
    assert figures.starts_before_commit == ["r-a"]
    plan["preferences"] = [{"text": "logging", "occurrences": [{"task": a["id"]},
                                                               {"task": b["id"]}]}]  # fmt: skip
    assert score(plan, LABELS).preferences_found == ["logging"]


def test_a_request_mined_into_another_task_s_rubric_is_a_misfire():
    plan = {"skills": [{"tasks": [
        _task("add a --verbose flag",
              rubric="The person had to correct an earlier answer: 'warn on a missing due date'"),
        _task("why does it time out? key=[REDACTED:anthropic]", kind="advice", replay="chat"),
    ]}]}  # fmt: skip
    figures = score(plan, LABELS)
    assert figures.swallowed == ["r-b"]  # r-b is no task; its words are r-a's correction
    assert "requests swallowed as a correction (misfires): 1/3" in figures.lines()


def test_misses_say_what_mining_did_with_each_unattached_correction():
    """bench/corrections_corpus.py --misses: a correction that became a task of its own,
    a request swallowed into another's rubric and one left out are each named."""
    plan = {"skills": [{"tasks": [
        _task("add a --verbose flag", rubric="The person said: 'no, use logging instead of print'"),
        _task("use the logging module, not print"),
        _task("tidy the repo", rubric="why does it time out? key=[REDACTED]"),
    ]}], "left_out": [{"prompt": "warn on a missing due date", "reason": "interrupted"}]}  # fmt: skip
    lines = misses(plan, LABELS)
    assert len(lines) == 4, lines  # k2, k3; r-b, r-c
    assert lines[0].startswith("k2 [logging, after] 'use the logging module, not print' ->")
    assert "its request r-b is no task of its own" in lines[0]
    assert "its own task t-use th (agentic" in lines[0]
    assert lines[2] == "request r-b (agentic) 'warn on a missing due date' -> left out: interrupted"
    assert "in the rubric of t-tidy t" in lines[3] and lines[3].startswith("request r-c")
    assert "[planted secret]" in lines[3] and LABELS["planted_secrets"][0] not in lines[3]
