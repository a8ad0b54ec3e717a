"""Reviewing a staged branch (its net diff as numbered hunks, with the evidence of each
staged commit), adopting chosen hunks onto main, and rejecting a branch.

Adopt commits once on main with `Adopted-From: staged/<id> <head sha>` and `Hunks:`
trailers. When every hunk was adopted the branch has nothing left to review, so it is
archived as `adopted/<id>` in the same ref transaction (kept, never deleted).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from core.skills_repo import history, manifest, messages
from core.skills_repo.deploy import check_target
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.hunks import adopted_text, mark_on_main, merge3, net_hunks
from core.skills_repo.line_select import (
    change_count,
    check_selection,
    format_lines,
    selected_text,
    whole_and_partial,
)
from core.skills_repo.part_marks import PartKey, PartMark, every_block, mark_parts
from core.skills_repo.plumbing import PlannedDeploy, RepoCore
from core.skills_repo.repo_stager import ADOPTED, REJECTED, branch_base, resolve
from core.skills_repo.types import AdoptResult, SkillEntry, StagedDiff


def staged_diff(repo: RepoCore, staged: str) -> StagedDiff:
    return _review(repo, staged, evidence=True)[0]


def _review(
    repo: RepoCore, staged: str, *, evidence: bool
) -> tuple[StagedDiff, SkillEntry, history.Commit]:
    """The diff, the skill's manifest entry on main, and the branch head's commit."""
    ref, run_id, head = resolve(repo, staged)
    base = branch_base(repo, head)
    head_commit = history.commit(repo.git, head)
    skill = head_commit.trailers.get("Skill")
    if not skill:
        raise SkillsRepoError(f"staged commit {head[:12]} has no Skill trailer")
    try:
        entry = repo.entry(skill)
    except SkillsRepoError:
        entry = repo.entry(skill, head)  # skill not on main (any more): the branch's view
    hunks = net_hunks(repo.git, base, head, entry.path)
    if evidence and hunks:  # for review: which hunks an earlier adopt already put on main
        git = repo.git
        hunks = mark_on_main(
            git,
            git.blob(base, entry.path) or b"",
            git.blob(head, entry.path) or b"",
            git.blob(repo.main_sha(), entry.path) or b"",
            hunks,
        )
    commits = history.commits(repo.git, f"{base}..{head}") if evidence else []
    proof = [c.evidence() for c in reversed(commits)]
    return StagedDiff("staged/" + run_id, skill, hunks, proof, base, head), entry, head_commit


def part_marks(
    repo: RepoCore, staged: str, parts: Iterable[PartKey] = ()
) -> dict[PartKey, PartMark]:
    """Marks for every block of every hunk of `staged`, and for `parts` (line selections),
    each judged by its own lines against main as it is now (see part_marks)."""
    ref, run_id, head = resolve(repo, staged)
    base = branch_base(repo, head)
    skill = history.commit(repo.git, head).trailers.get("Skill", "")
    try:
        entry = repo.entry(skill)
    except SkillsRepoError:
        entry = repo.entry(skill, head)
    git = repo.git
    hunks = net_hunks(git, base, head, entry.path)
    return mark_parts(
        git,
        git.blob(base, entry.path) or b"",
        git.blob(head, entry.path) or b"",
        git.blob(repo.main_sha(), entry.path) or b"",
        hunks,
        [*every_block(hunks), *parts],
    )


def free_ref(repo: RepoCore, prefix: str, run_id: str) -> str:
    name, n = run_id, 1
    while repo.git.rev(prefix + name):
        n += 1
        name = f"{run_id}-{n}"
    return prefix + name


def adopt(
    repo: RepoCore,
    staged: str,
    hunks: list[int] | None = None,
    *,
    force: bool = False,
    lines: Mapping[int, Collection[int]] | None = None,
) -> AdoptResult:
    """`hunks` whole (all when both are None) plus, in `lines`, some changed lines of other
    hunks (see line_select)."""
    with repo.operation():
        diff, entry, head_commit = _review(repo, staged, evidence=False)
        if entry.name not in {e.name for e in repo.manifest_at("main")}:
            raise SkillsRepoError(
                f"skill {diff.skill!r} is no longer on main; add it again before adopting"
            )
        if not diff.hunks:
            raise SkillsRepoError(f"{diff.branch} changes nothing; reject it instead")
        every = {h.index for h in diff.hunks}
        partial: dict[int, frozenset[int]] = {}
        if lines:
            check_selection(diff.hunks, lines, diff.branch)
            both = sorted(set(hunks or ()) & set(lines))
            if both:
                raise SkillsRepoError(
                    f"hunk {', '.join(map(str, both))} is given both whole and by lines; "
                    "give each hunk once"
                )
            whole, partial = whole_and_partial(diff.hunks, lines)
            hunks = sorted({*(hunks or ()), *whole})
        chosen = set(every) if hunks is None else set(hunks)
        unknown = sorted(chosen - every)
        chosen |= set(partial)
        if not chosen or unknown:
            raise SkillsRepoError(
                f"no hunk {', '.join(map(str, unknown)) or '(none chosen)'} in {diff.branch}; "
                f"it has hunks 1-{len(every)}"
            )
        git, main = repo.git, repo.main_sha()
        base_text = git.blob(diff.base, entry.path) or b""
        head_text = git.blob(diff.head, entry.path) or b""
        main_text = git.blob(main, entry.path) or b""
        if partial:
            by = {h.index: h for h in diff.hunks}
            selection = {i: partial.get(i) or range(1, change_count(by[i]) + 1) for i in chosen}
            new = selected_text(git, base_text, head_text, main_text, diff.hunks, selection)
        else:
            new = adopted_text(git, base_text, head_text, main_text, diff.hunks, chosen)
        if new == main_text:
            raise SkillsRepoError("nothing to adopt: the chosen hunks are already on main")
        target = manifest.deploy_path(entry)
        if target and not force:
            check_target(git, repo.records, entry.name, target, main_before=main_text, new=new)
        numbers = ",".join(str(i) for i in sorted(chosen))
        trailers = {
            "Skillopt-Op": "adopt",
            "Skill": diff.skill,
            "Adopted-From": f"{diff.branch} {diff.head}",
            "Hunks": numbers,
            "Run-Id": diff.branch.removeprefix("staged/"),
        }
        in_part = ""
        if partial:  # which changed lines of the hunks adopted in part
            trailers["Lines"] = format_lines(partial)
            in_part = f" (in part: lines {trailers['Lines']})"
        body = (
            f"Adopted hunks {numbers}{in_part} of {len(every)} from {diff.branch} "
            f"(staged head: {head_commit.subject})."
        )
        extra: list[tuple[str, str | None, str | None]] = []
        archived = None
        # Nothing left to review once main holds the whole staged text: archive the branch.
        whole_branch = chosen == every and not partial
        if whole_branch or merge3(git, new, base_text, head_text) == (new, 0):
            archive = free_ref(repo, ADOPTED, diff.branch.removeprefix("staged/"))
            extra = [(archive, None, diff.head), ("refs/heads/" + diff.branch, diff.head, None)]
            archived = archive.removeprefix("refs/heads/")
        sha = repo.commit_main(
            {entry.path: new},
            messages.build(f"Adopt {diff.skill} from {diff.branch}", trailers, body),
            op="adopt",
            extra_refs=extra,
            deploy=PlannedDeploy(entry.name, target, new) if target else None,
        )
        return AdoptResult(sha, str(target) if target else None, sorted(chosen), archived)


def reject(repo: RepoCore, staged: str) -> str:
    with repo.operation(touches_main=False):
        ref, run_id, head = resolve(repo, staged)
        archive = free_ref(repo, REJECTED, run_id)
        repo.move_refs([(archive, None, head), (ref, head, None)])
        return archive.removeprefix("refs/heads/")
