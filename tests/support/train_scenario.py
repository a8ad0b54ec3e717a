"""A small, hand-checkable training scenario for the loop tests (capitals environment with
fixture data, the skill-sensitive TEST DOUBLE as the target, the fewshot strategy).

Items (questions chosen so every score follows from the double's documented behaviour):

train (manifest order, shuffle off):
  t01 What is the capital of France?  Paris     (known from the initial skill's fact line)
  t02 What is the capital of Japan?   Tokyo     (known from the initial skill's fact line)
  t03 What is the capital of Peru?    Lima
  t04 What is the capital of Kenya?   Nairobi
  t05 What is the capital of Chile?   Santiago
  t06 What is the capital of Egypt?   Cairo
val (in this order):
  v01 What is the capital of Norway?       Oslo       never taught
  v02 What is the capital of Sweden?       Stockholm  never taught
  v03 Which city is the capital of France? Paris      fact line; right only with a format rule
  v04 Which city is the capital of Japan?  Tokyo      fact line; right only with a format rule
  v05 What is the capital of Peru?         Lima       taught by t03's worked example
test:
  x01 What is the capital of Chile?        Santiago   taught only by a rejected candidate
  x02 What is the capital of Peru?         Lima       taught by t03's worked example
  x03 What's the capital city of Japan?    Tokyo      fact line; right only with a format rule

The responder factory `make_target` is named in configs as
`models.target.model: "tests.support.train_scenario:make_target"` for subprocess runs. It
appends one line per call to $SKILLOPT_TEST_CALL_LOG (if set) and, if
$SKILLOPT_TEST_HANG_AT_CALL=N, blocks forever at the N-th call *before* answering or
logging it (after touching "<call log>.hanging"), so a test can kill -9 the process at a
known point with nothing half-done. $SKILLOPT_TEST_DELAY_S slows every call down (a
blocking sleep: the double stands in for a slow model), for tests that signal a live run.
$SKILLOPT_TEST_DOWN=1 makes every call fail as a connection error would (a target outage).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import yaml

from tests.doubles.skill_sensitive_target import SkillSensitiveTarget

INITIAL_SKILL = "# Capitals\n\n- France: Paris\n- Japan: Tokyo\n"

TRAIN = [
    ("t01", "What is the capital of France?", "Paris", "France"),
    ("t02", "What is the capital of Japan?", "Tokyo", "Japan"),
    ("t03", "What is the capital of Peru?", "Lima", "Peru"),
    ("t04", "What is the capital of Kenya?", "Nairobi", "Kenya"),
    ("t05", "What is the capital of Chile?", "Santiago", "Chile"),
    ("t06", "What is the capital of Egypt?", "Cairo", "Egypt"),
]
VAL = [
    ("v01", "What is the capital of Norway?", "Oslo", "Norway"),
    ("v02", "What is the capital of Sweden?", "Stockholm", "Sweden"),
    ("v03", "Which city is the capital of France?", "Paris", "France"),
    ("v04", "Which city is the capital of Japan?", "Tokyo", "Japan"),
    ("v05", "What is the capital of Peru?", "Lima", "Peru"),
]
TEST = [
    ("x01", "What is the capital of Chile?", "Santiago", "Chile"),
    ("x02", "What is the capital of Peru?", "Lima", "Peru"),
    ("x03", "What's the capital city of Japan?", "Tokyo", "Japan"),
]


def write_fixture(root: Path) -> tuple[Path, Path]:
    """Write data/capitals.jsonl and manifests/{train,val,test}.json under `root`."""
    data_dir, manifest_dir = root / "data", root / "manifests"
    data_dir.mkdir(parents=True, exist_ok=True)
    manifest_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for split, items in (("train", TRAIN), ("val", VAL), ("test", TEST)):
        for item_id, question, answer, country in items:
            rows.append(
                {
                    "id": item_id,
                    "task_type": "country_to_capital",
                    "question": question,
                    "answer": answer,
                    "aliases": [],
                    "country": country,
                }
            )
        (manifest_dir / f"{split}.json").write_text(json.dumps([i[0] for i in items]))
    (data_dir / "capitals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data_dir, manifest_dir


def scenario_config(root: Path, **train_overrides: Any) -> dict[str, Any]:
    """A config tree (for `config_from_dict` or a YAML file) running the scenario."""
    data_dir, manifest_dir = write_fixture(root)
    skill = root / "initial_skill.md"
    skill.write_text(INITIAL_SKILL)
    train: dict[str, Any] = {
        "initial_skill": str(skill),
        "epochs": 2,
        "steps_per_epoch": 2,
        "batch_size": 3,
        "shuffle": False,
        "strategy": "fewshot",
        "schedule": {"kind": "constant", "start": 4, "end": 4},
        # Both epoch ends reviewed (configs/features/early_epoch_review.yaml), so the
        # two-epoch scenario has a slow update and meta notes between its epochs to check;
        # the published first-epoch skip is tested on its own (test_epoch_end.py).
        "slow_update": {"sample_size": 6, "after_first_epoch": True},
    }
    slow_update = {**train["slow_update"], **train_overrides.pop("slow_update", {})}
    train.update(train_overrides, slow_update=slow_update)
    return {
        "run": {"seed": 0, "runs_dir": str(root / "runs")},
        "env": {"name": "capitals", "data_dir": str(data_dir), "manifest_dir": str(manifest_dir)},
        "models": {
            "target": {
                "backend": "scripted",
                "model": "tests.support.train_scenario:make_target",
                "concurrency": 1,
            },
            "optimizer": {"backend": "scripted", "model": "unused-by-fewshot"},
        },
        "train": train,
    }


def write_config(root: Path, **train_overrides: Any) -> Path:
    path = root / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario_config(root, **train_overrides)))
    return path


class LoggingTarget:
    """The skill-sensitive double plus the call log and the hang point described above."""

    def __init__(self) -> None:
        self.double = SkillSensitiveTarget()
        self.log = os.environ.get("SKILLOPT_TEST_CALL_LOG")
        self.hang_at = int(os.environ.get("SKILLOPT_TEST_HANG_AT_CALL", "0") or 0)
        self.delay_s = float(os.environ.get("SKILLOPT_TEST_DELAY_S", "0") or 0)
        self.down = os.environ.get("SKILLOPT_TEST_DOWN") == "1"
        self.hold = os.environ.get("SKILLOPT_TEST_HOLD_FILE")
        self.calls = 0

    def __call__(self, request) -> str:
        self.calls += 1
        while self.hold and os.path.exists(self.hold):  # the test releases it: a condition
            time.sleep(0.01)
        if self.hang_at and self.calls == self.hang_at:
            if self.log:
                Path(self.log + ".hanging").touch()
            while True:
                time.sleep(60)
        if self.down:
            from core.models.types import TransientError

            raise TransientError("connection refused (SKILLOPT_TEST_DOWN outage)")
        if self.delay_s:
            time.sleep(self.delay_s)
        answer = self.double(request)
        if self.log:
            question = request.messages[-1]["content"]
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"question": question, "answer": answer}) + "\n")
        return answer


def make_target() -> LoggingTarget:
    return LoggingTarget()
