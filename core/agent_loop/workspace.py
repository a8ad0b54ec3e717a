"""A fresh copy of a project for one replayed task, with the candidate skill in place.

Why a copy: the replayed task reads and edits files, and the user's checkout (and its
uncommitted work) must never be touched. A git project is copied as its tree at the commit
recorded when the night started (`git archive`, so no worktree, no shared object store and
no hooks of the user's repository); any other folder is copied plainly, leaving out `.git`,
bulky generated folders, oversized files, special files and symlinks that point outside it.

The copy gets a git repository of its own whose git directory lives *beside* the work tree,
not in it: the tools only reach the work tree, so a model cannot plant a `core.fsmonitor`
or a hook that our `git diff` would run. The baseline commit holds the copy with the skill
placed, so the diff is exactly what the task changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from core.atomic import write_json
from core.errors import UserError
from core.safe_git import git_process, one_line, run_git
from core.tree_extract import TreeTooLarge, extract_tree

# Folders a plain copy leaves out: version control, dependencies and build output.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "target",
        "dist",
        "build",
        ".next",
    }
)
MAX_COPIED_FILE_BYTES = 5_000_000
MAX_COPIED_BYTES = 200_000_000
MAX_DIFF_CHARS = 50_000
LEFT_OUT_FILE = "left-out.json"  # beside work/ and git/: what the copy left out


class WorkspaceError(UserError):
    """The project cannot be copied for a replay (bad commit, too large, not a folder)."""


@dataclass(frozen=True)
class Workspace:
    """The work tree a replay may touch (`root`) and the git directory beside it."""

    root: Path
    git_dir: Path
    # what the copy left out (a symlink out of the project, an oversized file), one note each
    left_out: tuple[str, ...] = ()

    def diff(self) -> str:
        """What changed since the baseline, new files included, as a unified diff."""
        self._git("add", "-A")
        text = self._git(
            "diff",
            "--cached",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "HEAD",
        )
        if len(text) > MAX_DIFF_CHARS:
            text = text[:MAX_DIFF_CHARS] + "\n... (diff truncated)\n"
        return text

    def _git(self, *args: str) -> str:
        return _git(self.git_dir, self.root, *args)


def _git(git_dir: Path, root: Path, *args: str) -> str:
    done = run_git(*args, git_dir=git_dir, work_tree=root, cwd=root)
    if done.returncode != 0:
        raise WorkspaceError(
            f"git {args[0]} in the replay workspace failed: {one_line(done.stderr)}"
        )
    return done.stdout.decode("utf-8", errors="replace")


def _too_large(project: Path) -> WorkspaceError:
    return WorkspaceError(
        f"{project} holds more than {MAX_COPIED_BYTES // 1_000_000} MB of files to copy for "
        "a replay; replay a smaller project, or move the bulk out of it"
    )


def _extract_commit(project: Path, commit: str, into: Path) -> list[str]:
    """The tree of `commit` in `into`; a member tarfile's "data" rules refuse (a committed
    symlink to /etc/passwd or `../sibling`) or a file past MAX_COPIED_FILE_BYTES is left out
    and noted rather than failing the replay; past MAX_COPIED_BYTES the copy is refused."""
    with git_process("archive", "--format=tar", commit, cwd=project) as archive:
        try:
            with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
                left_out = extract_tree(
                    tar,
                    into,
                    max_file_bytes=MAX_COPIED_FILE_BYTES,
                    max_total_bytes=MAX_COPIED_BYTES,
                )
        except TreeTooLarge:
            archive.kill()
            raise _too_large(project) from None
        except (tarfile.TarError, OSError) as exc:
            archive.kill()
            error = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
            why = " ".join((error or str(exc)).split())[:200]
            raise WorkspaceError(
                f"cannot copy commit {commit!r} of {project}: {why}; "
                "check that the project is the git repository the night recorded"
            ) from None
        error = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
    if archive.returncode != 0:
        why = " ".join(error.split())[:200]
        raise WorkspaceError(f"cannot copy commit {commit!r} of {project}: {why}")
    return left_out


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _copy_folder(project: Path, into: Path) -> list[str]:
    """A plain copy of a folder that is not a git repository (see the module doc); returns
    a note per symlink left out."""
    root = project.resolve()
    total = 0
    left_out: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        target = into / here.relative_to(root)
        target.mkdir(exist_ok=True)
        kept = []
        for name in sorted(dirs):
            path = here / name
            if name in SKIPPED_DIRS:
                continue
            if path.is_symlink():
                files.append(name)  # a link to a folder: judged like a file link
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = here / name
            if path.is_symlink():
                pointed = Path(os.path.realpath(path))
                link = os.readlink(path)
                if not os.path.isabs(link) and _inside(pointed, root) and pointed.exists():
                    os.symlink(link, target / name)
                else:
                    rel = (here / name).relative_to(root).as_posix()
                    left_out.append(f"{rel}: a symlink to {link!r}, outside the tree")
                continue
            if not path.is_file():
                continue  # FIFOs, sockets, devices
            size = path.stat().st_size
            if size > MAX_COPIED_FILE_BYTES:
                continue
            total += size
            if total > MAX_COPIED_BYTES:
                raise _too_large(project)
            shutil.copyfile(path, target / name)
    return left_out


def _check_relative(path: str) -> str:
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts:
        raise WorkspaceError(f"the skill's place {path!r} must be a path inside the project")
    return pure.as_posix()


def _place_skill(root: Path, skill_path: str, skill_text: str) -> None:
    """Write the skill at `skill_path`, replacing what the project had there. A folder on
    the way that is a symlink is refused: the write could land outside the copy."""
    target = root / skill_path
    for parent in reversed(target.relative_to(root).parents):
        if (root / parent).is_symlink():
            raise WorkspaceError(
                f"the skill's place {skill_path!r} goes through a symlink in the project"
            )
    if target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(skill_text, encoding="utf-8")


def prepare_workspace(
    base: Path, project: Path, commit: str | None, *, skill_path: str, skill_text: str
) -> Workspace:
    """Build a workspace in the new folder `base` (its `work/` and `git/`): the project's
    tree at `commit` (or a plain copy of the folder when `commit` is None), the skill written
    to `skill_path` (relative; an empty skill is placed nowhere, so a baseline replay has
    none), committed as the baseline the diff is taken against. On an error `base` is left
    for the caller to remove."""
    if not project.is_dir():
        raise WorkspaceError(f"the project {project} is not a folder; check the night's project")
    skill_path = _check_relative(skill_path)
    root, git_dir = base / "work", base / "git"
    root.mkdir(parents=True)
    if commit is None:
        left_out = _copy_folder(project, root)
    else:
        left_out = _extract_commit(project, commit, root)
    if skill_text.strip():
        _place_skill(root, skill_path, skill_text)
    _git(git_dir, root, "init", "-q", "--template=")
    _git(git_dir, root, "add", "-A")
    _git(git_dir, root, "commit", "-q", "--no-verify", "--allow-empty", "-m", "baseline")
    if left_out:  # read again by `existing_workspace`, for the run that reads the answer
        write_json(base / LEFT_OUT_FILE, left_out)
    return Workspace(root, git_dir, tuple(left_out))


def existing_workspace(base: Path) -> Workspace | None:
    """The workspace `prepare_workspace` built in `base`, if both its halves are still
    there (a workspace kept across runs, e.g. for a handoff answer). Not when `base`, its
    halves or anything in its git directory is a symlink: git would write its index and
    objects through it, wherever it points (the caller prepares the workspace again)."""
    root, git_dir = base / "work", base / "git"
    if any(p.is_symlink() for p in (base, root, git_dir)) or _holds_symlink(git_dir):
        return None
    if root.is_dir() and (git_dir / "HEAD").is_file():
        return Workspace(root, git_dir, _left_out(base / LEFT_OUT_FILE))
    return None


def _left_out(path: Path) -> tuple[str, ...]:
    try:
        notes = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(str(n) for n in notes) if isinstance(notes, list) else ()


def _holds_symlink(folder: Path) -> bool:
    for here, dirs, files in os.walk(folder):
        if any(os.path.islink(os.path.join(here, name)) for name in (*dirs, *files)):
            return True
    return False


@contextlib.contextmanager
def replay_workspace(
    project: Path, commit: str | None, *, skill_path: str, skill_text: str, keep: bool = False
) -> Iterator[Workspace]:
    """A fresh workspace in a temporary folder (see `prepare_workspace`), removed on exit
    unless `keep`."""
    if not project.is_dir():
        raise WorkspaceError(f"the project {project} is not a folder; check the night's project")
    skill_path = _check_relative(skill_path)
    base = Path(tempfile.mkdtemp(prefix="skillopt-replay-"))
    try:
        yield prepare_workspace(base, project, commit, skill_path=skill_path, skill_text=skill_text)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
