"""What a staged edit traces to (sleep/night/edit_trace.py): the preference its rationale
names, that preference's sessions, and the project files it names that the person's
corrections never did, on a real git project."""

from __future__ import annotations

import subprocess

from sleep.mine.preferences import Occurrence, Preference
from sleep.mine.tasks import Correction, MinedTask
from sleep.night.edit_trace import (
    corrected_words,
    names_files,
    project_files,
    trace_edits,
    trace_notes,
    trace_trailers,
)

PREF = Preference(
    "p-0123456789",
    "use logging, not print",
    [
        Occurrence("t-1", "claude:s1", "claude", "2026-11-10T10:00:00Z"),
        Occurrence("t-2", "codex:s2", "codex", "2026-11-12T09:00:00Z"),
    ],
)


def _project(tmp_path):
    root = tmp_path / "project"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "report.py").write_text("print('x')\n")
    (root / "Makefile").write_text("test:\n\tpython -m pytest\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    return root


def test_a_rule_naming_a_project_file_its_corrections_never_named_is_flagged(tmp_path):
    files = project_files(_project(tmp_path))
    assert {"billing/report.py", "report.py", "Makefile"} <= files
    edits = [
        {"op": "append", "content": "In billing/report.py use log.debug; run `make` via the Makefile.",
         "rationale": "p-0123456789: they corrected print"},
        {"op": "append", "content": "Use the logging module, never print().",
         "rationale": "p-0123456789: they corrected print"},
    ]  # fmt: skip
    corrected = {PREF.id: "no, use logging instead of print"}
    facts, general = trace_edits(edits, [PREF], corrected, files)
    assert facts.project_facts == ["billing/report.py", "Makefile"]
    assert general.project_facts == []
    assert general.sessions == ["claude:s1 (claude, 2026-11-10)", "codex:s2 (codex, 2026-11-12)"]


def test_a_file_the_person_named_in_their_correction_is_no_project_fact(tmp_path):
    files = project_files(_project(tmp_path))
    tasks = [
        MinedTask("t-1", "add a debug line", "/p", corrections=[
            Correction("in report.py use logging, not print", "claude:s1", "claude",
                       "2026-11-10T10:00:00Z")]),
    ]  # fmt: skip
    corrected = corrected_words(tasks, [PREF])
    assert "report.py" in corrected[PREF.id]
    edit = {"op": "append", "content": "Log in report.py.", "rationale": "p-0123456789"}
    [trace] = trace_edits([edit], [PREF], corrected, files)
    assert trace.project_facts == []


def test_words_that_only_look_like_files_are_not_project_files():
    files = frozenset({"app.py"})
    assert names_files("e.g. use print() in main.py or lib/x; see app.py", files) == ["app.py"]


def test_the_commit_names_the_preference_not_the_raw_message():
    """Fails on the old code: the "addresses" line and the trailer gave the whole message
    the preference was first said in (issue 37, greenhouse round 6)."""
    raw = "thx. tests with every change pls. next: add heat_stress(temp, humidity)"
    pref = Preference("p-0123456789", raw, PREF.occurrences, need="a test with every change")
    edit = {"op": "append", "content": "Add a test with every change.", "rationale": pref.id}
    [trace] = trace_edits([edit], [pref], {}, frozenset())
    assert 'addresses "a test with every change"' in trace_notes([trace])
    assert trace_trailers([trace])["Edit-1-Preference"] == "a test with every change"
    assert "heat_stress" not in trace_notes([trace]) + str(trace_trailers([trace]))
