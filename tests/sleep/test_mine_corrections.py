"""A correction is a test of the request it corrects (issue 37): it lands on that request
whatever comes between (an acknowledgement, a short "fix it"), in its many shapes ("did
you run the tests?", "you dropped the old function"), never swallows a new request that
merely says "instead of", and the person accepted only an answer that has content.
Each test fails on the code before it."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from sleep.mine.interrupted import interrupted_left_out
from sleep.mine.tasks import Check, Correction, MinedTask


def session(*prompts: dict, sid: str = "s1", source: str = "claude") -> dict:
    return {"source": source, "session_id": sid, "cwd": "/p", "automation": False,
            "tasks": list(prompts)}  # fmt: skip


def prompt(text: str, answer: str = "", *, edited: bool = False, **more) -> dict:
    data = {"text": text, "timestamp": "2026-12-01T10:00:00Z", "aborted": False, "answer": answer}
    if edited:
        data["tools"] = ["Edit"]
        data["edits"] = [{"path": "/p/cli.py", "old": "a", "new": "b"}]
    return {**data, **more}


def by_intent(*sessions: dict) -> dict[str, MinedTask]:
    return {t.intent: t for t in mine_sessions(list(sessions))}


VERBOSE = "add a --verbose flag to the cli"


def test_a_short_fragment_between_does_not_accept_the_answer_it_follows():
    """issue 37: "fix it" was skipped but still marked the print() answer accepted, so the
    task's reference said print() while its correction said logging."""
    tasks = by_intent(
        session(
            prompt(VERBOSE, "Added --verbose using print().", edited=True),
            prompt("fix it", "Fixed the flag parsing; still prints.", edited=True),
            prompt(
                "no, use logging instead of print", "Switched --verbose to logging.", edited=True
            ),
            prompt("now add a --quiet flag to the cli as well"),
        )
    )
    task = tasks[VERBOSE]
    assert task.reference == "Switched --verbose to logging."
    assert "use logging instead of print" in task.rubric
    assert Check("diff_not_adds", r"\bprint\(") in task.checks
    assert Check("diff_adds", r"\blogging\b|\blogger\.") in task.checks
    assert [c.text for c in task.corrections] == ["no, use logging instead of print"]
    assert "fix it" not in tasks


def test_a_correction_after_an_acknowledgement_takes_the_acknowledged_answer_back():
    tasks = by_intent(
        session(
            prompt("rename parse_rows to read_rows in loader.py", "Renamed it.", edited=True),
            prompt("thanks"),
            prompt(
                "you dropped the old function, callers still use it", "Kept parse_rows as an alias."
            ),
            prompt("ok"),
        )
    )
    [task] = tasks.values()
    assert "callers still use it" in task.rubric
    assert task.reference == "Kept parse_rows as an alias."


def test_corrections_that_do_not_start_with_no_are_recognised():
    """issue 37: these became context-free tasks of their own."""
    tasks = by_intent(
        session(
            prompt("add a retry to fetch_rates in rates.py", "Added a retry loop.", edited=True),
            prompt("did you run the tests?", "Yes now: make test passes.", commands=["make test"]),
            prompt(
                "does the loader drop rows with a null id?", "Let me walk you through the loader..."
            ),
            prompt("that's a lot to read — just yes or no?", "Yes."),
            prompt("ok but say which function drops them", "Yes: clean_rows drops them."),
            prompt("great"),
        )
    )
    assert set(tasks) == {
        "add a retry to fetch_rates in rates.py",
        "does the loader drop rows with a null id?",
    }
    retry = tasks["add a retry to fetch_rates in rates.py"]
    assert Check("ran", r"\bmake test") in retry.checks
    question = tasks["does the loader drop rows with a null id?"]
    assert Check("answer_starts_with", "yes|no") in question.checks
    assert question.reference == "Yes: clean_rows drops them."
    assert "say which function" in question.rubric


def test_a_new_request_that_merely_says_instead_of_is_a_task_of_its_own():
    tasks = by_intent(
        session(
            prompt("summarise last week's orders as a table", "| day | orders |"),
            prompt("export it as JSON instead of the table", "Wrote orders.json."),
        )
    )
    assert tasks["summarise last week's orders as a table"].rubric == ""
    assert "export it as JSON instead of the table" in tasks


def test_a_new_question_is_not_read_as_a_correction():
    tasks = by_intent(
        session(
            prompt("add a cache to fetch_rates in rates.py", "Added an lru_cache.", edited=True),
            prompt("where is the config loaded?", "In settings.py."),
            prompt("why is the build slow?", "The docs step dominates."),
        )
    )
    assert len(tasks) == 3
    assert tasks["add a cache to fetch_rates in rates.py"].rubric == ""


def test_checks_come_from_meaning_not_raw_words():
    """issue 37: "use the logging module" gave `contains "the"`, "instead of print:" gave
    `not_contains "print:"`, "use plain string formatting" gave `contains "plain"`."""
    tasks = by_intent(
        session(
            prompt("how should I report progress in a long script?", "Use print() calls."),
            prompt("no, use the logging module instead of print:", "Use logging.info(...)."),
            prompt("how do I build the greeting text from the user's name?", "Use jinja."),
            prompt("no, use plain string formatting", "Use f'Hello {name}'."),
        )
    )
    progress = tasks["how should I report progress in a long script?"]
    assert progress.checks == [Check("contains", "logging"), Check("not_contains", "print(")]
    assert tasks["how do I build the greeting text from the user's name?"].checks == []


def test_a_correction_after_an_interrupted_answer_makes_the_interrupted_request_its_task():
    """issue 37: the "never mind … just tell me" prompt became a context-free chat task
    and the request it redirected was left out."""
    walk = "walk me through how load_rows() in loader.py handles nulls"
    never_mind = "never mind the long version, just tell me whether nulls are dropped or kept"
    sessions = [
        session(
            prompt(
                "open loader.py and list its functions", "load_rows, clean_rows.", tools=["Read"]
            ),
            prompt(walk, "First, load_rows opens", interrupted=True, aborted=True),
            prompt(never_mind, "They are dropped."),
            prompt("thanks"),
        )
    ]
    tasks = {t.intent: t for t in mine_sessions(sessions)}
    assert never_mind not in tasks
    task = tasks[walk]
    assert never_mind in task.rubric and task.reference == "They are dropped."
    assert Check("answer_first_line_max", "40 words") in task.checks
    assert [t.prompt for t in task.context] == ["open loader.py and list its functions"]
    assert interrupted_left_out(sessions) == []  # not left out: it is a task


def test_a_content_free_reply_is_not_what_the_person_accepted():
    tasks = by_intent(
        session(
            prompt("tidy up the imports in report.py", "…done."),
            prompt("bump the version in pyproject.toml", "Done!", edited=True),
            prompt("what does the --dry flag of the cli do?", "It prints the plan and exits."),
        )
    )
    assert tasks["tidy up the imports in report.py"].reference == ""
    edited = tasks["bump the version in pyproject.toml"].reference
    assert "edited cli.py" in edited and "+ b" in edited  # the change it made, not "Done!"


def test_corrections_are_kept_with_their_session_agent_and_date():
    tasks = mine_sessions(
        [
            session(prompt(VERBOSE, "print()"), prompt("use logging, not print", "ok, logging"),
                    sid="a", source="claude"),
            session(prompt(VERBOSE, "print()"), prompt("use logging, not print", "logging"),
                    sid="b", source="codex"),
        ]
    )  # fmt: skip
    [task] = tasks
    assert task.corrections == [
        Correction("use logging, not print", "claude:a", "claude", "2026-12-01T10:00:00Z"),
        Correction("use logging, not print", "codex:b", "codex", "2026-12-01T10:00:00Z"),
    ]
    again = MinedTask.from_dict(task.to_dict())
    assert again.corrections == task.corrections


def test_constraints_stated_inside_a_request_become_its_rubric_and_checks():
    """issue 37: constraints stated up front gave a rubric in 2 of 10 requests;
    "refactor billing.py (keep the public API unchanged)" got an empty one."""
    requests = {
        "refactor billing.py (keep the public API unchanged)": [],
        "parse the export in orders.py, standard library only": [Check("no_new_import", "")],
        "add a retry to fetch() in client.py and don't add dependencies": [
            Check("no_new_import", "")
        ],
        "add an --until option to report.py, run the tests before you tell me it's done": [
            Check("ran", r"\bmake test")
        ],
        "what does the --dry flag of cli.py do? one line please": [
            Check("answer_first_line_max", "40 words")
        ],
    }
    tasks = by_intent(
        *[
            session(prompt(text, "ok", edited="?" not in text, commands=["make test"]), sid=str(n))
            for n, text in enumerate(requests)
        ]
    )
    for text, checks in requests.items():
        task = tasks[text]
        assert task.rubric.startswith("The person asked:"), text
        assert [c for c in task.checks if c.kind != "command"] == checks, text
    assert "keep the public API unchanged" in tasks[next(iter(requests))].rubric


def test_demands_about_the_last_answer_are_corrections():
    """issue 37 (corpus): "run make test before you say it's done", "one line please" and
    "keep the old import path working" became tasks of their own."""
    tasks = by_intent(
        session(
            prompt("add a JSON export to report.py", "Added render_json.", edited=True),
            prompt("run make test before you say it's done", "make test passes.",
                   commands=["make test"]),
            prompt("should CI use a token or a deploy key?", "Both work; trade-offs: ..."),
            prompt("one line please", "A deploy key: read-only and scoped to one repo."),
            prompt("move format_total into a new formatting.py", "Moved it.", edited=True),
            prompt("keep the old import path working, other modules import it", "Re-exported."),
        )
    )  # fmt: skip
    assert len(tasks) == 3
    assert Check("ran", r"\bmake test") in tasks["add a JSON export to report.py"].checks
    credential = tasks["should CI use a token or a deploy key?"]
    assert Check("answer_first_line_max", "40 words") in credential.checks
    assert "old import path" in tasks["move format_total into a new formatting.py"].rubric
