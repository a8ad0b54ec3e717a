"""A dot inside a word is no sentence end, and "one line" the code should make is no
demand on the reply (issue 37, the greenhouse strong night): "… to alerts.py that formats
one line for the alert log" gave the rubric line "py that formats one line …" and a 40-word
first-line check on an agentic task."""

from sleep.mine.correction_checks import checks_for
from sleep.mine.evidence import constraint_checks, constraints_in

ALERT_LINE = (
    "add alert_line(reading, kind) to alerts.py that formats one line for the alert log "
    "with the time it fired"
)


def test_a_file_name_does_not_split_the_request_into_a_constraint():
    assert constraints_in(ALERT_LINE) == []
    assert constraint_checks(ALERT_LINE, agentic=True, commands_after=[]) == []


def test_dotted_names_versions_and_abbreviations_are_not_sentence_ends():
    text = (
        "bump pyyaml to 6.0.1 in setup.cfg and call yaml.safe_load, e.g. in config.load. "
        "Keep the old name as an alias"
    )
    assert constraints_in(text) == ["Keep the old name as an alias"]
    inline = "rename utils.py to paths.py without touching cli.py or the tests"
    assert constraints_in(inline) == ["without touching cli.py or the tests"]


def test_one_line_of_output_the_code_makes_is_not_an_answer_length():
    for text in (
        "write report.summary() so it prints a single line per sensor",
        "make the logger emit one line for each retry",
    ):
        assert not any(c.kind == "answer_first_line_max" for c in checks_for(text, agentic=True))


def test_a_demand_on_the_reply_still_limits_its_first_line():
    for text in ("what does config.load do? one line please", "explain setup.cfg in one sentence"):
        checks = constraint_checks(text, agentic=False, commands_after=[])
        assert ("answer_first_line_max", "40 words") in [(c.kind, c.value) for c in checks]
