"""Sleep redaction: seconds per text for the two worst shapes, and a harvest of huge
prompts.

    .venv/bin/python bench/redaction.py [--prose-mb 15] [--secrets-kb 300] [--prompts 3]

  prose    PROSE_MB of prose dense with the words every secret rule looks for ("token",
           "secret", "password", "api key", `name = value`), few real secrets: what the
           regexes cost
  secrets  SECRETS_KB packed with real-looking secrets (one every ~35 characters): what
           choosing between overlapping matches costs
  harvest  one Claude session with PROMPTS prompts of PROSE_MB each, harvested as a
           night's harvest does (the prompt cap applies there, sleep/harvest/prompt_cap.py)

Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROSE = [
    "the",
    "token",
    "budget",
    "is",
    "2000000",
    "and",
    "the",
    "secret",
    "is",
    "to",
    "use",
    "a",
    "cache;",
    "my",
    "password",
    "for",
    "prod",
    "is",
    "incorrect,",
    "the",
    "access",
    "key",
    "was",
    "rotated,",
    "api",
    "key",
    "here,",
    "credentials",
    "of",
    "the",
    "user,",
    "token=",
    "value",
    "key:",
    "x,",
    "passwd",
    "=>",
    "old,",
    "secret_key",
    "=",
    "settings.KEY",
]


def prose(rng: random.Random, chars: int) -> str:
    words, size = [], 0
    while size < chars:
        word = rng.choice(PROSE)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def secrets(rng: random.Random, chars: int) -> str:
    def tok(n: int) -> str:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    parts, size = [], 0
    while size < chars:
        part = rng.choice([
            f"token={tok(24)}", f"the api key is {tok(32)}", "the cache works",
            f"password: {tok(10)}9!", f"AKIA{tok(16).upper()}", "and then",
        ])  # fmt: skip
        parts.append(part)
        size += len(part) + 1
    return " ".join(parts)


def timed(label: str, text: str) -> None:
    from sleep.redact import Redactor

    t0 = time.perf_counter()
    found = len(Redactor().redact(text).findings)
    seconds = time.perf_counter() - t0
    print(f"{label:8s} {len(text) / 1e6:6.2f} MB in {seconds:6.2f} s, {found} secrets")


def harvested(rng: random.Random, prompts: int, chars: int) -> None:
    from sleep.harvest.run import HarvestOptions, harvest

    with tempfile.TemporaryDirectory(prefix="redaction-bench-") as tmp:
        folder = Path(tmp) / "claude" / "projects" / "-srv-app"
        folder.mkdir(parents=True)
        lines = []
        for n in range(prompts):
            record = {"type": "user", "uuid": f"u-{n}", "sessionId": "s-1", "cwd": "/srv/app",
                      "timestamp": "2026-12-01T10:00:00Z",
                      "message": {"role": "user", "content": prose(rng, chars)}}  # fmt: skip
            lines.append(json.dumps(record))
        (folder / "s-1.jsonl").write_text("\n".join(lines) + "\n")
        t0 = time.perf_counter()
        result = harvest(HarvestOptions(state_dir=Path(tmp) / "state",
                                        claude_home=str(Path(tmp) / "claude"),
                                        codex_home=str(Path(tmp) / "none"), commit=False))  # fmt: skip
        seconds = time.perf_counter() - t0
    kept = sum(len(t.text) for s in result.sessions for t in s.tasks)
    print(
        f"harvest  {prompts} prompts of {chars / 1e6:.0f} MB in {seconds:6.2f} s, "
        f"{kept / 1e3:.0f} K characters kept"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prose-mb", type=float, default=15)
    parser.add_argument("--secrets-kb", type=float, default=300)
    parser.add_argument("--prompts", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    timed("prose", prose(rng, int(args.prose_mb * 1e6)))
    timed("secrets", secrets(rng, int(args.secrets_kb * 1e3)))
    harvested(rng, args.prompts, int(args.prose_mb * 1e6))


if __name__ == "__main__":
    main()
