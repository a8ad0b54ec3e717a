"""`skillopt train` warns before the run when its budget cannot buy the baseline and one
candidate (scenario: 5 val items; a fewshot step is 3 rollouts and 5 gate calls)."""

from __future__ import annotations

from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.train_scenario import write_config


def test_estimate_warns_when_the_calls_cap_buys_no_candidate(tmp_path):
    config = write_config(tmp_path)
    result = skillopt(tmp_path, "train", "--config", str(config), "--estimate",
                      "--set", "budget.max_calls=10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        "warning: budget.max_calls 10 calls buys the baseline and 0 candidates (baseline 5 "
        "calls, each candidate 8 calls" in result.stdout
    )
    assert "set budget.max_calls to at least 13 calls" in result.stdout
    quiet = skillopt(tmp_path, "train", "--config", str(config), "--estimate",
                     "--set", "budget.max_calls=13")  # fmt: skip
    assert "warning" not in quiet.stdout


def test_train_warns_before_it_starts(tmp_path):
    config = write_config(tmp_path)
    out = tmp_path / "runs" / "capped"
    result = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out),
                      "--set", "budget.max_calls=4")  # fmt: skip
    assert "warning: budget.max_calls 4 calls does not buy even the baseline" in result.stderr
