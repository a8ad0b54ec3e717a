"""`skillopt sleep dry-run --json` with the miner role answered from a folder (issue 37,
round 5). This runs the real command in-process with the night's mining swapped for
`mine_with_model`, whose model is a folder: each miner prompt is written to DIR/prompt-N.md and its reply read from
DIR/reply-N.json (written by whoever plays the model: a person, or a strong model in a
handoff session). A TEST DOUBLE of the miner model, replaying recorded answers."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from core.models.types import Completion, Usage
from sleep.mine.with_model import mine_with_model
from sleep.night.run import Night
from tests.sleep.corrections_world import CorrectionsWorld


class NoReplyYet(Exception):
    """A miner prompt with no reply in the folder: the message names the file to write."""


def folder_model(answers: Path):
    """The miner model as files: prompt-N.md out, reply-N.json in."""
    count = 0

    async def complete(messages, **_settings):
        nonlocal count
        count += 1
        prompt, reply = answers / f"prompt-{count}.md", answers / f"reply-{count}.json"
        prompt.write_text(messages[-1]["content"], encoding="utf-8")
        if not reply.exists():
            raise NoReplyYet(f"write {reply} (the answer to {prompt})")
        return Completion(reply.read_text(encoding="utf-8"), Usage(1, 1), "stop", 0.0, "folder")

    return complete


def dry_run_with_miner(world: CorrectionsWorld, answers: Path) -> dict[str, Any]:
    """The dry run's plan, mined by `mine_with_model` with the folder's answers."""
    from skillopt_tui.cli.main import main as cli

    model = folder_model(answers)
    needs: list[str] = []  # shared by the night's routes, as Night._mine shares them

    async def mine(night, sessions, _stored):
        night.mined_by = "heuristic+folder:answers"
        return await mine_with_model(
            sessions, model, include_automation=night.include_automation, needs=needs
        )

    argv = ["skillopt", "sleep", "dry-run", "--state-dir", str(world.state),
            "--project", str(world.project), "--json"]  # fmt: skip
    out = io.StringIO()
    saved = os.environ.get("HOME"), sys.argv, os.getcwd(), Night._mine
    os.environ["HOME"], sys.argv, Night._mine = str(world.home), argv, mine
    os.chdir(world.project)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli()
    finally:
        os.environ["HOME"], sys.argv, Night._mine = saved[0] or "", saved[1], saved[3]
        os.chdir(saved[2])
    return json.loads(out.getvalue())
