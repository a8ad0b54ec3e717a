"""Staging candidates as commits on `staged/<run-id>`, without touching the checkout.

Each staged commit carries `Run-Id`, `Skill` and the evidence trailers; staging the same
(`Step`, `Source`) of a run twice returns the first commit (a resumed run re-stages its
last step). `Source` tells a step's candidate from the slow update of the same step; a
commit without it counts as `step` (commits staged before the trailer existed).
"""

from __future__ import annotations

from core.run.staging import StagedCandidate
from core.sign_test import evidence_trailer
from core.skills_repo import history, manifest, messages
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.plumbing import RepoCore
from core.skills_repo.types import StagedBranch

STAGED = "refs/heads/staged/"
REJECTED = "refs/heads/rejected/"
ADOPTED = "refs/heads/adopted/"
# A run stages in the background; a person adopting at that moment should delay it, not fail it.
STAGE_LOCK_WAIT_S = 30.0


def check_run_id(repo: RepoCore, run_id: str) -> str:
    if run_id in repo.valid_run_ids:
        return run_id
    status, _, _ = repo.git.call("check-ref-format", f"{STAGED}{run_id}")
    if not run_id or "/" in run_id or status != 0:
        raise SkillsRepoError(
            f"bad run id {run_id!r}: use letters, digits, '-', '_' or '.', without spaces or '/'"
        )
    repo.valid_run_ids.add(run_id)
    return run_id


def resolve(repo: RepoCore, staged: str) -> tuple[str, str, str]:
    """(ref, run id, head sha) for 'staged/<id>', 'refs/heads/staged/<id>' or '<id>'."""
    run_id = staged.removeprefix("refs/heads/").removeprefix("staged/")
    ref = STAGED + run_id
    head = repo.git.rev(ref) if run_id else None
    if head is None:
        names = ", ".join(b.name for b in staged_branches(repo)) or "none"
        raise SkillsRepoError(f"no staged branch {staged!r} (staged: {names})")
    return ref, run_id, head


def branch_base(repo: RepoCore, head: str) -> str:
    """The main commit the branch was staged from (main never merges staged commits)."""
    status, out, _ = repo.git.call("merge-base", "refs/heads/main", head)
    if status != 0:
        raise SkillsRepoError(f"staged commit {head[:12]} shares no history with main")
    return out.decode().strip()


def skill_of(repo: RepoCore, head: str) -> str:
    skill = history.commit(repo.git, head).trailers.get("Skill")
    if not skill:
        raise SkillsRepoError(f"staged commit {head[:12]} has no Skill trailer")
    return skill


def staged_branches(repo: RepoCore) -> list[StagedBranch]:
    out = repo.git.run("for-each-ref", "--format=%(refname)%00%(objectname)", STAGED)
    result = []
    for line in out.decode("utf-8").splitlines():
        ref, head = line.split("\0")
        run_id = ref.removeprefix(STAGED)
        base = branch_base(repo, head)
        count = int(repo.git.line("rev-list", "--count", f"{base}..{head}"))
        result.append(
            StagedBranch("staged/" + run_id, run_id, skill_of(repo, head), count, head, base)
        )
    return result


def stage(
    repo: RepoCore,
    skill: str,
    run_id: str,
    text: str,
    *,
    subject: str,
    trailers: dict[str, str],
    body: str = "",
    base: str | None = None,
    reuse_run_id: bool = False,
    expect_head: str | None = None,
) -> str:
    """Commit `text` as skill `skill` on staged/<run_id>. A run id whose branch was
    already adopted or rejected is refused (its review is over), unless `reuse_run_id`:
    a run restarted with --fresh archived its old branch and stages anew. `expect_head`:
    the branch head the text was made from (a hand edit); checked under the lock, so a
    step staged meanwhile is never overwritten."""
    check_run_id(repo, run_id)
    ref = STAGED + run_id
    with repo.operation(touches_main=False, wait=STAGE_LOCK_WAIT_S):
        head = repo.git.rev(ref)
        if expect_head is not None and head != expect_head:
            raise SkillsRepoError(
                f"staged/{run_id} changed while it was being edited (a new commit was "
                "staged); open it again and redo the edit"
            )
        if head:
            step = trailers.get("Step")
            owner = history.commit(repo.git, head).trailers.get("Skill")
            if owner != skill:
                raise SkillsRepoError(
                    f"staged/{run_id} holds skill {owner!r}, not {skill!r}; use another run id"
                )
            if step is not None:
                done = _staged_step(
                    repo, branch_base(repo, head), head, run_id, str(step), trailers.get("Source")
                )
                if done:
                    return done
            parent = head
        else:
            for prefix in () if reuse_run_id else (REJECTED, ADOPTED):
                if repo.git.rev(prefix + run_id):
                    raise SkillsRepoError(
                        f"run id {run_id!r} was already {prefix.split('/')[2]}; use another run id"
                    )
            parent = repo.git.rev(base or "refs/heads/main")
            if parent is None:
                raise SkillsRepoError(f"unknown base revision {base!r} for staging")
        entry = manifest.find(manifest.parse(repo.git.blob(parent, manifest.MANIFEST)), skill)
        all_trailers = {"Run-Id": run_id, **{k: str(v) for k, v in trailers.items()}}
        all_trailers["Skill"] = skill
        tree = repo.tree_with(parent, {entry.path: text.encode("utf-8")})
        if tree == repo.git.line("rev-parse", f"{parent}^{{tree}}"):
            where = f"staged/{run_id}" if head else "main"
            raise SkillsRepoError(
                f"nothing to stage: the candidate for {skill!r} is identical to {where}"
            )
        sha = repo.commit_tree(tree, [parent], messages.build(subject, all_trailers, body))
        repo.move_refs([(ref, head, sha)])
        return sha


def _source(value: str | None) -> str:
    return value or "step"


def _staged_step(
    repo: RepoCore, base: str, head: str, run_id: str, step: str, source: str | None
) -> str | None:
    """The commit on base..head that staged this (Step, Source) of this run, if any. git
    filters the (possibly thousands of) commits by a grep on the Step trailer line; we
    confirm the match."""
    args = ["log", "-z", "--format=%H", f"{base}..{head}"]
    if step.isdigit():
        args[1:1] = ["--basic-regexp", "--regexp-ignore-case", f"--grep=^Step: {step}$"]
    for sha in repo.git.run(*args).decode().split("\0"):
        if sha.strip():
            trailers = history.commit(repo.git, sha.strip()).trailers
            if (
                trailers.get("Step") == step
                and trailers.get("Run-Id") == run_id
                and _source(trailers.get("Source")) == _source(source)
            ):
                return sha.strip()
    return None


def identical_staged(
    repo: RepoCore, skill: str, text: str, *, except_run: str | None = None
) -> str | None:
    """The head sha of another run's staged branch of `skill` whose text is exactly
    `text`, if there is one."""
    data = text.encode("utf-8")
    path: str | None = None
    for branch in staged_branches(repo):
        if branch.skill != skill or branch.run_id == except_run:
            continue
        if path is None:
            path = manifest.find(repo.manifest_at("main"), skill).path
        if repo.git.blob(branch.head, path) == data:
            return branch.head
    return None


MOVED_SHOWN = 20  # items listed in a commit's body; the rest are counted


def _flipped(flips: object) -> str:
    """The item's mechanical checks that flipped (core/training/check_flips.py), if any."""
    if not isinstance(flips, dict):
        return ""
    said = [f"{c} failing -> passing" for c in flips.get("up", [])]
    said += [f"{c} passing -> failing" for c in flips.get("down", [])]
    return f"; checks flipped: {', '.join(said)}" if said else ""


# What decided an item's score (the judge's reason and the mined checks' tally) is kept
# whole up to this many characters; longer is cut with a visible "…".
DECIDED_CHARS = 600


def moved_lines(moved: list[dict]) -> list[str]:
    """The commit body's list of the val items that moved: id, the request's start, how
    it was replayed, before -> after, and what decided the new score."""
    if not moved:
        return []
    lines = ["", "Items that moved:"]
    for item in moved[:MOVED_SHOWN]:
        request = messages.quoted_line(item.get("question", ""), 80)
        replay = f" [{item['replay']}]" if item.get("replay") else ""
        decided = messages.marked_line(item.get("decided_by", ""), DECIDED_CHARS)
        lines.append(
            f"- {item.get('id')}{replay} {item.get('before', 0):.2f} -> "
            f"{item.get('after', 0):.2f}: {request!r}"
            + (f"; decided by {decided}" if decided else "")
            + _flipped(item.get("checks_flipped"))
        )
    if len(moved) > MOVED_SHOWN:
        lines.append(f"- and {len(moved) - MOVED_SHOWN} more")
    return lines


class SkillsRepoStager:
    """The trainer's Stager for a run started with a skills repo: one commit per accepted
    candidate on staged/<run-id>, branched from the main commit the run started from.
    `reuse_run_id`: the run was restarted with --fresh, so an archived (rejected/adopted)
    branch of the same run id belongs to the discarded run and does not block staging."""

    def __init__(
        self,
        repo: RepoCore,
        skill: str,
        run_id: str,
        base: str | None = None,
        *,
        reuse_run_id: bool = False,
    ):
        self.repo = repo
        self.skill = skill
        self.reuse_run_id = reuse_run_id
        self.run_id = check_run_id(repo, run_id)
        manifest.find(repo.manifest_at("main"), skill)
        self.base = repo.git.rev(base) if base else repo.main_sha()
        if self.base is None:
            raise SkillsRepoError(f"unknown base revision {base!r} for staging")

    def stage(self, candidate: StagedCandidate) -> str:
        c = candidate
        same = identical_staged(self.repo, self.skill, c.skill_text, except_run=self.run_id)
        if same is not None:
            # the same config run again proposes the same text: one branch to review, not
            # two; the run records the existing commit as its staged reference
            return same
        trailers = {
            "Run-Id": self.run_id,
            "Step": str(c.step),
            "Source": c.source or "step",
            "Val-Before": f"{c.val_before:.4f}",
            "Val-After": f"{c.val_after:.4f}",
            "Items-Improved": str(c.items_improved),
            "Items-Regressed": str(c.items_regressed),
        }
        if c.val_items is not None:
            trailers["Val-Items"] = str(c.val_items)
        # a paired sign test over the items that changed (core/sign_test.py)
        trailers["Evidence"] = evidence_trailer(c.items_improved, c.items_regressed)
        trailers["Edits"] = str(len(c.edits))
        if c.source_sessions:
            trailers["Source-Sessions"] = ", ".join(c.source_sessions)
        for key, value in c.trailers.items():
            trailers.setdefault(key, messages.one_line(value))
        rationales = []
        for i, edit in enumerate(c.edits, 1):
            why = messages.one_line(edit.get("rationale", "")) or "(no rationale given)"
            rationales.append(f"{i}. {edit.get('op', 'edit')}: {why}")
        subject = c.summary or (
            f"{self.skill}: step {c.step}, val {c.val_before:.3f} -> {c.val_after:.3f}"
        )
        return stage(
            self.repo,
            self.skill,
            self.run_id,
            c.skill_text,
            subject=subject,
            trailers=trailers,
            body="\n".join([*rationales, *moved_lines(c.moved), *([c.notes] if c.notes else [])]),
            base=self.base,
            reuse_run_id=self.reuse_run_id,
        )
