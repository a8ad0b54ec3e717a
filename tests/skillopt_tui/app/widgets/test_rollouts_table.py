"""The rollouts table sorts by a column (a key, or a click on its header) with live rows
landing where they sort, and can be paused: rows that come meanwhile are kept, not shown,
and marked when it resumes (issue 40)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from core.run.events import RolloutFinished
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable


def _rollout(n: int, hard: float, step: int = 1) -> RolloutFinished:
    return RolloutFinished(
        phase="train",
        step=step,
        split="train",
        skill_hash="h",
        item_id=f"item-{n:03d}",
        task_type="qa",
        hard=hard,
        soft=hard,
        latency_s=n / 10,
    )


class _Table(App):
    def compose(self) -> ComposeResult:
        yield RolloutsTable()


def _items(table: RolloutsTable) -> list[str]:
    return [r.item_id for r in table.rollouts]


async def test_s_sorts_by_the_next_column_and_live_rows_land_where_they_sort():
    app = _Table()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(RolloutsTable)
        table.focus()
        table.add_rollouts([_rollout(1, 0.5), _rollout(2, 1.0), _rollout(3, 0.0), _rollout(4, 0.5)])
        table.move_cursor(row=0)  # item-001
        await pilot.press("s", "s", "s", "s")  # step, phase, item, score
        assert table.sort_column == 3
        assert _items(table) == ["item-003", "item-001", "item-004", "item-002"]  # ties: as came
        assert table.rollout_at(table.cursor_row).item_id == "item-001"  # the cursor stayed
        assert "score ▲" in table.render_line(0).text
        table.add_rollouts([_rollout(5, 0.0), _rollout(6, 0.75)])
        assert _items(table) == [
            "item-003",
            "item-005",
            "item-001",
            "item-004",
            "item-006",
            "item-002",
        ]
        assert table.rollout_at(table.cursor_row).item_id == "item-001"
        await pilot.press("S")
        assert _items(table)[:2] == ["item-002", "item-006"]
        assert "score ▼" in table.render_line(0).text
        table.add_rollouts([_rollout(7, 0.9)])
        assert _items(table)[:3] == ["item-002", "item-007", "item-006"]
        await pilot.press("s", "s", "s")  # latency, tokens, then the order they came
        assert table.sort_column is None
        assert _items(table) == [f"item-{n:03d}" for n in range(1, 8)]


async def test_a_click_on_a_header_sorts_by_that_column_and_again_reverses():
    app = _Table()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(RolloutsTable)
        table.add_rollouts([_rollout(1, 0.5, step=10), _rollout(2, 1.0, step=9)])
        header = table.render_line(0).text
        await pilot.click(RolloutsTable, offset=(header.index("step") + 1, 0))
        assert table.sort_column == 0 and not table.descending
        assert _items(table) == ["item-002", "item-001"]  # step 9 before 10, not "10" < "9"
        header = table.render_line(0).text
        await pilot.click(RolloutsTable, offset=(header.index("latency") + 1, 0))
        assert table.sort_column == 4 and _items(table) == ["item-001", "item-002"]
        await pilot.click(RolloutsTable, offset=(header.index("latency") + 1, 0))
        assert table.descending and _items(table) == ["item-002", "item-001"]


async def test_paused_rows_are_kept_then_shown_marked_on_resume():
    app = _Table()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(RolloutsTable)
        table.add_rollouts([_rollout(1, 0.5), _rollout(2, 1.0)])
        table.hold()
        table.add_rollouts([_rollout(3, 0.0), _rollout(4, 0.5)])
        assert _items(table) == ["item-001", "item-002"]  # still
        assert [r.item_id for r in table.held] == ["item-003", "item-004"]
        assert table.resume() == 2
        await pilot.pause()
        assert _items(table) == ["item-001", "item-002", "item-003", "item-004"]
        marked = table.get_component_rich_style("rollouts--new")
        plain = table.rich_style
        table.move_cursor(row=0)
        styles = [table.render_line(y)._segments[0].style for y in range(1, 5)]
        assert styles[2] == marked and styles[3] == marked  # the two that came while paused
        assert marked not in styles[:2] and styles[1] != plain  # row 1: the odd-row stripe
        table.hold()  # the next pause clears the marks
        assert not table.fresh
