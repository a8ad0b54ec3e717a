"""The git history a replay of a history-reading task is given: as it was at its start.

Why: a task whose session read the history ("summarise what changed in the repo this
week": `git log`, `git show`, `git diff HEAD~3`, sleep/mine/heuristic.reads_history) was
replayed from the files of its start commit alone, so every skill scored 0.2 on it and
the analysts were shown a failure no skill could fix. Its replay now has the history, cut
at the start commit (sleep/night/edited_tree.start_commit) so nothing from after the
session leaks into it:

- a workspace replay works in a copy of a repository made here (`history_repo`): the
  commits reachable from the start commit, no other branch, tag or later commit, its work
  tree checked out there. A coding agent's copy of it keeps its `.git`; a workspace we
  prepare ourselves (the `tools` and `handoff-workspace` modes, which leave any `.git` of
  the source out) is given it again (`seed_history`);
- a chat replay is shown what the session's history commands print there, run again
  (`history_output`): read-only git subcommands only, never through a shell, secrets
  redacted, capped like the files a question's session read (sleep/night/read_files.py).

A repository made here carries MARKER in its git directory, so the modes that copy a
folder can tell it from a person's own checkout (whose `.git` holds later commits and
must never be copied).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.safe_git import one_line, run_git
from sleep.mine.heuristic import reads_history
from sleep.night.read_files import MAX_FILES_CHARS, ReadFiles, clipped

MARKER = "skillopt-history"  # a file in the git directory of a repository made here
# The subcommands re-run for a chat replay: they only read the history. (The reflog is
# the person's checkout's, not the project's: it is not re-run.)
READ_ONLY = frozenset({"log", "shortlog", "whatchanged", "show", "diff", "blame", "rev-list"})
_DIFFING = frozenset({"log", "whatchanged", "show", "diff"})
# Options that write or read a file of their choosing, or name another program or
# repository: a command with one is not re-run.
_REFUSED = ("--output", "-O", "--ext-diff", "--textconv", "--exec", "--upload-pack",
            "--git-dir", "--work-tree", "--contents", "--ignore-revs-file", "--no-index")  # fmt: skip
_SEPARATOR = re.compile(r"\|\||&&|[|;&\n]")


def _branch(project: Path) -> str:
    done = run_git("symbolic-ref", "--short", "-q", "HEAD", cwd=project)
    name = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
    return name or "main"


def build_history(project: Path, commit: str, into: Path) -> str:
    """Make `into` (a new folder) a repository holding `commit` and its ancestors only,
    checked out at `commit`; '' when done, else why not."""
    branch = _branch(project)
    steps = (
        ("init", "-q", "--template=", str(into)),
        ("fetch", "-q", "--no-tags", str(project.resolve()), f"{commit}:refs/heads/{branch}"),
        ("checkout", "-q", branch),
    )
    for args in steps:
        done = run_git(*args, cwd=into if args[0] != "init" else into.parent)
        if done.returncode != 0:
            return f"git {args[0]} failed: {one_line(done.stderr)}"
    (into / ".git" / MARKER).write_text(f"{commit}\n", encoding="utf-8")
    return ""


def is_history_repo(folder: Path) -> bool:
    """`folder` is a repository made here (never a person's checkout)."""
    marker = Path(folder) / ".git" / MARKER
    return marker.is_file() and not marker.is_symlink()


@contextlib.contextmanager
def history_repo(project: Path, commit: str, keep_in: Path | None = None) -> Iterator[Path | None]:
    """The project's history up to `commit` (None when it cannot be made), in a temporary
    folder removed on exit; or, with `keep_in`, kept there under a name that hashes its
    inputs (a handoff workspace outlives the run and names the folder it was copied from)."""
    key = hashlib.sha256(f"{Path(project).resolve()}\0{commit}".encode()).hexdigest()[:16]
    if keep_in is not None:
        place = Path(keep_in) / f"history-{key}"
        if not is_history_repo(place):
            partial = place.with_name(place.name + ".partial")
            for stale in (place, partial):
                shutil.rmtree(stale, ignore_errors=True)
            place.parent.mkdir(parents=True, exist_ok=True)
            partial.mkdir()
            if build_history(Path(project), commit, partial):
                shutil.rmtree(partial, ignore_errors=True)
                yield None
                return
            partial.rename(place)
        yield place
        return
    folder = Path(tempfile.mkdtemp(prefix="skillopt-history-"))
    try:
        place = folder / "repo"
        place.mkdir()
        yield None if build_history(Path(project), commit, place) else place
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def seed_history(work_tree: Path, source: Path) -> bool:
    """Give a prepared workspace's work tree the history of `source` as its `.git`, when
    `source` is a repository made here (True); a person's checkout gives nothing."""
    if not is_history_repo(source) or (work_tree / ".git").exists():
        return False
    shutil.copytree(source / ".git", work_tree / ".git", symlinks=True)
    return True


def history_invocations(command: str) -> tuple[list[list[str]], str]:
    """The git argument lists of `command`'s parts that read the history, each re-runnable
    (`-C <dir>` dropped: they run in the session's folder), or ([], why not)."""
    out: list[list[str]] = []
    for part in _SEPARATOR.split(command):
        if not reads_history(part):
            continue
        try:
            words = shlex.split(part)
        except ValueError:
            return [], "it cannot be parsed"
        at = next((i for i, w in enumerate(words) if w == "git" or w.endswith("/git")), None)
        if at is None:
            return [], "it does not start git"
        args = words[at + 1 :]
        while args[:1] in (["-C"], ["--no-pager"]):
            args = args[2:] if args[0] == "-C" else args[1:]
        if not args or args[0] not in READ_ONLY:
            return [], "it is not a read-only history command"
        if any(a.startswith(_REFUSED) for a in args[1:]):
            return [], "it names a file or program of its own"
        extra = ["--no-ext-diff", "--no-textconv"] if args[0] in _DIFFING else []
        out.append([args[0], *extra, *args[1:]])
    return (out, "") if out else ([], "it reads no history")


@dataclass(frozen=True)
class HistoryOutput(ReadFiles):
    """What the session's history commands print at the start commit (command, output),
    and those that could not be run again, with why."""

    def section(self) -> str:
        """The outputs as the prompt gives them ('' when there are none to give)."""
        if not self.shown and not self.missing:
            return ""
        lines = [
            "The git history commands the person's session ran to answer this, run again "
            "on the project as it was when it was asked (their output, for reading only):"
        ]
        for command, text in self.shown:
            lines += ["", f"----- $ {command} -----", text.rstrip("\n"), "----- end -----"]
        for command, why in self.missing.items():
            lines += ["", f"($ {command}: not run again, {why})"]
        return "\n".join(lines)

    def lacking(self) -> str:
        """Why the replay lacks the history its session read ('' when it has it all)."""
        if not self.missing:
            return ""
        return (
            "its session read the git history with "
            + ", ".join(f"`{c}`" for c in sorted(self.missing))
            + ", which this chat replay could not show"
        )


def history_output(commands: list[str], repo: Path | None, base: str = "") -> HistoryOutput:
    """`commands` (the session's, as recorded) run again in `repo` (a repository made by
    `history_repo`), in the session's folder `base` within it."""
    if not commands:
        return HistoryOutput()
    if repo is None:
        return HistoryOutput(missing=dict.fromkeys(commands, "the history could not be read"))
    where = repo / base if base and (repo / base).is_dir() else repo
    shown: list[tuple[str, str]] = []
    missing: dict[str, str] = {}
    room = MAX_FILES_CHARS
    for command in commands:
        invocations, why = history_invocations(command)
        outputs = []
        for args in invocations:
            done = run_git(*args, cwd=where)
            if done.returncode != 0:
                why = f"git failed there: {one_line(done.stderr)}"
                break
            outputs.append(done.stdout.decode("utf-8", "replace"))
        if why or len(outputs) < len(invocations):
            missing[command] = why
            continue
        if room <= 0:
            missing[command] = "the outputs before it fill the room for them"
            continue
        text = clipped("".join(outputs), room) or "(no output)"
        room -= len(text)
        shown.append((command, text))
    return HistoryOutput(shown, missing)
