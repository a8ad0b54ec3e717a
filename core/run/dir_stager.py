"""Staging without a skills repository: each accepted candidate becomes two plain files
in the run directory's `staged/` folder, the skill and its evidence, named by source and
step (`step-0003`, `slow_update-0003`, `final-0004`) so candidates of one step never
overwrite each other. Writing the same candidate again (a resumed run redoing it)
overwrites identical content, so staging is idempotent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from core.atomic import write_json, write_text
from core.run.staging import StagedCandidate


class RunDirStager:
    def __init__(self, staged_dir: str | Path) -> None:
        self.staged_dir = Path(staged_dir)

    def stage(self, candidate: StagedCandidate) -> str:
        source = candidate.source or "step"
        stem = f"{source}-{candidate.step:04d}" if candidate.step >= 0 else source
        skill_path = self.staged_dir / f"{stem}.md"
        write_text(skill_path, candidate.skill_text)
        evidence = dataclasses.asdict(candidate)
        evidence.pop("skill_text")
        write_json(self.staged_dir / f"{stem}.json", evidence)
        return str(skill_path)
