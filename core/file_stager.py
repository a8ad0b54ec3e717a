"""Staging without a skills repository: each accepted candidate becomes two plain files
in the run directory's `staged/` folder, the skill and its evidence. Writing the same step
again (a resumed run redoing it) overwrites identical content, so staging is idempotent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from core.atomic import write_json, write_text
from core.staging import StagedCandidate


class FileStager:
    def __init__(self, staged_dir: str | Path) -> None:
        self.staged_dir = Path(staged_dir)

    def stage(self, candidate: StagedCandidate) -> str:
        stem = f"step-{candidate.step:04d}" if candidate.step >= 0 else "final"
        skill_path = self.staged_dir / f"{stem}.md"
        write_text(skill_path, candidate.skill_text)
        evidence = dataclasses.asdict(candidate)
        evidence.pop("skill_text")
        write_json(self.staged_dir / f"{stem}.json", evidence)
        return str(skill_path)
