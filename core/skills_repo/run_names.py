"""The name of a training run's staged branch (`staged/<id>`), chosen once when the run
starts and kept in its state (TrainState.stager_run_id), so a resume stages on the same
branch whatever it would choose now.

The run directory's name is the id when it says something about the run (the default
`<env>-<timestamp>`, or a name the person gave). A name that says nothing (`--out
exp1/run`, `--out exp2/run`: every run would stage on `staged/run`) takes its parent's
name in front (`exp1-run`), and so does a name another run's branch already holds
(staged, adopted or rejected); a number goes after when that is taken too.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.skills_repo.plumbing import RepoCore
from core.skills_repo.repo_stager import ADOPTED, REJECTED, STAGED

GENERIC_NAMES = frozenset({"run", "runs", "out", "output", "outputs", "result", "results", "tmp"})
_NOT_IN_IDS = re.compile(r"[^\w.-]+")


def _clean(name: str) -> str:
    return _NOT_IN_IDS.sub("-", name).strip("-.") or "run"


def _taken(repo: RepoCore, run_id: str) -> bool:
    return any(repo.git.rev(prefix + run_id) for prefix in (STAGED, REJECTED, ADOPTED))


def new_staging_id(repo: RepoCore, run_dir: Path) -> str:
    """A staged-branch id for a run starting in `run_dir` that no branch holds yet."""
    path = Path(run_dir).expanduser().absolute()
    name = _clean(path.name)
    if name.lower() not in GENERIC_NAMES and not _taken(repo, name):
        return name
    prefixed = f"{_clean(path.parent.name)}-{name}" if path.parent.name else name
    candidate, n = prefixed, 1
    while _taken(repo, candidate):
        n += 1
        candidate = f"{prefixed}-{n}"
    return candidate
