"""Rolling back an adoption: `git revert` semantics (three-way merge of the adoption's parent
onto main, with the adoption as base), done with plumbing so it is journaled like every
main change, then redeploy. The message follows git revert's ("Revert ..." / "This reverts
commit ...") plus our trailers.
"""

from __future__ import annotations

from core.skills_repo import history, manifest, messages
from core.skills_repo.deploy import check_target
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.hunks import merge3
from core.skills_repo.plumbing import PlannedDeploy, RepoCore


def _adoptions(repo: RepoCore) -> tuple[list[history.Commit], set[str]]:
    main = history.commits(repo.git, "refs/heads/main")
    adoptions = [c for c in main if c.kind == "adopt"]
    reverted = {  # a rollback of some hunks (Hunks: trailer) leaves the adoption live
        c.trailers.get("Reverts", "")
        for c in main
        if c.kind == "rollback" and "Hunks" not in c.trailers
    }
    return adoptions, reverted


def find_adoption(repo: RepoCore, target: str | None) -> history.Commit:
    adoptions, reverted = _adoptions(repo)
    live = [c for c in adoptions if c.sha not in reverted]
    names = {e.name for e in repo.manifest_at("main")}
    if target is None or target in names:
        picked = [c for c in live if target is None or c.trailers.get("Skill") == target]
        if not picked:
            what = f"of skill {target!r} " if target else ""
            raise SkillsRepoError(f"no adoption {what}left to roll back on main")
        return picked[0]
    sha = repo.git.rev(target)
    if sha is None:
        raise SkillsRepoError(f"{target!r} is neither a skill nor a commit in {repo.path}")
    match = [c for c in adoptions if c.sha == sha]
    if not match:
        raise SkillsRepoError(
            f"{target} is not an adoption commit on main; see `skillopt skills log`"
        )
    if sha in reverted:
        raise SkillsRepoError(f"adoption {sha[:12]} was already rolled back")
    return match[0]


def rollback(repo: RepoCore, target: str | None, *, force: bool = False) -> str:
    with repo.operation():
        adoption = find_adoption(repo, target)
        skill = adoption.trailers.get("Skill", "")
        entry = repo.entry(skill)
        git = repo.git
        main_text = git.blob(repo.main_sha(), entry.path) or b""
        adopted = git.blob(adoption.sha, entry.path) or b""
        before = git.blob(adoption.sha + "^", entry.path) or b""
        result, conflicts = merge3(git, main_text, adopted, before)
        if conflicts:
            raise SkillsRepoError(
                f"cannot roll back {adoption.sha[:12]}: later changes to {skill!r} touch the "
                "same lines; roll those back first"
            )
        if result == main_text:
            raise SkillsRepoError(f"rolling back {adoption.sha[:12]} would change nothing")
        target_path = manifest.deploy_path(entry)
        if target_path and not force:
            check_target(
                git, repo.records, entry.name, target_path, main_before=main_text, new=result
            )
        trailers = {"Skillopt-Op": "rollback", "Skill": skill, "Reverts": adoption.sha}
        message = messages.build(
            f'Revert "{adoption.subject}"', trailers, f"This reverts commit {adoption.sha}."
        )
        return repo.commit_main(
            {entry.path: result},
            message,
            op="rollback",
            deploy=PlannedDeploy(entry.name, target_path, result) if target_path else None,
        )
