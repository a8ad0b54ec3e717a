"""Sleep's mining on the corrections corpus (issue 37): the figures its "Done when" names.

    .venv/bin/python bench/corrections_corpus.py [--json]

Lays the committed corpus (tests/sleep/fixtures/corrections: real Claude Code and Codex
sessions in which a person corrects five recurring preferences) out in a temporary home,
runs the real `skillopt sleep dry-run --json` on it and scores the plan against the
corpus's labels (tests/support/corrections_score.py). Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sleep.corrections_world import lay_out  # noqa: E402
from tests.support.corrections_score import score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="the figures as one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="corrections-bench-") as root:
        world = lay_out(Path(root))
        plan = world.dry_run()
        figures = score(plan, world.labels)
    if args.json:
        print(json.dumps(asdict(figures), indent=2))
        return
    print(f"corrections corpus: {len(world.labels['sessions'])} sessions, "
          f"{figures.requests} requests, {figures.corrections} corrections")  # fmt: skip
    for line in figures.lines():
        print(f"  {line}")


if __name__ == "__main__":
    main()
