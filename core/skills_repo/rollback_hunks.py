"""Rolling back some hunks of an adoption, not the whole of it (`skillopt skills rollback
TARGET --hunks 2`, and History's per-hunk choice).

The adoption's own diff (its parent → it) is numbered like a staged diff; the chosen hunks
of the reverse diff are applied to the adopted text, and that partial revert is merged onto
main like a full rollback. The commit carries `Reverts: <sha>` and `Hunks: <n,…>`; an
adoption partly rolled back stays live for the rest of its hunks.
"""

from __future__ import annotations

from core.skills_repo import manifest, messages
from core.skills_repo.deploy import check_target
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.hunks import apply_hunks, merge3, net_hunks
from core.skills_repo.plumbing import PlannedDeploy, RepoCore
from core.skills_repo.rollback import find_adoption
from core.skills_repo.types import Hunk


def adoption_hunks(repo: RepoCore, target: str | None) -> list[Hunk]:
    """The numbered hunks of the adoption `target` (a commit or skill name) would revert."""
    adoption = find_adoption(repo, target)
    entry = repo.entry(adoption.trailers.get("Skill", ""))
    return net_hunks(repo.git, adoption.sha + "^", adoption.sha, entry.path)


def live_hunks(repo: RepoCore, target: str | None) -> list[int]:
    """The adoption's hunks a rollback would still change main with: a hunk main no longer
    holds (rolled back, or undone by any later commit) is left out, so no face offers to
    revert what is already reverted. A hunk whose revert would conflict stays listed
    (rolling it back says why it cannot)."""
    adoption = find_adoption(repo, target)
    entry = repo.entry(adoption.trailers.get("Skill", ""))
    git = repo.git
    reverse = net_hunks(git, adoption.sha, adoption.sha + "^", entry.path)
    adopted = git.blob(adoption.sha, entry.path) or b""
    before = git.blob(adoption.sha + "^", entry.path) or b""
    main_text = git.blob(repo.main_sha(), entry.path) or b""
    live = []
    for hunk in reverse:
        partly_reverted = apply_hunks(adopted, before, reverse, {hunk.index})
        result, conflicts = merge3(git, main_text, adopted, partly_reverted)
        if conflicts or result != main_text:
            live.append(hunk.index)
    return live


def rollback_hunks(
    repo: RepoCore, target: str | None, hunks: list[int], *, force: bool = False
) -> str:
    with repo.operation():
        adoption = find_adoption(repo, target)
        skill = adoption.trailers.get("Skill", "")
        entry = repo.entry(skill)
        git = repo.git
        reverse = net_hunks(git, adoption.sha, adoption.sha + "^", entry.path)
        every = {h.index for h in reverse}
        unknown = sorted(set(hunks) - every)
        if not hunks or unknown:
            raise SkillsRepoError(
                f"no hunk {', '.join(map(str, unknown)) or '(none chosen)'} in adoption "
                f"{adoption.sha[:12]}; it has hunks 1-{len(every)} (`skillopt skills show`)"
            )
        adopted = git.blob(adoption.sha, entry.path) or b""
        before = git.blob(adoption.sha + "^", entry.path) or b""
        partly_reverted = apply_hunks(adopted, before, reverse, set(hunks))
        main_text = git.blob(repo.main_sha(), entry.path) or b""
        result, conflicts = merge3(git, main_text, adopted, partly_reverted)
        if conflicts:
            raise SkillsRepoError(
                f"cannot roll back hunk {','.join(map(str, hunks))} of {adoption.sha[:12]}: "
                f"later changes to {skill!r} touch the same lines; roll those back first"
            )
        if result == main_text:
            raise SkillsRepoError(
                f"rolling back hunk {','.join(map(str, hunks))} of {adoption.sha[:12]} "
                "would change nothing (already rolled back?)"
            )
        target_path = manifest.deploy_path(entry)
        if target_path and not force:
            check_target(
                git, repo.records, entry.name, target_path, main_before=main_text, new=result
            )
        numbers = ",".join(map(str, sorted(hunks)))
        trailers = {
            "Skillopt-Op": "rollback",
            "Skill": skill,
            "Reverts": adoption.sha,
            "Hunks": numbers,
        }
        message = messages.build(
            f'Revert hunk {numbers} of "{adoption.subject}"',
            trailers,
            f"This reverts hunk {numbers} of {len(every)} of commit {adoption.sha}.",
        )
        return repo.commit_main(
            {entry.path: result},
            message,
            op="rollback",
            deploy=PlannedDeploy(entry.name, target_path, result) if target_path else None,
        )
