"""Everything a training run needs to continue after a crash, as one JSON file.

`state.json` is rewritten atomically at every step boundary (and at epoch ends), always as
the *last* write of that boundary: files a step produced before it (skill versions,
`best_skill.md`, step artifacts) are either consistent with it or will be rewritten
identically when the step is redone, because a redone step hits the response and rollout
caches and so sees the same results.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_text
from core.plain_data import as_dict
from core.secrets import redacted_json

STATE_VERSION = 1


@dataclass
class SkillVersion:
    version: int  # skills/vNNNN.md
    skill_hash: str
    step: int | None  # the step that produced it; None for the initial skill
    source: str  # "initial" | "step" | "slow_update" | "final"


@dataclass
class TrainState:
    run_id: str
    env: str
    started_at: float
    total_steps: int
    steps_per_epoch: int
    # "running" while a process works on it, else "stopped" | "waiting" | "failed" | "finished".
    status: str = "running"
    next_step: int = 0  # global index of the next step to run
    epochs_reviewed: int = 0  # epochs whose end-of-epoch work (slow update, meta) is done
    # Steps the edit-budget schedule has advanced over: as published, only those whose
    # analysts proposed something (a step with nothing to apply leaves the budget as is).
    scheduled_steps: int = 0
    current_version: int = 0
    best_version: int = 0
    epoch_start_version: int = 0  # the skill the current epoch started from
    versions: list[SkillVersion] = field(default_factory=list)
    baseline_score: float | None = None
    baseline_items: dict[str, float] = field(default_factory=dict)
    best_score: float | None = None
    best_items: dict[str, float] = field(default_factory=dict)  # per-item val metric
    rejected_buffer: dict[str, Any] = field(default_factory=dict)
    meta_notes: str = ""
    # An epoch end under way past its slow update, which is a boundary of its own (so a
    # stop or a handoff wait in the meta-notes call keeps an accepted slow update):
    # {"epoch", "from_version" (the epoch's last step's skill), "rejected" (what the meta
    # notes are shown), "accepted"}; None between epoch ends.
    epoch_review: dict[str, Any] | None = None
    last_apply_report: list[dict[str, Any]] | None = None
    ledger: dict[str, Any] | None = None  # UsageLedger.to_dict()
    # One entry per staged candidate: {"step", "source", "ref"}; source is "step",
    # "slow_update" or "final", so a step's candidate and its epoch's slow update (same
    # step number) are two entries.
    staged_refs: list[dict[str, Any]] = field(default_factory=list)
    stager_base: str | None = None  # the skills-repo commit staging branches from
    # Restarted with --fresh over an archived staged branch of the same run id (SkillsRepoStager).
    stager_reuses_run_id: bool = False
    # The id of the run's staged branch (core/skills_repo/run_names.py), chosen when it
    # started; None in states from before it was kept (their branch is the run dir's name).
    stager_run_id: str | None = None
    # What the run resolved its models and strategy to when it started (`backend: auto`
    # and `strategy: auto` follow the environment): a resume must resolve the same.
    target_key: str | None = None  # ModelClient.settings_key("target")
    target_model: str | None = None  # ModelClient.describe("target"), for messages
    optimizer_model: str | None = None  # as RunStarted shows it
    strategy: str | None = None
    rollouts_saved: int = 0  # by the early gate, over the whole run
    # train.pareto: the non-dominated candidates, [{"version", "items"}] (core/training/
    # frontier.py), and the version pairs already merged.
    frontier: list[dict[str, Any]] = field(default_factory=list)
    merged_pairs: list[list[int]] = field(default_factory=list)
    wall_time_s: float = 0.0  # summed over the processes that worked on the run
    finished: bool = False
    stop_reason: str = ""

    @property
    def epoch(self) -> int:
        return self.next_step // max(1, self.steps_per_epoch)

    def version(self, number: int) -> SkillVersion:
        for v in self.versions:
            if v.version == number:
                return v
        raise KeyError(f"no skill version {number}")

    def to_dict(self) -> dict[str, Any]:
        return {"state_version": STATE_VERSION, **as_dict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainState:
        data = dict(data)
        data.pop("state_version", None)
        names = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if k in names}
        data["versions"] = [SkillVersion(**v) for v in data.get("versions", [])]
        # A state from before scheduled_steps was kept: its schedule advanced on every step,
        # so it had advanced over every step done (0 would restart the schedule on resume).
        data.setdefault("scheduled_steps", data.get("next_step", 0))
        return cls(**data)

    def save(self, path: str | Path) -> None:
        write_text(path, redacted_json(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> TrainState:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
