"""What became of the branches nights staged: night.json records `staged/<night>-<skill>`
when the night ends, but the person adopts, rejects and rolls back afterwards. So status
(CLI, TUI, MCP) reads the skills repository each time instead of repeating the record:

- "staged": the branch still awaits review (perhaps partly adopted);
- "adopted": it was adopted (archived as adopted/…) and that is live on main;
- "rolled back": it was adopted, and every adoption from it was rolled back whole;
- "rejected": archived under rejected/…;
- "gone": none of these (deleted by hand).
"""

from __future__ import annotations

from pathlib import Path

from core.errors import UserError

STAGED, ADOPTED, ROLLED_BACK, REJECTED, GONE = (
    "staged",
    "adopted",
    "rolled back",
    "rejected",
    "gone",
)


def branch_states(skills_repo: str | Path | None, branches: list[str]) -> dict[str, str]:
    """{branch: its state now}; {} when there is no readable repository (the record is
    then all there is to show)."""
    if not skills_repo or not branches:
        return {}
    from core.skills_repo import SkillsRepo

    try:
        repo = SkillsRepo.open(Path(skills_repo))
        staged = {b.name for b in repo.staged_branches()}
        log = repo.log()
    except (UserError, OSError):
        return {}
    adoptions: dict[str, list[str]] = {}
    for entry in log:
        if entry.kind == "adopt":
            source = entry.trailers.get("Adopted-From", "").split(" ")[0]
            adoptions.setdefault(source, []).append(entry.sha)
    undone = {
        entry.trailers.get("Reverts", "")
        for entry in log
        if entry.kind == "rollback" and "Hunks" not in entry.trailers
    }
    states = {}
    for branch in branches:
        shas = adoptions.get(branch, [])
        run_id = branch.removeprefix("staged/")
        if branch in staged:
            states[branch] = STAGED
        elif shas:
            states[branch] = ROLLED_BACK if all(s in undone for s in shas) else ADOPTED
        elif repo.git.rev(f"refs/heads/rejected/{run_id}"):
            states[branch] = REJECTED
        else:
            states[branch] = GONE
    return states
