"""The Sleep screen says whether an adopted edit helped (sleep/night/adoption_effect.py)
and how strong a staged night's evidence was: the preference night of
tests/sleep/test_preference_night.py, adopted, then corrected again in a later session."""

from __future__ import annotations

from textual.widgets import Static

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.sleep_data import load_nights
from skillopt_tui.app.widgets.sleep_rows import evidence_text
from tests.skillopt_tui.app.test_tui_sleep import _open_sleep
from tests.sleep.test_adoption_effect import adopted_night, corrected_again
from tests.sleep.test_preference_night import project, repo  # noqa: F401
from tests.support.tui_app import wait_until


async def test_the_sleep_screen_shows_counts_since_adoption_and_the_flag(
    tmp_path,
    repo,  # noqa: F811
    project,  # noqa: F811
    monkeypatch,
):
    """Fails on the old code: the screen showed nothing of the sessions after adoption."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    adopted = await adopted_night(tmp_path, repo, project)
    corrected_again(tmp_path, project, adopted, 1)
    app = SkillOptApp(tmp_path / "runs", repo.path, refresh_runs=False, poll_interval=0.05,
                      state_dir=tmp_path / "state")  # fmt: skip
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open_sleep(pilot)
        widget = screen.query_one("#since-adoption", Static)
        assert await wait_until(pilot, lambda: "Since adoption" in str(widget.render()))
        shown = " ".join(str(widget.render()).split())
        assert (
            "project: no, use logging instead of print: corrected 4× in 4 sessions before "
            "adoption, 1× in 1 sessions after — corrected again since adoption; to undo it: "
            "skillopt skills rollback"
        ) in shown, shown


def test_a_night_staged_on_weak_evidence_says_so(tmp_path):
    evidence = {"p": 0.5, "weak": True, "improved": 2, "regressed": 0, "val_items": 3}
    assert str(evidence_text(evidence)) == (
        "held out: 2 improved / 0 regressed of 3, p=0.5 — weak evidence: review before adopting"
    )
    assert "weak" not in str(evidence_text({**evidence, "p": 0.03, "weak": False}))
    assert load_nights(tmp_path) == []
