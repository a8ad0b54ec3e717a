"""A toast keeps a path or branch name on one line at 60 and 80 columns (Textual's toasts
are half the screen wide: at 60 columns "~/.claude/skills/quiz/SKILL.md" broke mid-word)."""

from __future__ import annotations

import pytest
from textual.widgets._toast import Toast

from skillopt_tui.app.app import SkillOptApp
from tests.support.tui_app import RUNS, SkillsRepoDouble, wait_until

SAID = (
    "Adopted as c0ffee0 on main; deployed to ~/.claude/skills/quiz/SKILL.md; nothing left "
    "to review: branch archived as adopted/sleep-2026-11-30-notes-app."
)


@pytest.mark.parametrize("size", [(60, 18), (80, 24), (120, 40)], ids=["60", "80", "120"])
async def test_no_word_of_a_toast_is_broken(size):
    app = SkillOptApp(
        RUNS, RUNS / "none", refresh_runs=False, poll_interval=0.05, repo_factory=SkillsRepoDouble
    )
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause(0.2)
        app.notify(SAID, title="Adopted", timeout=30)
        assert await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.2)
        [toast] = app.screen.query(Toast)
        room = toast.content_region.width
        longest = max(SAID.split(), key=len)
        assert len(longest) <= room, f"{longest!r} ({len(longest)}) in a toast {room} wide"
        assert toast.region.right <= size[0]
