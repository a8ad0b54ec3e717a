"""What kind of task a prompt is (sleep/mine/kinds.py), from its text and the session's
evidence: the requests of issue 21 and their look-alikes."""

import pytest

from sleep.mine.kinds import kind_of, normalise_kind


@pytest.mark.parametrize(
    "text",
    [
        "add input validation to total()",
        "run the test suite and summarise any failures",
        "list the files in stages/ and check each one defines run()",
        "rename the load stage to publish and update pipeline.yaml",
        "Explain what notes.py does in one paragraph.",
        "Rename the function add_note to create_note.\nKeep the old name as an alias.",
        "write a changelog entry for these changes",
    ],
)
def test_requests_that_need_the_project_are_agentic(text):
    assert kind_of(text) == "agentic"


@pytest.mark.parametrize(
    "text",
    [
        "What is the difference between a list and a tuple in Python?",
        "how do I install the dependencies of the web package?",
        "explain the difference between rebase and merge",
        "Why does `pnpm build` warn about 'use client'?",
    ],
)
def test_questions_answerable_from_their_text_are_advice(text):
    assert kind_of(text) == "advice"


@pytest.mark.parametrize(
    "text",
    [
        "post the nightly run summary to #data-alerts",
        "deploy the app to staging",
        "push the branch to origin",
        "send the release notes to the team on slack",
        "open a pull request for this",
    ],
)
def test_requests_acting_outside_the_project_are_external(text):
    assert kind_of(text) == "external"


def test_publish_as_a_name_inside_the_project_is_not_external():
    assert kind_of("rename the load stage to publish and update pipeline.yaml") == "agentic"


def test_a_request_about_the_redacted_secret_is_redacted():
    text = "decode this token and tell me when it expires: [REDACTED:jwt]"
    assert kind_of(text) == "redacted"


def test_a_redacted_secret_beside_the_request_does_not_drop_it():
    text = "add a retry to fetch() in client.py; the config has API_KEY=[REDACTED:api_key]"
    assert kind_of(text) == "agentic"


def test_the_sessions_own_tool_calls_make_a_task_agentic():
    text = "what is in here?"
    assert kind_of(text) == "advice"
    assert kind_of(text, tools=["Bash"]) == "agentic"
    assert kind_of(text, tools=["exec_command"]) == "agentic"
    assert kind_of(text, tools=["WebSearch", "TodoWrite"]) == "advice"  # not the project's


def test_a_follow_up_of_agentic_turns_is_agentic():
    assert kind_of("Now show me the first line.") == "advice"
    assert kind_of("Now show me the first line.", context_agentic=True) == "agentic"


def test_kinds_from_old_archives_and_models_are_normalised():
    assert normalise_kind("coding") == "agentic"
    assert normalise_kind("advice") == "advice"
    assert normalise_kind("nonsense") == "advice"


def test_a_redaction_mark_does_not_read_as_a_project_identifier():
    # `[REDACTED:aws_access_key_id]` looks like a snake_case name of the project
    text = "explain what the parser module is for; my access key is [REDACTED:aws_access_key_id]"
    assert kind_of(text) == "advice"
    assert kind_of("explain what parse_rows() is for; my key is [REDACTED:openai_key]") == "agentic"


@pytest.mark.parametrize(
    "text",
    [
        "What's the difference between ROUND_HALF_UP and ROUND_HALF_EVEN, and which should an "
        "invoice use?",
        "what does O_NONBLOCK do on a pipe?",
        "Explain when SIGTERM and SIG_IGN matter for a daemon",
    ],
)
def test_a_question_about_a_named_constant_is_advice(text):
    # a constant in capitals is as often a library's as the project's: a question about one
    # needs no workspace (the strong-model night gave this one a workspace)
    assert kind_of(text) == "advice"


@pytest.mark.parametrize(
    "text",
    [
        "Use ROUND_HALF_EVEN instead of ROUND_HALF_UP when totals are rounded",
        "set MAX_RETRIES to 5",
        "Why does to_cents use ROUND_HALF_UP?",  # the project's function, asked about
        "What does add_note return when the title is empty?",
    ],
)
def test_a_request_naming_a_constant_or_a_question_about_a_project_name_is_agentic(text):
    assert kind_of(text) == "agentic"
