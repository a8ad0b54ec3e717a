"""Reflections that arrive while their tab is hidden wrap at the log's width, not at one
column (a character per line: what a live run showed on switching to Reflection)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static, TabbedContent, TabPane

from core.run.events import ReflectionText
from skillopt_tui.app.widgets.reflection_log import ReflectionLog

TEXT = "The answers were long; the skill has no format rule. " * 3


class _Tabs(App):
    def compose(self) -> ComposeResult:
        with TabbedContent(initial="other"):
            with TabPane("Other", id="other"):
                yield Static("rollouts here")
            with TabPane("Reflection", id="reflection"):
                yield ReflectionLog()


async def test_reflections_written_on_a_hidden_tab_keep_the_logs_width():
    app = _Tabs()
    async with app.run_test(size=(100, 30)) as pilot:
        tabs = app.query_one(TabbedContent)
        tabs.active = "reflection"  # shown once (its width is known), then hidden again
        await pilot.pause()
        tabs.active = "other"
        await pilot.pause()
        log = app.query_one(ReflectionLog)
        log.add_reflections([ReflectionText(step=1, kind="failure", group=0, text=TEXT)])
        tabs.active = "reflection"
        await pilot.pause()
        rows = [strip.text.rstrip() for strip in log.lines]
        assert rows[0] == "step 1 · failure (group 0)"
        assert len(rows) <= 4  # ~160 characters at ~98 columns: two rows of text
        assert " ".join(rows[1:]).split() == TEXT.split()


async def test_a_log_never_shown_keeps_only_its_newest_batches_for_its_first_showing():
    app = _Tabs()
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(ReflectionLog)
        for n in range(30):  # thirty batches while the tab was never opened
            log.add_reflections([ReflectionText(step=n, kind="failure", group=0, text="x")])
        app.query_one(TabbedContent).active = "reflection"
        await pilot.pause()
        rows = [strip.text.rstrip() for strip in log.lines]
        assert rows[0] == "… 20 earlier entries not shown (the run directory has them)"
        steps = [row for row in rows if row.startswith("step ")]
        assert steps == [f"step {n} · failure (group 0)" for n in range(20, 30)]
        assert log.seen == 30
