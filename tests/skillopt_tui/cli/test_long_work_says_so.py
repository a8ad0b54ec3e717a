"""Long work says what it is doing: a config that falls back to the embedded model for
more than a few minutes warns with the planned calls and a duration; a second Ctrl-C says
what it does before it stops the run."""

from __future__ import annotations

import signal

import pytest

from core.config import load_config
from core.run.estimate import CallPlan
from envs import get_environment
from skillopt_tui.cli.long_run import embedded_seconds, embedded_warning, planned_calls
from skillopt_tui.cli.train_cmds import _install_stop_handlers
from tests.support.doc_examples import ROOT


def test_a_long_embedded_run_is_named_with_its_calls_and_minutes():
    # configs/capitals.yaml without a key: 1,652 target + 99 optimizer calls planned
    warning = embedded_warning(CallPlan(target_calls=1652, optimizer_calls=99, total_steps=12))
    assert warning is not None
    assert "1,751 planned calls (1,652 target, 99 optimizer)" in warning
    # 1,652 x 0.48 s + 99 x 7.6 s, the measured CPU seconds a call takes by role
    assert "about 26 minutes on an idle core" in warning
    assert "OPENAI_API_KEY" in warning and "configs/demo.yaml" in warning


def test_the_demo_is_short_enough_to_need_no_warning():
    demo = load_config(ROOT / "configs/demo.yaml")
    env = get_environment(demo.env, target_backend=demo.models.target.backend)
    plan = planned_calls(demo, env, uses_llm=demo.train.strategy == "llm")
    assert embedded_seconds(plan) < 5 * 60, plan
    assert embedded_warning(plan) is None


class _Loop:
    """A test double for the event loop: keeps the signal handlers to call them."""

    def __init__(self) -> None:
        self.handlers: dict = {}

    def add_signal_handler(self, sig, callback, *args) -> None:
        self.handlers[sig] = (callback, args)


class _Stop:
    def __init__(self) -> None:
        self.set_ = False

    def is_set(self) -> bool:
        return self.set_

    def set(self) -> None:
        self.set_ = True


def test_a_second_ctrl_c_says_it_stops_now_and_how_to_resume():
    loop, stop, said = _Loop(), _Stop(), []
    _install_stop_handlers(loop, stop, said.append)
    callback, args = loop.handlers[signal.SIGINT]
    callback(*args)
    assert stop.set_ and len(said) == 1
    with pytest.raises(KeyboardInterrupt):
        callback(*args)
    assert len(said) == 2
    assert "stopping now" in said[1] and "resumes" in said[1]
