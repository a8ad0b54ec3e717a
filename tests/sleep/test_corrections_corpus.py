"""Issue 37's acceptance figures, measured on five corrections corpora of real Claude Code
and Codex sessions (made by tests/support/corrections_corpus.py) in which a person
corrects four or five recurring preferences: `billing` (tests/sleep/fixtures/corrections,
the corpus the mining heuristics were developed on), `photos` (corrections_photos, another
project and person, labelled before mining ran on it, then fixed against), `recipes`
(corrections_recipes, labelled before mining ran on it, held out for one round, then fixed
against), `greenhouse` (corrections_greenhouse, labelled before mining ran on it and held
out from fixing) and `ledger` (corrections_ledger, written and labelled without reading
the miner and held out from all mining work: the honest generalisation figure). The real
`skillopt sleep dry-run --json` mines them; tests/support/corrections_score.py compares
what it mined with the labels.

The thresholds are the issue's and the same for every corpus. Where today's miner misses
one, the test is marked `xfail(strict=True)` with what it lacks: it turns into an XPASS
failure the day mining meets the bar, and the mark comes off then.
`python bench/corrections_corpus.py` prints the figures.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from sleep.night.replay_checks import run_command_checks
from tests.sleep.corrections_world import CORPORA, CorrectionsWorld, corpus_labels, lay_out
from tests.support.corrections_score import Figures, plan_tasks, score

ATTACH_TARGET = 0.9  # issue 37: ">= 90 % of the corrections to the request they correct"

# Thresholds a corpus does not meet yet: test name -> (corpus -> what mining lacks). Each
# is a strict xfail for that corpus only, so it fails loudly the day it passes.
# The greenhouse corpus was held out until the structural reading of corrections
# (sleep/mine/follow_up.py); that round fixed against all four, so its marks, like the
# others', record a development figure now (it has none left: its fourth preference, UTC,
# is found since the preference grouping changes of branch mining-needs2).
# The ledger corpus was held out from all mining work until its first reading on the
# structural reading of corrections (attach 4/16 -> 11-12/16, misfires 3 -> 7-8 of 22,
# requests mined 18 -> 15/22, kinds 15 -> 10/22, replays before their commit 12 -> 8/13:
# that first reading stays on record as the generalisation figure). Since the precision
# round (mining-precision) it is a DEVELOPMENT corpus: its labels and misses were read
# (bench/corrections_corpus.py --corpus ledger --misses) and mining fixed against them, so
# its marks record development figures now.
_LEDGER = "ledger"
UNMET: dict[str, dict[str, str]] = {
    "test_every_request_is_mined_with_its_kind": {
        _LEDGER: "22/22 mined; 16 of the 22 of the right kind: six questions labelled advice "
        "('how do i …?', 'wait, what happens if …?', the 401) are mined agentic (they name "
        "the project's files, with at most one file read: sleep/mine/kinds.py)",
    },
}
# Not strict: none at present. (The recipes corpus's held-out figure moved between runs
# while the split hashed task ids that hold the temporary project path; the split now
# hashes the request, sleep/mine/split.py.)
UNSETTLED: dict[str, dict[str, str]] = {}


def corpus_of(request) -> str:
    callspec = getattr(request.node, "callspec", None)
    return callspec.params.get("corpus", "") if callspec else ""


@pytest.fixture(autouse=True)
def _unmet(request):
    reason = UNMET.get(request.node.originalname, {}).get(corpus_of(request))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    unsettled = UNSETTLED.get(request.node.originalname, {}).get(corpus_of(request))
    if unsettled:
        request.applymarker(pytest.mark.xfail(strict=False, reason=unsettled))


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def measured(tmp_path_factory, corpus) -> tuple[CorrectionsWorld, dict, Figures]:
    world = lay_out(tmp_path_factory.mktemp(f"corrections-{corpus}"), CORPORA[corpus])
    plan = world.dry_run()
    return world, plan, score(plan, world.labels)


# ------------------------------------------------------------------ the corpus itself


def test_the_corpus_has_the_shape_the_issue_asks_for(corpus):
    labels = corpus_labels(CORPORA[corpus])
    agents = Counter(s["agent"] for s in labels["sessions"])
    assert agents["claude"] >= 2 and agents["codex"] >= 2
    corrections = labels["corrections"]
    per_preference = Counter(c["preference"] for c in corrections)
    assert len([p for p, n in per_preference.items() if n >= 3]) >= 4
    for pref in per_preference:
        ours = [c for c in corrections if c["preference"] == pref]
        assert len({c["session"] for c in ours}) >= 2, pref
        assert {c["agent"] for c in ours} == {"claude", "codex"}, pref
    forms = Counter(c["form"] for c in corrections)
    assert forms["up_front"] >= 2 and forms["after_interrupt"] >= 1
    assert {s["batch"] for s in labels["sessions"]} == {1, 2}
    assert any(r["committed_after"] and r["changes_files"] for r in labels["requests"])


@pytest.mark.parametrize("later", ["photos", "recipes", "greenhouse", "ledger"])
def test_each_later_corpus_differs_from_those_before(later):
    """Another project, asking for at least two things no earlier corpus asks for, with
    requests of its own, so its figures are not the earlier ones seen again."""
    names = sorted(CORPORA, key=list(CORPORA).index)
    ours = corpus_labels(CORPORA[later])
    for earlier in names[: names.index(later)]:
        theirs = corpus_labels(CORPORA[earlier])
        assert ours["project"] != theirs["project"]
        assert not {r["text"] for r in ours["requests"]} & {r["text"] for r in theirs["requests"]}
    before = {
        p for e in names[: names.index(later)] for p in corpus_labels(CORPORA[e])["preferences"]
    }
    assert len(set(ours["preferences"]) - before) >= 2


def _transcript(corpus: str, labels: dict, key: str) -> str:
    (session,) = [s for s in labels["sessions"] if s["key"] == key]
    return (CORPORA[corpus] / session["transcript"]).read_text(encoding="utf-8")


def test_the_transcripts_hold_what_the_labels_say(corpus):
    """The CLIs wrote it: a person's sessions (not print mode), the interrupt, the
    patches and test runs, the planted key, two days."""
    labels = corpus_labels(CORPORA[corpus])
    texts = {s["key"]: _transcript(corpus, labels, s["key"]) for s in labels["sessions"]}
    claude = [k for k, s in zip(texts, labels["sessions"], strict=True) if s["agent"] == "claude"]
    codex = [k for k in texts if k not in claude]
    assert all('"entrypoint":"cli"' in texts[k] for k in claude)
    assert all('"originator":"codex-tui"' in texts[k] for k in codex)
    assert any("[Request interrupted by user]" in texts[k] for k in claude)
    assert any("*** Begin Patch" in texts[k] for k in codex)
    if any(c["check_kinds"] == ["ran"] for c in labels["corrections"]):
        assert sum("make test" in t for t in texts.values()) >= 3
    assert any(secret in t for t in texts.values() for secret in labels["planted_secrets"])
    days = {
        s["batch"]: set(re.findall(r'"timestamp":"(\d{4}-\d\d-\d\d)T', texts[s["key"]]))
        for s in labels["sessions"]
    }
    assert len(days[1]) == len(days[2]) == 1 and days[1] != days[2]


def test_the_billing_corpus_delegates_to_a_sub_agent():
    labels = corpus_labels(CORPORA["billing"])
    texts = [_transcript("billing", labels, s["key"]) for s in labels["sessions"]]
    assert any(re.search(r'"name":"(Agent|Task)"', t) for t in texts)


# ------------------------------------------------------------------ what mining finds


def test_every_session_is_read_as_a_persons(measured):
    _world, plan, _figures = measured
    assert plan["sessions"] == len(measured[0].labels["sessions"])
    assert plan["automation_skipped"] == 0


def test_acknowledgements_and_fragments_are_not_tasks(measured):
    world, plan, _figures = measured
    texts = {t["text"].strip().lower() for t in plan_tasks(plan)}
    assert not texts & {p["text"].lower() for p in world.labels["prompts"]}


def test_corrections_attach_to_the_request_they_correct(measured):
    _world, _plan, figures = measured
    assert len(figures.attached) >= ATTACH_TARGET * figures.corrections, figures.lines()


def test_no_correction_is_mined_as_a_request_of_its_own(measured):
    _world, _plan, figures = measured
    assert figures.own_tasks == [], figures.lines()


def test_no_request_is_swallowed_as_a_correction(measured):
    """Precision first: a request read as a correction of the one before it is lost as a
    task (on ledger, before the precision round, 7 of 22: "add a test for archive_old",
    "use the same --since for export too", "wait, what happens if two archive runs
    overlap?", "no real http in tests, patch it out. add a retry to …")."""
    _world, _plan, figures = measured
    assert len(figures.swallowed) <= 1, figures.lines()


def test_mechanical_corrections_become_checks(measured):
    _world, _plan, figures = measured
    assert len(figures.checked) >= ATTACH_TARGET * figures.mechanical, figures.lines()


def test_a_new_request_that_says_instead_of_is_its_own_task(measured):
    world, _plan, figures = measured
    saying = [r["id"] for r in world.labels["requests"] if "instead of" in r["text"]]
    if not saying:
        pytest.skip("no request of this corpus says 'instead of'")
    assert set(saying) <= set(figures.found)


def test_a_correction_after_an_interrupt_tests_the_interrupted_request(measured):
    world, plan, figures = measured
    (k,) = [c for c in world.labels["corrections"] if c["form"] == "after_interrupt"]
    assert k["id"] in figures.attached and k["id"] not in figures.own_tasks


def test_every_request_is_mined_with_its_kind(measured):
    _world, _plan, figures = measured
    assert figures.kinds_wrong == {} and len(figures.found) == figures.requests, figures.lines()


def test_no_agentic_task_is_replayed_as_chat(measured):
    _world, _plan, figures = measured
    assert figures.agentic_as_chat == [], figures.lines()


def test_every_recurring_preference_is_found(measured):
    _world, _plan, figures = measured
    assert len(figures.preferences_found) == figures.preferences, figures.lines()


def test_every_preference_seen_twice_has_a_held_out_occurrence(measured):
    _world, _plan, figures = measured
    assert len(figures.held_out) == figures.preferences, figures.lines()


def test_committed_requests_replay_from_the_commit_before_their_session(measured):
    _world, _plan, figures = measured
    assert len(figures.starts_before_commit) == figures.committed, figures.lines()


# ------------------------------------------------------------------ the person's checks


def _last_commit(world: CorrectionsWorld) -> str:
    """The person's last commit: the work of a session whose agent ran `make test`, which
    passed there, so a correct replay of it ends with this tree."""
    return [s["commit_after"] for s in world.labels["sessions"] if s["commit_after"]][-1]


def _jailed(world: CorrectionsWorld, workspace, commands: list[str]):
    results = run_command_checks(workspace, commands, project=world.project)
    if any("outside the jail" in r.reason for r in results):
        pytest.skip(results[0].reason)
    return {r.command: r for r in results}


def test_the_persons_tests_pass_in_the_jail_at_a_correct_replay(measured, tmp_path):
    """The workspace is right: its tests pass in the replay jail run as pytest."""
    world = measured[0]
    workspace = world.checkout(_last_commit(world), tmp_path / "ws")
    result = _jailed(world, workspace, ["python -m pytest -q"])["python -m pytest -q"]
    assert result.status == "pass", result.output


def test_the_persons_make_test_passes_in_the_jail_at_a_correct_replay(measured, tmp_path):
    world = measured[0]
    workspace = world.checkout(_last_commit(world), tmp_path / "ws")
    result = _jailed(world, workspace, ["make test"])["make test"]
    assert result.status == "pass", result.output


# ------------------------------------------------------------------ secrets


def test_no_planted_secret_reaches_sleep_state_or_output(tmp_path, corpus):
    """A night's frozen sessions, tasks and handoff prompts, the archive, status and every
    command's output: the key pasted in a log is nowhere."""
    world = lay_out(tmp_path, CORPORA[corpus])
    night = world.sleep("run", "--json", ok=(0, 3))  # 3: waiting for handoff answers
    done = [world.sleep("dry-run", "--json"), night, world.sleep("status")]
    outputs = [text for d in done for text in (d.stdout, d.stderr)]
    files = [p for root in (world.state, world.skills) for p in root.rglob("*") if p.is_file()]
    assert len(files) > 3, "the night wrote nothing to look in"
    for secret in world.labels["planted_secrets"]:
        assert not any(secret in text for text in outputs)
        assert not [p for p in files if secret.encode() in p.read_bytes()]
