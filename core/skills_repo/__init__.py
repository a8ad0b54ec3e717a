"""The skills repository (DESIGN §7): a git repo whose `main` holds adopted skills, where
runs stage candidates on `staged/<run-id>` and a person adopts, rejects or rolls back.

Layout on disk: `skills.yaml` (manifest) and the skill files, committed; in `.git/`:
`skillopt.lock` (operation lock), `skillopt/journal.json` (present only while an operation
runs or after it died), `skillopt/deployed.json` (what we last wrote to each deploy target),
`skillopt/identity.json` (commit identity, if configured at init).
"""

from core.skills_repo.errors import (
    AdoptConflict,
    DeployTargetChanged,
    DirtyTree,
    GitFailed,
    SkillsRepoBusy,
    SkillsRepoError,
)
from core.skills_repo.operations import SkillsRepo
from core.skills_repo.repo_stager import SkillsRepoStager
from core.skills_repo.types import (
    AdoptResult,
    CommitEvidence,
    Hunk,
    LogEntry,
    SkillEntry,
    StagedBranch,
    StagedDiff,
)

__all__ = [
    "AdoptConflict",
    "AdoptResult",
    "CommitEvidence",
    "DeployTargetChanged",
    "DirtyTree",
    "GitFailed",
    "SkillsRepoStager",
    "Hunk",
    "LogEntry",
    "SkillEntry",
    "SkillsRepo",
    "SkillsRepoBusy",
    "SkillsRepoError",
    "StagedBranch",
    "StagedDiff",
]
