"""Two needs people word many ways are one preference across their wordings: the bare
command for a how-do-I question, and asking before deleting files (issue 37, round 6: on
the ledger corpus, a development corpus since then, "just the command pls", "cmd pls",
"command only, no essay pls" and "ugh too long. whats the command" were four preferences
of one occurrence each, and so were the three "ask before deleting" ones). The command one
is also a check on the answer's first line. Generic wordings written for this test beside
the corpus's."""

from __future__ import annotations

import pytest

from sleep.mine.correction_checks import checks_for, concepts
from sleep.mine.heuristic import mine_sessions
from tests.sleep.test_mine_corrections import prompt, session

COMMAND_ONLY = ["cmd pls", "just the command please", "command only, skip the essay",
                "way too long. whats the command", "only the cmd"]  # fmt: skip
ASK_BEFORE_DELETING = [
    "ask before removing files pls",
    "never delete anything without asking",
    "check with me before deleting stuff, that folder was mine",
]
NEITHER = ["add a command to list users", "the command fails on windows", "ask before you push"]


@pytest.mark.parametrize("text", COMMAND_ONLY)
def test_the_bare_command_asked_for_is_one_need_and_a_check(text):
    """Fails on the old code: no shared need, and no check for "cmd pls" and the like."""
    assert "command-only" in concepts(text)
    assert [c.kind for c in checks_for(text, agentic=False)] == ["answer_first_line_max"]


@pytest.mark.parametrize("text", ASK_BEFORE_DELETING)
def test_asking_before_deleting_is_one_need(text):
    """Fails on the old code: each wording was a need of its own."""
    assert "ask-before-deleting" in concepts(text)


@pytest.mark.parametrize("text", NEITHER)
def test_a_command_or_an_ask_said_otherwise_is_neither(text):
    """Guard."""
    assert not concepts(text) & {"command-only", "ask-before-deleting"}


def test_two_sessions_wording_it_differently_share_one_preference():
    """Fails on the old code: two preferences of one occurrence each."""
    first = session(prompt("how do i rebuild the search index?", "You can run ..."),
                    prompt("cmd pls", "make reindex"), prompt("thanks"))  # fmt: skip
    second = session(prompt("how do i rotate the logs by hand?", "Logs rotate when ..."),
                     prompt("just the command please", "logrotate -f conf"),
                     prompt("thanks"), sid="s2")  # fmt: skip
    tasks = mine_sessions([first, second])
    assert len(tasks) == 2 and all(t.preference for t in tasks)
    assert len({t.preference for t in tasks}) == 1
