"""The staged branch that holds a night's candidate.

A skill's stager does not stage a candidate whose text another run's staged branch
already holds (core/skills_repo/repo_stager.identical_staged): the second night reuses
that branch and records its head. The night must then name that branch, not its own
run's, which was never made: `sleep status` would show it "(gone)" and the printed
`skillopt skills diff` would fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.skills_repo import SkillsRepo


def holding_branch(repo: SkillsRepo, staged: Iterable[Mapping[str, Any]], run_id: str) -> str:
    """The branch whose head is the run's last staged commit (`staged`: the run's
    {step, source, ref} entries): the run's own `staged/<run_id>` when it holds it (or
    nothing names another), else the other run's branch the stager reused."""
    own = f"staged/{run_id}"
    refs = [str(s.get("ref") or "") for s in staged]
    last = refs[-1] if refs else ""
    if not last:
        return own
    heads = {b.name: b.head for b in repo.staged_branches()}
    if heads.get(own) == last:
        return own
    others = sorted(name for name, head in heads.items() if head == last)
    return others[0] if others else own
