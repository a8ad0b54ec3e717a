"""A cell too long for its column keeps its lead (indentation, ↳) and its tail."""

from __future__ import annotations

from rich.text import Text

from skillopt_tui.app.widgets.table_fill import keep_tail


def test_the_tail_that_tells_names_apart_stays():
    cut = keep_tail(Text("    ↳ staged/sleep-2026-11-30-notes-app"), 16)
    assert cut.plain == "    ↳ …notes-app" and len(cut.plain) == 16


def test_a_short_cell_is_left_alone_and_a_tiny_width_keeps_the_end():
    assert keep_tail(Text("demo"), 10).plain == "demo"
    assert keep_tail(Text("    ↳ staged/x-api"), 5).plain == "…-api"
