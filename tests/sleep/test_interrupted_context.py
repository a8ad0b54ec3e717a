"""A request the person interrupted and then redirected is mined with the turns it refers
to only (sleep/mine/heuristic.py): the photos night's chat replay of "explain how
a photo ends up in a particular folder" was given the unrelated exchange before it (a
test-file dispute, with emojis) as its context."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from tests.sleep.test_interrupted import prompt, session

SPEEDUP = dict(
    prompt("duplicates() is slow on big folders, only hash files whose size matches"),
    answer="Done 🎉 duplicates() now groups by size first ✨",
)
DISPUTE = dict(
    prompt("why did you change test_shelf.py?? put it back, the old assert was right"),
    answer="Restored test_shelf.py 👍",
)
WALK = dict(
    prompt("explain how a photo ends up in a particular folder, step by step", interrupted=True),
    answer="Great question! 📸 Step 1 …",
)
REDIRECT = prompt("stop, no emojis and no essay pls. which function decides it?")


def test_an_interrupted_request_that_refers_to_nothing_has_no_context():
    """Fails on the old code: the stopped request got the dispute before it as context."""
    mined = mine_sessions([session(SPEEDUP, DISPUTE, prompt("k"), WALK, REDIRECT)])
    [walk] = [t for t in mined if t.intent == WALK["text"]]
    assert "no emojis" in walk.rubric
    assert walk.context == [] and walk.prior_edits == []


def test_an_interrupted_follow_up_keeps_the_turns_it_refers_to():
    again = dict(prompt("now explain those changes step by step", interrupted=True), answer="…")
    mined = mine_sessions([session(SPEEDUP, again, REDIRECT)])
    [stopped] = [t for t in mined if t.intent == again["text"]]
    assert [t.prompt for t in stopped.context] == [SPEEDUP["text"]]
