"""SkillsRepo: the verbs the faces use (list, add, stage, diff, adopt, reject, log, rollback).

Each verb lives in its own module; this class only opens the repo and delegates, so the CLI
and the TUI code against one object.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from core.safe_git import one_line, run_git
from core.skills_repo import adopt as adopt_mod
from core.skills_repo import hand_edit, history, manifest
from core.skills_repo import repo_stager as staging
from core.skills_repo import rollback as rollback_mod
from core.skills_repo.deploy import read_bytes
from core.skills_repo.errors import DeployTargetChanged, SkillsRepoError
from core.skills_repo.part_marks import PartKey, PartMark
from core.skills_repo.plumbing import (
    MAIN,
    PlannedDeploy,
    RepoCore,
    _toplevel,
    check_untracked,
    ensure_main,
)
from core.skills_repo.preview import adopted_preview
from core.skills_repo.rollback_hunks import adoption_hunks, live_hunks, rollback_hunks
from core.skills_repo.types import (
    AdoptResult,
    Hunk,
    LogEntry,
    SkillEntry,
    StagedBranch,
    StagedDiff,
)


class SkillsRepo(RepoCore):
    @classmethod
    def init(
        cls, path: str | os.PathLike[str], *, identity: tuple[str, str] | None = None
    ) -> SkillsRepo:
        """Create a skills repo at `path`, or make an existing git repo one (branch main and
        a manifest). Idempotent."""
        p = Path(path).expanduser().absolute()
        if p.exists() and not p.is_dir():
            raise SkillsRepoError(f"{p} is a file; give a directory for the skills repo")
        found = _toplevel(p) if p.exists() else None
        if found is None:
            p.mkdir(parents=True, exist_ok=True)
            made = run_git("init", "-q", "--initial-branch=main", cwd=p)
            if made.returncode != 0:
                raise SkillsRepoError(
                    f"cannot create a git repository in {p}: {one_line(made.stderr)}"
                )
            found = _toplevel(p)
            assert found is not None
        repo = cls(found[0], found[1], identity)
        if identity:
            repo._save_identity(identity)
        repo.recover_if_needed()
        with repo.operation(touches_main=False):
            main = repo.git.rev(MAIN)
            if main is not None and repo.git.blob(main, manifest.MANIFEST) is not None:
                return repo
            # Every refusal comes before the first change (ensure_main may move HEAD).
            repo.ensure_clean(any_branch=main is None)
            data = read_bytes(repo.path / manifest.MANIFEST)
            if data is not None:
                manifest.parse(data)  # a hand-written manifest: validate, then keep it
            else:
                data = manifest.dump([])
            ensure_main(repo)
            if repo.git.blob(MAIN, manifest.MANIFEST) is None:
                repo.commit_main(
                    {manifest.MANIFEST: data},
                    "Initialise skills repository\n\nSkillopt-Op: init\n",
                    op="init",
                )
        return repo

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, identity: tuple[str, str] | None = None
    ) -> SkillsRepo:
        work_tree, git_dir = cls._locate(path)
        repo = cls(work_tree, git_dir, identity)
        repo.recover_if_needed()
        main = repo.git.rev(MAIN)
        if main is None or repo.git.blob(main, manifest.MANIFEST) is None:
            raise SkillsRepoError(
                f"{work_tree} is not a skills repository (no {manifest.MANIFEST} on main); "
                f"run `skillopt init {work_tree}`"
            )
        return repo

    # -- skills on main ------------------------------------------------------------------

    def list_skills(self) -> list[SkillEntry]:
        return self.manifest_at("main")

    def read_skill(self, name: str, ref: str = "main") -> str:
        entry = self.entry(name, ref)
        commit = self.git.rev(ref)
        data = self.git.blob(commit, entry.path) if commit else None
        if data is None:
            raise SkillsRepoError(f"skill {name!r} has no file {entry.path} at {ref}")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SkillsRepoError(
                f"skill {name!r}: {entry.path} at {ref} is not UTF-8 text (byte {exc.start}); "
                "commit it as UTF-8"
            ) from None

    def add_skill(
        self,
        name: str,
        text: str,
        *,
        path: str | None = None,
        deploy_to: str | None = None,
        force: bool = False,
    ) -> str:
        """Import a skill onto main. With a deploy target: an absent target is written, one
        that already holds this text is recorded as deployed, any other is refused unless
        `force` (so importing never overwrites a different live file silently)."""
        name = manifest.check_name(name)
        path = manifest.check_path(path or f"{name}/SKILL.md")
        entry = SkillEntry(name, path, manifest.normalise_deploy_to(deploy_to))
        data = text.encode("utf-8")
        with self.operation():
            entries = self.list_skills()
            for e in entries:
                if e.name == name:
                    raise SkillsRepoError(f"skill {name!r} already exists (file {e.path})")
                if e.path == path:
                    raise SkillsRepoError(f"{path} already holds skill {e.name!r}; use --path")
            check_untracked(self, path, data)
            target = manifest.deploy_path(entry)
            if target and target.resolve().is_relative_to(self.path.resolve()):
                raise SkillsRepoError(
                    f"deploy target {target} is inside the skills repo; deploy targets are "
                    "where a skill is used, outside the repo (omit --deploy-to if none)"
                )
            plan = None
            current = read_bytes(target) if target else None
            if target and current != data:
                if current is not None and not force:
                    raise DeployTargetChanged(
                        f"deploy target {target} already exists with different content; "
                        f"import it with --from {target}, or pass --force to overwrite it",
                        str(target),
                        "",
                    )
                plan = PlannedDeploy(name, target, data)
            message = f"Add skill {name}\n\nSkillopt-Op: add\nSkill: {name}\n"
            sha = self.commit_main(
                {manifest.MANIFEST: manifest.dump([*entries, entry]), path: data},
                message,
                op="add",
                deploy=plan,
            )
            if target and plan is None:  # already holds this text: just remember it
                blob = self.git.hash_blob(data)
                self.records.save(self.records.with_deploy(name, target, blob, data, sha))
            return sha

    # -- staging and review ----------------------------------------------------------------

    def staged_branches(self) -> list[StagedBranch]:
        return staging.staged_branches(self)

    def stage(
        self,
        skill: str,
        run_id: str,
        text: str,
        *,
        subject: str,
        trailers: dict[str, str],
        body: str = "",
        base: str | None = None,
    ) -> str:
        return staging.stage(
            self, skill, run_id, text, subject=subject, trailers=trailers, body=body, base=base
        )

    def diff(self, staged: str) -> StagedDiff:
        return adopt_mod.staged_diff(self, staged)

    def part_marks(self, staged: str, parts: Iterable[PartKey] = ()) -> dict[PartKey, PartMark]:
        """On main / conflicting, for each block of each hunk and each of `parts`, judged by
        the part's own lines (what `adopt --lines` would do with it alone)."""
        return adopt_mod.part_marks(self, staged, parts)

    def adopt(
        self,
        staged: str,
        hunks: list[int] | None = None,
        *,
        force: bool = False,
        lines: Mapping[int, Collection[int]] | None = None,
    ) -> AdoptResult:
        return adopt_mod.adopt(self, staged, hunks, force=force, lines=lines)

    def preview_adopt(
        self,
        staged: str,
        hunks: list[int],
        lines: Mapping[int, Collection[int]] | None = None,
    ) -> tuple[str, str]:
        """(the skill on main now, as it would be after this adoption); commits nothing."""
        main, after = adopted_preview(self, staged, hunks, lines)
        return main.decode("utf-8", "replace"), after.decode("utf-8", "replace")

    def reject(self, staged: str) -> str:
        return adopt_mod.reject(self, staged)

    def edit_target(self, staged: str, hunk: int | None = None) -> hand_edit.EditTarget:
        """The candidate of `staged` (or one of its hunks) as an editor gets it."""
        return hand_edit.edit_target(self, staged, hunk)

    def stage_edit(self, target: hand_edit.EditTarget, edited: bytes) -> str | None:
        """The hand-edited text as a new commit on the same branch; None if unchanged."""
        return hand_edit.stage_edit(self, target, edited)

    # -- history -----------------------------------------------------------------------------

    def log(self, skill: str | None = None) -> list[LogEntry]:
        path = self.entry(skill).path if skill else None
        return [c.entry() for c in history.commits(self.git, MAIN, path=path)]

    def show(self, commit: str) -> str:
        sha = self.git.rev(commit)
        if sha is None:
            raise SkillsRepoError(f"unknown commit {commit!r} in {self.path}")
        return history.show(self.git, sha)

    def rollback(
        self, target: str | None = None, *, force: bool = False, hunks: list[int] | None = None
    ) -> str:
        """Reverts the adoption `target`; with `hunks`, only those hunks of its diff."""
        if hunks is not None:
            return rollback_hunks(self, target, hunks, force=force)
        return rollback_mod.rollback(self, target, force=force)

    def adoption_hunks(self, target: str | None = None) -> list[Hunk]:
        """The numbered hunks of an adoption, as `rollback(hunks=)` counts them."""
        return adoption_hunks(self, target)

    def live_adoption_hunks(self, target: str | None = None) -> list[int]:
        """The hunks of an adoption main still holds: what a rollback can still revert."""
        return live_hunks(self, target)
