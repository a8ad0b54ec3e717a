"""The compare-and-report guide's example output is what its commands print today: this
test runs the guide's commands (the scenario with its TEST DOUBLE target) and compares the
`compare --markdown` output with the page's generated block. After an intended change of
the output, rewrite the block with SKILLOPT_UPDATE_DOCS=1."""

from __future__ import annotations

import os
import re

from tests.skillopt_tui.cli.test_train_cmds import REPO, skillopt
from tests.support.train_scenario import write_config

PAGE = REPO / "docs" / "guides" / "compare-and-report.md"
BLOCK = re.compile(r"(<!-- generated: compare -->\n```text\n)(.*?)(```\n)", re.DOTALL)


def test_the_guide_shows_what_compare_prints(tmp_path):
    config = write_config(tmp_path / "bench")
    one_edit, full = tmp_path / "runs" / "one-edit", tmp_path / "runs" / "full"
    for out, sets in (
        (one_edit, ["train.schedule.start=1", "train.schedule.end=1", "train.epochs=1",
                    "train.steps_per_epoch=1", "train.batch_size=1"]),
        (full, []),
    ):  # fmt: skip
        args = [arg for s in sets for arg in ("--set", s)]
        done = skillopt(tmp_path, "train", "--config", str(config), "--out", str(out), *args)
        assert done.returncode == 0, done.stderr
    compared = skillopt(tmp_path, "compare", str(one_edit), str(full), "--markdown")
    assert compared.returncode == 0, compared.stderr
    text = PAGE.read_text(encoding="utf-8")
    match = BLOCK.search(text)
    assert match, f"{PAGE} lost its generated block"
    if os.environ.get("SKILLOPT_UPDATE_DOCS") == "1":
        text = text[: match.start(2)] + compared.stdout + text[match.end(2) :]
        PAGE.write_text(text, encoding="utf-8")
        return
    assert match.group(2) == compared.stdout
