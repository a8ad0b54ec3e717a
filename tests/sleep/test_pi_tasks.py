"""pi sessions: the real pi 0.73.1's files (make_pi.py) give exactly the typed prompts of
the active branch; the prompt left by going back with /tree is reported as abandoned, the
failed call and the turn interrupted with Escape are marked aborted."""

from __future__ import annotations

import json

from tests.sleep.more_agents import (
    PROJECT,
    SECRET,
    expected,
    home_with,
    mark_ours,
    redacted,
    run,
    texts,
)

# expected["typed"]: what make_pi.py typed, in order; the third was then abandoned (/tree).
TYPED = expected("pi")["typed"]
ACTIVE = [redacted(TYPED[0]), TYPED[1], *TYPED[3:]]


def test_real_pi_sessions_give_the_active_branch_and_count_the_abandoned_prompt(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "pi"))
    assert texts(result, "pi") == [ACTIVE, expected("pi")["printed"]]
    typed, printed = result.sessions
    assert (typed.cwd, typed.abandoned, result.abandoned) == (PROJECT, 1, 1)
    # the failed call (stopReason error) and the Escape (stopReason aborted)
    assert [t.aborted for t in typed.tasks] == [False, False, False, True, True, False]
    # only the Escape is the person interrupting
    assert [t.interrupted for t in typed.tasks] == [False, False, False, False, True, False]
    assert typed.tasks[1].tools == ["bash"] and typed.tasks[1].commands == ["ls"]
    assert typed.to_json()["abandoned"] == 1 and TYPED[2] not in json.dumps(result.to_json())
    # pi 0.73.1 writes `pi -p` sessions like typed ones: not known as automation.
    assert printed.automation is False


def test_a_second_harvest_delivers_only_prompts_added_since(tmp_path):
    home = home_with(tmp_path, "pi")
    run(tmp_path, home)
    assert run(tmp_path, home).sessions == []
    file = sorted((home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))[0]
    leaf = json.loads(file.read_text().splitlines()[-1])["id"]
    entry = {"type": "message", "id": "feedbeef", "parentId": leaf, "timestamp": "2026-12-02T03:00:00Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "And a test."}]}}  # fmt: skip
    with file.open("a") as f:
        f.write(json.dumps(entry) + "\n")
    again = run(tmp_path, home)
    assert texts(again, "pi") == [["And a test."]]


def test_a_branch_from_an_old_entry_abandons_the_prompts_after_it(tmp_path):
    """Going back to the first reply and asking something else leaves the later prompts
    off the active branch: none of them is delivered, each is counted."""
    home = home_with(tmp_path, "pi")
    file = sorted((home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))[0]
    records = [json.loads(line) for line in file.read_text().splitlines()]
    first_reply = next(r for r in records if r.get("message", {}).get("role") == "assistant")
    entry = {"type": "message", "id": "0ddba11", "parentId": first_reply["id"],
             "message": {"role": "user", "content": "Start over."}}  # fmt: skip
    with file.open("a") as f:
        f.write(json.dumps(entry) + "\n")
    result = run(tmp_path, home)
    (session,) = [s for s in result.sessions if s.file == str(file)]
    assert [t.text for t in session.tasks] == [redacted(TYPED[0]), "Start over."]
    assert session.abandoned == 6


def test_no_planted_secret_in_the_state_or_the_output(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "pi"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert SECRET not in json.dumps(result.to_json(show_redactions=True))
    assert result.redactions["github_token"] == 1


def test_the_cron_line_carries_the_other_agents_homes_in_use(tmp_path):
    """Cron has no $OPENCODE_DB or $XDG_DATA_HOME: `sleep schedule` writes each existing
    home into the line as its flag, and none for an agent that is not installed."""
    from sleep.harvest.agent_roots import more_homes_in_use
    from sleep.state.schedule import cron_line
    from sleep.state.settings import SleepSettings

    home = home_with(tmp_path, "pi", "opencode")
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    moved = tmp_path / "elsewhere.db"
    db.rename(moved)
    homes = more_homes_in_use(SleepSettings(), {"OPENCODE_DB": str(moved)}, home)
    assert homes == {"--pi-home": str(home / ".pi" / "agent"), "--opencode-data": str(moved)}
    line = cron_line(at="03:30", skillopt="skillopt", state_dir=tmp_path, log=tmp_path / "log",
                     more_homes=homes)  # fmt: skip
    assert f"--opencode-data {moved}" in line and "--copilot-home" not in line


def test_sessions_our_backends_started_are_automation(tmp_path):
    """pi cannot say which sessions were print mode; the ids our own runs recorded can:
    such a session (here the `pi -p` one) is automation and left out by default."""
    home = home_with(tmp_path, "pi")
    printed = sorted((home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))[1]
    sid = json.loads(printed.read_text().splitlines()[0])["id"]
    mark_ours(tmp_path, sid)
    result = run(tmp_path, home, automation=False)
    assert texts(result, "pi") == [ACTIVE] and result.left_out["automation"] == 1
