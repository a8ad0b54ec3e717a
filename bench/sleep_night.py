"""A Sleep night over a generated corpus of Claude Code sessions, on the scripted TEST
DOUBLE brain (tests/sleep/night_double.py): wall time per stage and model calls per role
and per phase. Not a test; nothing here asserts a time.

Stages: harvest (find + stream + extract + redact the transcripts, move cursors), mine +
route + split (heuristic miner, task archive), and the engine's loop, split by phase from
the run's events.jsonl (baseline on val, train rollouts, optimizer, gate, test).

Run: .venv/bin/python bench/sleep_night.py [--sessions 200] [--max-tasks 40]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import config_from_dict  # noqa: E402
from core.skills_repo import SkillsRepo  # noqa: E402
from sleep.harvest.run import HarvestOptions  # noqa: E402
from sleep.night.held_tasks import transcript_harvester  # noqa: E402
from sleep.night.run import Night  # noqa: E402
from tests.sleep.night_double import INSTALL_PROMPT, NAMES  # noqa: E402

REQUESTS = [
    INSTALL_PROMPT,
    "explain what the {part} module is for",
    "write a unit test for the {part} parser",
    "why does the {part} build fail on CI?",
    "rename the {part} config option to something clearer",
    "summarise the open TODOs in the {part} package",
]
CORRECTIONS = ["no, use pnpm instead of npm", "don't use print, use the logger", ""]


def write_corpus(claude_home: Path, project: Path, sessions: int) -> int:
    folder = claude_home / "projects" / str(project).replace("/", "-")
    folder.mkdir(parents=True)
    size = 0
    for i in range(sessions):
        sid = str(uuid.UUID(int=i + 1))
        part = NAMES[i % len(NAMES)] + (str(i // len(NAMES)) if i >= len(NAMES) else "")
        prompts = [REQUESTS[i % len(REQUESTS)].format(part=part)]
        if CORRECTIONS[i % 3]:
            prompts.append(CORRECTIONS[i % 3])
        prompts.append(REQUESTS[(i + 1) % len(REQUESTS)].format(part=part))
        lines, parent = [], None
        for k, text in enumerate(prompts):
            record = {
                "parentUuid": parent,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": text},
                "uuid": str(uuid.uuid4()),
                "timestamp": f"2026-11-{1 + i % 28:02d}T10:{k:02d}:00Z",
                "userType": "external",
                "entrypoint": "cli",
                "cwd": str(project),
                "sessionId": sid,
                "version": "2.1.328",
                "gitBranch": "main",
            }
            parent = record["uuid"]
            lines.append(json.dumps(record))
            reply = {
                "parentUuid": parent,
                "isSidechain": False,
                "type": "assistant",
                "uuid": str(uuid.uuid4()),
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Done. " * 40}],
                },
                "timestamp": record["timestamp"],
                "cwd": str(project),
                "sessionId": sid,
            }
            parent = reply["uuid"]
            lines.append(json.dumps(reply))
        data = "\n".join(lines) + "\n"
        (folder / f"{sid}.jsonl").write_text(data)
        size += len(data)
    return size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--max-tasks", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        project = tmp / "proj"
        project.mkdir()
        (project / "CLAUDE.md").write_text("# Notes\n\nKeep answers short.\n")
        size = write_corpus(tmp / "home" / ".claude", project, args.sessions)
        repo = SkillsRepo.init(tmp / "skills")
        repo.add_skill(
            "proj", (project / "CLAUDE.md").read_text(), deploy_to=str(project / "CLAUDE.md")
        )
        brain = "tests.sleep.night_double:brain"
        roles = {
            r: {"backend": "scripted", "model": brain}
            for r in ("target", "optimizer", "judge", "miner")
        }
        config = config_from_dict(
            {
                "models": roles,
                "train": {
                    "epochs": 1,
                    "strategy": "llm",
                    "gate": {"metric": "soft"},
                    "schedule": {"kind": "constant", "start": 2, "end": 2},
                    "slow_update": {"enabled": False},
                    "meta_skill": {"enabled": False},
                },
            }
        )
        state = tmp / "state"

        harvested = transcript_harvester(
            HarvestOptions(
                state_dir=state,
                project=project,
                claude_home=str(tmp / "home" / ".claude"),
                codex_home=str(tmp / "home" / ".codex"),
                environ={"HOME": str(tmp / "home")},  # the other agents' homes too
                home=tmp / "home",
            )
        )

        night = Night(
            state_dir=state,
            repo=repo,
            config=config,
            harvest=harvested,
            project=project,
            max_tasks=args.max_tasks,
            today=dt.date(2026, 12, 1),
        )
        t0 = time.perf_counter()
        sessions = night.sessions()
        t1 = time.perf_counter()
        routed = night.routed_tasks(sessions)
        t2 = time.perf_counter()
        result = asyncio.run(night.run())
        t3 = time.perf_counter()

        events = [
            json.loads(line)
            for line in (night.folder / "proj" / "events.jsonl").read_text().splitlines()
        ]
        spans: dict[str, list[float]] = defaultdict(list)
        counts: Counter = Counter()
        for e in events:
            if e["type"] == "RolloutFinished":
                spans[e["phase"]].append(e["ts"])
                counts[e["phase"]] += 1
            elif e["type"] == "ReflectionText":
                spans["optimizer"].append(e["ts"])
        summary = json.loads((night.folder / "proj" / "summary.json").read_text())
        per_role = summary["usage"]["per_role"]
        tasks = {k: len(v) for k, v in routed[0][1].items()}
        print(
            f"corpus: {args.sessions} sessions, {size / 1e6:.2f} MB; tasks {tasks}; night {result.status}, "
            f"val {summary['baseline_val']:.3f} -> {summary['best_val']:.3f}, staged {result.skills['proj'].get('staged')}"
        )
        print(f"harvest            {t1 - t0:8.3f} s   ({len(sessions)} sessions)")
        print(f"mine+route+split   {t2 - t1:8.3f} s")
        print(f"engine (all)       {t3 - t2:8.3f} s")
        for phase in ("baseline", "train", "optimizer", "gate", "final_val", "test"):
            if spans.get(phase):
                print(
                    f"  {phase:16} {max(spans[phase]) - min(spans[phase]):8.3f} s  {counts.get(phase, len(spans[phase]))} events"
                )
        for role, usage in sorted(per_role.items()):
            if usage.get("calls"):
                print(
                    f"calls {role:10} {usage['calls']:6d}  (cache hits {usage.get('cache_hits', 0)}, "
                    f"tokens in {usage.get('input_tokens', 0):,} out {usage.get('output_tokens', 0):,})"
                )


if __name__ == "__main__":
    main()
