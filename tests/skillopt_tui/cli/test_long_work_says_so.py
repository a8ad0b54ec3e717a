"""Long work says what it is doing: a config that falls back to the embedded model for
more than a few minutes warns with the planned calls and a duration; a second Ctrl-C says
what it does before it stops the run."""

from __future__ import annotations

import signal

import pytest

from skillopt_tui.cli.long_run import embedded_warning
from skillopt_tui.cli.train_cmds import _install_stop_handlers


def test_a_long_embedded_run_is_named_with_its_calls_and_minutes():
    # configs/capitals.yaml without a key: 1,652 target + 111 optimizer calls planned
    warning = embedded_warning(1763)
    assert warning is not None
    assert "1,763 planned calls" in warning and "minutes" in warning
    assert "OPENAI_API_KEY" in warning and "configs/demo.yaml" in warning
    assert embedded_warning(400) is None  # the demo: short, the notice alone says enough


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
