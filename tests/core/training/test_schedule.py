import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config import ScheduleConfig
from core.training.schedule import edit_budget_for_step


def budgets(kind, start, end, total):
    schedule = ScheduleConfig(kind=kind, start=start, end=end)
    return [edit_budget_for_step(schedule, step, total) for step in range(total)]


def test_default_is_cosine_four_to_two():
    schedule = ScheduleConfig()
    assert (schedule.kind, schedule.start, schedule.end) == ("cosine", 4, 2)
    # Published progress (step + 1) / total, Python rounding: see test_method_fidelity.py.
    assert [edit_budget_for_step(schedule, s, 5) for s in range(5)] == [4, 3, 3, 2, 2]


def test_constant():
    assert budgets("constant", 3, 1, 6) == [3] * 6


def test_linear():
    # progress 0.2 .. 1.0: 3.2 2.4 1.6 0.8 0 and 1.8 2.6 3.4 4.2 5
    assert budgets("linear", 4, 0, 5) == [3, 2, 2, 1, 0]
    assert budgets("linear", 1, 5, 5) == [2, 3, 3, 4, 5]


def test_cosine_shape_is_slow_at_both_ends():
    values = budgets("cosine", 10, 0, 11)
    assert values[-1] == 0
    assert values == [10, 9, 8, 7, 6, 4, 3, 2, 1, 0, 0]


def test_steps_outside_the_range_are_clamped():
    schedule = ScheduleConfig(kind="linear", start=4, end=2)
    assert edit_budget_for_step(schedule, -3, 5) == 4
    assert edit_budget_for_step(schedule, 99, 5) == 2


def test_zero_budget_stays_zero():
    assert budgets("cosine", 0, 0, 4) == [0, 0, 0, 0]


@given(
    st.sampled_from(["constant", "linear", "cosine"]),
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(1, 200),
)
def test_endpoints_bounds_and_monotonic(kind, start, end, total):
    values = budgets(kind, start, end, total)
    if kind == "constant" or total == 1:  # a one-step run starts (and ends) at `start`
        assert values == [start] * total
    else:
        assert values[-1] == end
    low, high = (min(start, end), max(start, end)) if kind != "constant" else (start, start)
    assert all(low <= v <= high for v in values)
    assert all(v >= 0 for v in values)
    pairs = list(zip(values, values[1:], strict=False))
    if start >= end or kind == "constant":
        assert all(a >= b for a, b in pairs)
    else:
        assert all(a <= b for a, b in pairs)


@pytest.mark.parametrize("kind", ["linear", "cosine"])
def test_a_one_step_run_gets_the_start_budget_as_published(kind):
    """Issue 22: a one-step run got the end budget (2); published it gets the start (4)."""
    schedule = ScheduleConfig(kind=kind, start=4, end=2)
    assert edit_budget_for_step(schedule, 0, 1) == 4
    assert edit_budget_for_step(schedule, 1, 2) == 2  # longer runs still end at `end`
