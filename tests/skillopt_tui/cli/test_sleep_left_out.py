"""Sessions routing leaves out are in the machine-readable output, not only on stderr:
`sleep dry-run --json` and `sleep run --json` (and the night's night.json) list each as
{session, source, reason}. On the real CLIs' transcripts with only a CLAUDE.md skill and
automation included, the `codex exec` session has no skill its agent reads (before, the
JSON had no such list: the sessions were counted on stderr only)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.skillopt_tui.cli.test_sleep_cursor_sequences import skillopt
from tests.support.real_transcript_world import make_real_world

CODEX_SESSION = "codex:01a230d7-17af-70b2-a257-f7a6cfe47e80"


def _left_out(data: dict) -> list[dict]:
    return [(s["session"], s["source"], "AGENTS.md" in s["reason"]) for s in data["left_out"]]


def test_dry_run_and_run_json_list_the_sessions_routing_left_out(tmp_path):
    world = make_real_world(tmp_path)
    dry = skillopt(world, "dry-run", "--json", "--include-automation")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert _left_out(plan) == [(CODEX_SESSION, "codex", True)]
    assert "left out" in dry.stderr  # still said on the console

    run = skillopt(world, "run", "--json", "--include-automation")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert _left_out(result) == [(CODEX_SESSION, "codex", True)]
    night = json.loads((Path(result["folder"]) / "night.json").read_text())
    assert night["left_out"] == result["left_out"]


def test_nothing_left_out_is_an_empty_list(tmp_path):
    world = make_real_world(tmp_path)
    dry = skillopt(world, "dry-run", "--json")  # automation (the codex session) not asked for
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["left_out"] == []
