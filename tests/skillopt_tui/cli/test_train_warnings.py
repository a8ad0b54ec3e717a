"""`skillopt train` warns on the console, once, when the config names an optimizer that
the fewshot strategy never calls (the old code said nothing); the run goes on."""

from __future__ import annotations

from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.train_scenario import write_config


def test_fewshot_with_an_optimizer_set_warns_once_and_runs(tmp_path):
    config = write_config(tmp_path, epochs=1)  # fewshot, optimizer scripted:unused-by-fewshot
    done = skillopt(tmp_path, "train", "--config", str(config), "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert said.count("never calls the optimizer") == 1, said
