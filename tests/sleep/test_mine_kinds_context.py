"""Replay kinds and follow-up context as issue 37 found them wrong: delegation to a
sub-agent replayed as chat, a question about another machine replayed in a workspace, a
question about which credential to use never replayed, a yes/no question given a
workspace because the agent read one file; a follow-up carrying every earlier turn
(unrelated ones with redacted keys included) and multi-line prompts not indented.
Each fails on the code before."""

from __future__ import annotations

from sleep.mine.evidence import context_text
from sleep.mine.heuristic import mine_sessions
from sleep.mine.kinds import kind_of
from sleep.mine.tasks import Turn


def test_delegation_to_a_sub_agent_is_agentic():
    text = "delegate to a sub-agent: survey what each pipeline stage does and report back"
    assert kind_of(text) == "agentic"
    assert kind_of("use a sub-agent to survey the pipeline stages") == "agentic"
    assert kind_of("what does each pipeline stage do?", tools=["Agent"]) == "agentic"
    assert kind_of("what does each pipeline stage do?", tools=["Task"]) == "agentic"


def test_a_question_about_another_machine_is_advice_even_when_the_agent_ran_commands():
    text = "staging can't reach the db since this morning — why does the connection time out?"
    assert kind_of(text, tools=["Bash", "Read"]) == "advice"


def test_a_yes_no_question_stays_advice_when_the_agent_only_read_a_file():
    text = "does load_rows() drop rows with a null id?"
    assert kind_of(text, tools=["Read", "Grep"]) == "advice"
    assert kind_of(text, tools=["Read", "Edit"]) == "agentic"  # it changed something


def test_which_credential_to_use_is_advice_not_external():
    assert kind_of("should I use a fine-grained token or a deploy key for CI?") == "advice"
    assert kind_of("deploy the app to staging") == "external"


def test_a_redacted_secret_the_question_does_not_need_keeps_the_task():
    text = ("which kind of token should CI use? the one in the env file is "
            "[REDACTED:github_token], what does it need to publish?")  # fmt: skip
    assert kind_of(text) == "advice"
    assert kind_of("decode this token and tell me when it expires: [REDACTED:jwt]") == "redacted"


def test_a_follow_up_carries_only_the_turns_it_refers_to():
    key_turn = "set OPENAI_API_KEY=[REDACTED:openai_key] in my shell profile"
    session = {"source": "claude", "session_id": "s", "cwd": "/p", "tasks": [
        {"text": key_turn, "answer": "Added it to ~/.zshrc."},
        {"text": "add a --since option to report.py", "answer": "Added --since.", "tools": ["Edit"]},
        {"text": "now write tests for these changes", "answer": "Wrote tests."},
    ]}  # fmt: skip
    tasks = {t.intent: t for t in mine_sessions([session])}
    context = tasks["now write tests for these changes"].context
    assert [t.prompt for t in context] == ["add a --since option to report.py"]
    assert tasks["now write tests for these changes"].kind == "agentic"


def test_an_earlier_turn_naming_the_same_file_is_context_too():
    session = {"source": "claude", "session_id": "s", "cwd": "/p", "tasks": [
        {"text": "explain what report.py does", "answer": "It renders reports."},
        {"text": "what is the difference between a list and a tuple?", "answer": "Mutability."},
        {"text": "now add a docstring to report.py like you described", "answer": "Done."},
    ]}  # fmt: skip
    tasks = {t.intent: t for t in mine_sessions([session])}
    context = tasks["now add a docstring to report.py like you described"].context
    assert [t.prompt for t in context] == [
        "explain what report.py does",
        "what is the difference between a list and a tuple?",
    ]


def test_multi_line_earlier_prompts_are_indented_as_written():
    text = context_text([Turn("rename these:\n  - a\n  - b", "Renamed:\na → x\nb → y")])
    assert text.splitlines() == [
        "Earlier in this session:",
        "- The person asked: rename these:",
        "    - a",
        "    - b",
        "  The assistant answered: Renamed:",
        "    a → x",
        "    b → y",
    ]


def test_a_behaviour_question_answered_by_reading_is_advice():
    """issue 37 (corpus): a walk-through the agent answered by reading, and a yes/no
    question Codex answered with `sed -n` / `rg`, were agentic."""
    walk = "walk me through how pipeline.py handles rows with a null amount, step by step"
    assert kind_of(walk, tools=["Read"]) == "advice"
    question = "is format_total locale aware?"
    assert (
        kind_of(question, tools=["exec_command"], commands=["sed -n 1,40p billing.py", "rg locale"])
        == "advice"
    )
    assert (
        kind_of(question, tools=["exec_command"], commands=["python -c 'import billing'"])
        == "agentic"
    )
    assert kind_of(question, tools=["exec_command"]) == "agentic"  # its command unknown


def test_a_follow_up_about_the_changes_carries_the_request_that_made_them():
    session = {"source": "claude", "session_id": "s", "cwd": "/p", "tasks": [
        {"text": "add a --since option to report.py", "answer": "Added --since.", "tools": ["Edit"]},
        {"text": "what is the difference between a list and a tuple?", "answer": "Mutability."},
        {"text": "now write a changelog entry for these changes", "answer": "Wrote it."},
    ]}  # fmt: skip
    tasks = {t.intent: t for t in mine_sessions([session])}
    context = tasks["now write a changelog entry for these changes"].context
    assert [t.prompt for t in context] == [
        "add a --since option to report.py",
        "what is the difference between a list and a tuple?",
    ]
