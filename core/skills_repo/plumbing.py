"""A skills repository on disk: opening and creating it, the lock, the work-tree check, and
the one journaled way to move `main` (commit built with plumbing, refs moved in one
transaction, then work tree and deploy target), which adopt, rollback, add and init share.

Commits are built with plumbing in a temporary index (hash-object, update-index,
write-tree, commit-tree, update-ref), so staging never touches the user's checkout and the
work tree is only updated when `main` is the checked-out branch.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git as gitpython

from core.clean_text import utf8
from core.safe_git import DEFAULT_IDENTITY
from core.skills_repo import manifest
from core.skills_repo.deploy import DeployRecords, read_bytes, write_file
from core.skills_repo.errors import DirtyTree, SkillsRepoError
from core.skills_repo.gitcmd import GIT_LOCK, GitRunner
from core.skills_repo.journal import Journal, crash_point, recover
from core.skills_repo.lock import RepoLock
from core.skills_repo.types import SkillEntry

MAIN = "refs/heads/main"


@dataclass(frozen=True)
class PlannedDeploy:
    name: str
    target: Path
    data: bytes


def _toplevel(path: Path) -> tuple[Path, Path] | None:
    """(work tree, git dir) if `path` itself is the top of a non-bare git work tree."""
    try:
        repo = gitpython.Repo(str(path))
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        return None
    if repo.working_tree_dir is None or Path(repo.working_tree_dir).resolve() != path.resolve():
        return None
    return Path(repo.working_tree_dir), Path(repo.git_dir).resolve()


class RepoCore:
    """State and mechanics shared by every operation; SkillsRepo adds the verbs."""

    def __init__(self, path: Path, git_dir: Path, identity: tuple[str, str] | None = None):
        self.path = path
        self.git_dir = git_dir
        (git_dir / "skillopt").mkdir(exist_ok=True)
        self.identity = identity or self._saved_identity() or DEFAULT_IDENTITY
        self.git = GitRunner(path, git_dir, self.identity)
        self.lock = RepoLock(git_dir / "skillopt.lock")
        self.journal = Journal.in_git_dir(git_dir)
        self.records = DeployRecords(git_dir)
        self.recovered: str | None = None
        self.valid_run_ids: set[str] = set()
        self._head_main: bool | None = None  # known for the length of one operation

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def _locate(cls, path: str | os.PathLike[str]) -> tuple[Path, Path]:
        p = Path(path).expanduser().absolute()
        found = _toplevel(p)
        if found is None:
            raise SkillsRepoError(
                f"{p} is not a skills repository; run `skillopt init {p}` to create one"
            )
        return found

    def _saved_identity(self) -> tuple[str, str] | None:
        try:
            data = json.loads((self.git_dir / "skillopt" / "identity.json").read_text("utf-8"))
            return str(data["name"]), str(data["email"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save_identity(self, identity: tuple[str, str]) -> None:
        data = {"name": identity[0], "email": identity[1]}
        write_file(self.git_dir / "skillopt" / "identity.json", json.dumps(data).encode())

    def recover_if_needed(self) -> None:
        """Undo an operation that died part-way, unless its owner is still alive."""
        if not self.journal.exists():
            return
        with GIT_LOCK:
            if not self.lock.try_acquire():
                return  # a live operation owns the journal
            try:
                note = recover(self, self.journal)
                shutil.rmtree(self.git_dir / "skillopt" / "tmp", ignore_errors=True)
                if note:
                    self.recovered = note
            finally:
                self.lock.release()

    # -- state ---------------------------------------------------------------------------

    def main_sha(self) -> str:
        sha = self.git.rev(MAIN)
        if sha is None:
            raise SkillsRepoError(
                f"{self.path} has no main branch; run `skillopt init {self.path}`"
            )
        return sha

    def head_is_main(self) -> bool:
        if self._head_main is not None:
            return self._head_main
        status, out, _ = self.git.call("symbolic-ref", "-q", "HEAD")
        return status == 0 and out.decode().strip() == MAIN

    def manifest_at(self, ref: str = "main") -> list[SkillEntry]:
        commit = self.git.rev(ref)
        if commit is None:
            raise SkillsRepoError(f"unknown revision {ref!r} in {self.path}")
        return manifest.parse(self.git.blob(commit, manifest.MANIFEST))

    def entry(self, name: str, ref: str = "main") -> SkillEntry:
        return manifest.find(self.manifest_at(ref), name)

    def dirty_paths(self) -> list[str]:
        out = self.git.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all"
        )
        return [e[3:] for e in out.decode("utf-8", "replace").split("\0") if len(e) > 3]

    def ensure_clean(self, *, any_branch: bool = False) -> None:
        """Refuse uncommitted changes in a checkout of main (we never touch a checkout of
        another branch), or in any checkout with `any_branch` (init, which switches HEAD)."""
        if not any_branch and not self.head_is_main():
            return
        dirty = self.dirty_paths()
        if dirty:
            shown = ", ".join(dirty[:3]) + (" ..." if len(dirty) > 3 else "")
            raise DirtyTree(
                f"skills repo {self.path} has uncommitted changes ({shown}); commit or "
                "discard them, then retry"
            )

    @contextmanager
    def operation(self, *, touches_main: bool = True, wait: float = 0.0) -> Iterator[None]:
        """Serialise with other threads and processes; undo any interrupted operation."""
        deadline = time.monotonic() + wait
        while True:  # wait for another process without blocking this process's readers
            GIT_LOCK.acquire()
            if self.lock.try_acquire():
                break
            GIT_LOCK.release()
            if time.monotonic() >= deadline:
                raise self.lock.busy_error()
            time.sleep(0.05)
        try:
            outermost = self._head_main is None
            try:
                if self.journal.exists():
                    self.recovered = recover(self, self.journal)
                if touches_main:
                    self._head_main = self.head_is_main()
                    self.ensure_clean()
                yield
            finally:
                if outermost:
                    self._head_main = None
                self.lock.release()
        finally:
            GIT_LOCK.release()

    # -- building commits ------------------------------------------------------------------

    def tree_with(
        self,
        parent: str | None,
        changes: dict[str, bytes | None],
        blobs: dict[str, str] | None = None,
    ) -> str:
        """The tree of `parent` with files replaced (bytes) or removed (None)."""
        tmp = self.git_dir / "skillopt" / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        index = tmp / f"index-{os.getpid()}-{uuid.uuid4().hex}"
        try:
            if parent:
                self.git.run("read-tree", parent, index_file=index)
            else:
                self.git.run("read-tree", "--empty", index_file=index)
            entries = []
            for path, data in changes.items():
                if data is None:
                    entries.append(f"0 {'0' * 40}\t{path}\0")
                else:
                    sha = (blobs or {}).get(path) or self.git.hash_blob(data)
                    entries.append(f"100644 {sha}\t{path}\0")
            self.git.run(
                "update-index",
                "-z",
                "--index-info",
                stdin="".join(entries).encode("utf-8"),
                index_file=index,
            )
            return self.git.line("write-tree", index_file=index)
        finally:
            index.unlink(missing_ok=True)
            Path(str(index) + ".lock").unlink(missing_ok=True)

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        # a trailer may name a transcript's session, a lone surrogate and all: U+FFFD
        return self.git.line(*args, stdin=utf8(message))

    def move_refs(self, updates: list[tuple[str, str | None, str | None]]) -> None:
        """One ref transaction: every (ref, old, new) moves, or none does."""
        lines = []
        for ref, old, new in updates:
            if new is None:
                lines.append(f"delete {ref} {old}\n")
            elif old is None:
                lines.append(f"create {ref} {new}\n")
            else:
                lines.append(f"update {ref} {new} {old}\n")
        status, _, err = self.git.call("update-ref", "--stdin", stdin="".join(lines).encode())
        if status != 0:
            raise SkillsRepoError(
                f"refs in {self.path} changed while we worked ({err.strip()}); retry"
            )

    def commit_main(
        self,
        changes: dict[str, bytes | None],
        message: str,
        *,
        op: str,
        extra_refs: list[tuple[str, str | None, str | None]] | None = None,
        deploy: PlannedDeploy | None = None,
    ) -> str:
        """Commit `changes` on main: update the work tree and deploy, then move main,
        journaled so an interruption before main moves is undone at the next start and
        one after it is complete. Call inside operation()."""
        old = self.git.rev(MAIN)
        blobs = {p: self.git.hash_blob(d) for p, d in changes.items() if d is not None}
        tree = self.tree_with(old, changes, blobs)
        new = self.commit_tree(tree, [old] if old else [], message)
        paths = list(changes) if self.head_is_main() else []
        plan: dict = {
            "op": op,
            "pid": os.getpid(),
            "refs": [[MAIN, old, new], *(extra_refs or [])],
            "new_main": new,
            "paths": paths,
            "deploy": None,
        }
        if deploy:
            current = read_bytes(deploy.target)
            plan["deploy"] = {
                "name": deploy.name,
                "target": str(deploy.target),
                "old_blob": self.git.hash_blob(current) if current is not None else None,
                "new_blob": next(
                    (blobs[p] for p, d in changes.items() if d == deploy.data),
                    None,
                )
                or self.git.hash_blob(deploy.data),
            }
            plan["records_old"] = self.records.load()
        self.journal.write(plan)
        crash_point(f"{op}:after-journal")
        # Everything is prepared first and main moves last: the ref transaction is the
        # commit point. A kill before it leaves main where it was (the next start puts the
        # work tree and deploy target back); a kill after it leaves the change complete
        # (the next start only removes the journal).
        try:
            self._sync_work_tree(paths, changes, new)
            crash_point(f"{op}:after-worktree")
            if deploy:
                write_file(deploy.target, deploy.data)
                crash_point(f"{op}:after-deploy-write")
                self.records.save(
                    self.records.with_deploy(
                        deploy.name, deploy.target, plan["deploy"]["new_blob"], deploy.data, new
                    )
                )
                crash_point(f"{op}:after-records")
            self.move_refs([tuple(r) for r in plan["refs"]])
        except Exception as exc:  # undo now rather than at the next start
            recover(self, self.journal)
            if isinstance(exc, OSError):
                raise SkillsRepoError(
                    f"could not write {exc.filename or 'a file'} ({exc.strerror or exc}); "
                    "nothing was changed"
                ) from exc
            raise
        crash_point(f"{op}:after-refs")
        crash_point(f"{op}:before-journal-clear")
        self.journal.clear()
        return new

    def _sync_work_tree(self, paths: list[str], changes: dict[str, bytes | None], new: str) -> None:
        """Work-tree files and index entries as in commit `new`, before main points at it
        (so once it does, the checkout is clean with nothing left to do)."""
        if not paths:
            return
        for path in paths:
            data, file = changes[path], self.path / path
            if data is None:
                file.unlink(missing_ok=True)
            else:
                write_file(file, data)
        self.git.call("reset", "-q", new, "--", *paths)
        self.git.call("update-index", "-q", "--refresh")


def check_untracked(core: RepoCore, path: str, data: bytes) -> None:
    """Refuse to overwrite a file in the checkout that git does not track (unless it already
    holds exactly what we would write)."""
    if not core.head_is_main():
        return
    existing = read_bytes(core.path / path)
    if existing is not None and existing != data:
        raise DirtyTree(
            f"{core.path / path} exists in the skills repo but is not committed; move it "
            "away or choose another --path"
        )


def ensure_main(core: RepoCore) -> None:
    """Make sure branch main exists (init): point an unborn HEAD at it, or create it at the
    checked-out commit and switch HEAD to it (same commit: the checkout does not change)."""
    if core.git.rev(MAIN):
        return
    head = core.git.rev("HEAD")
    if head:
        core.move_refs([(MAIN, None, head)])
    core.git.run("symbolic-ref", "HEAD", MAIN)
