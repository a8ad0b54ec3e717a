"""Mining a corrections corpus with the miner role answered by hand (issue 37, round 5:
does mining generalise with a strong model as the miner?).

    .venv/bin/python bench/miner_corpus.py --corpus greenhouse --answers DIR [--json]

Runs the real `skillopt sleep dry-run --json` with the miner's prompts written to
DIR/prompt-N.md and its replies read from DIR/reply-N.json (tests/sleep/miner_world.py);
a prompt without a reply stops the run and names the file to write. The answers a
careful strong model gave are in tests/sleep/fixtures/<corpus>/strong_miner. The plan is
scored against the corpus's labels (tests/support/corrections_score.py) beside the
heuristic's own figures. Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sleep.corrections_world import CORPORA, lay_out  # noqa: E402
from tests.sleep.miner_world import NoReplyYet, dry_run_with_miner  # noqa: E402
from tests.support.corrections_score import score  # noqa: E402


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
        try:
            plan = dry_run_with_miner(world, args.answers)
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
