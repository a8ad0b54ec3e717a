"""Mining a corrections corpus with the miner role answered by hand (issue 37, round 5:
does mining generalise with a strong model as the miner?).

    .venv/bin/python bench/miner_corpus.py --corpus greenhouse --answers DIR [--json]

A dry run never asks the miner (it spends nothing), so this runs the real
`skillopt sleep dry-run --json` in-process with the night's mining swapped for
`mine_with_model`, whose model is a folder: each miner prompt is written to
DIR/prompt-N.md and its reply read from DIR/reply-N.json, written by whoever plays the
model (a person, or a strong model in a handoff session). A prompt without a reply stops
the run and names the file to write. Then the plan is scored against the corpus's labels
(tests/support/corrections_score.py) beside the heuristic's own figures. Prints the
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.models.types import Completion, Usage  # noqa: E402
from sleep.mine.with_model import mine_with_model  # noqa: E402
from sleep.night.run import Night  # noqa: E402
from tests.sleep.corrections_world import CORPORA, lay_out  # noqa: E402
from tests.support.corrections_score import score  # noqa: E402


class NoReplyYet(Exception):
    pass


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
        return Completion(reply.read_text(encoding="utf-8"), Usage(1, 1), "stop", 0.0, "hand")

    return complete


def dry_run_in_process(world) -> dict:
    from skillopt_tui.cli.main import main as cli

    argv = ["skillopt", "sleep", "dry-run", "--state-dir", str(world.state),
            "--project", str(world.project), "--json"]  # fmt: skip
    out = io.StringIO()
    old = os.environ.get("HOME"), sys.argv, os.getcwd()
    os.environ["HOME"], sys.argv = str(world.home), argv
    os.chdir(world.project)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli()
    finally:
        os.environ["HOME"], sys.argv = old[0] or "", old[1]
        os.chdir(old[2])
    return json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), required=True)
    parser.add_argument("--answers", type=Path, required=True, help="prompt-N.md / reply-N.json")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON object")
    args = parser.parse_args()
    args.answers.mkdir(parents=True, exist_ok=True)
    measured = {}
    with tempfile.TemporaryDirectory(prefix=f"miner-bench-{args.corpus}-") as root:
        world = lay_out(Path(root), CORPORA[args.corpus])
        measured["heuristic"] = score(world.dry_run(), world.labels)
        model = folder_model(args.answers)

        async def with_model(night, sessions):
            return await mine_with_model(
                sessions, model, include_automation=night.include_automation
            )

        Night._mine = with_model
        try:
            plan = dry_run_in_process(world)
        except NoReplyYet as stop:
            sys.exit(str(stop))
        (args.answers / "plan.json").write_text(json.dumps(plan, indent=2), encoding="utf-8")
        measured["heuristic + miner"] = score(plan, world.labels)
    if args.json:
        print(json.dumps({k: asdict(v) for k, v in measured.items()}, indent=2))
        return
    for name, figures in measured.items():
        print(f"{args.corpus}, {name}:")
        for line in figures.lines():
            print(f"  {line}")


if __name__ == "__main__":
    main()
