"""The files a question's session read, as a chat replay is given them (read-only).

Why: a question about the project with no change asked for ("are nulls dropped or kept?")
is replayed as one chat call, and a chat call has no files: the strong-model night's
chat replays of code questions failed for want of the code, and the analyst learned
"don't hedge, say the likely answer" from them. The harvest keeps the paths the
session's agent read (sleep/harvest/file_reads.py); here their content is read where the
replay starts (the task's start commit, with a follow-up's earlier edits applied when it
has them: sleep/night/replay_env._start_tree) and put in the prompt, each file whole or
clipped, secrets redacted. Only those files: a file the session did not read is not shown.
A file that cannot be shown (not in the project there, binary, or no project to read
from) is said so, and the replay is marked as lacking its inputs
(sleep/night/replay_env.py), so its failure is not taken for the skill's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from core.safe_git import run_git
from sleep.night.edited_tree import session_base
from sleep.redact import Redactor

MAX_FILE_CHARS = 12_000  # of one file shown
MAX_FILES_CHARS = 40_000  # of all the files of one replay
_REDACTOR = Redactor()


@dataclass(frozen=True)
class ReadFiles:
    """The files shown (path, text) and those that could not be, with why."""

    shown: list[tuple[str, str]] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)

    def section(self) -> str:
        """The files as the prompt gives them ('' when there are none to give)."""
        if not self.shown and not self.missing:
            return ""
        lines = [
            "The project's files the person's session read to answer this, as they were "
            "when it was asked (for reading only: change nothing, answer the question):"
        ]
        for path, text in self.shown:
            lines += ["", f"----- {path} -----", text.rstrip("\n"), f"----- end of {path} -----"]
        for path, why in self.missing.items():
            lines += ["", f"({path}: not available, {why})"]
        return "\n".join(lines)

    def lacking(self) -> str:
        """Why the replay lacks what its session read ('' when it has it all)."""
        if not self.missing:
            return ""
        names = ", ".join(sorted(self.missing))
        return f"the session read {names}, which this chat replay could not show"


def read_files(
    paths: list[str], root: Path | None, commit: str | None, session_cwd: str | None
) -> ReadFiles:
    """`paths` (relative to the session's folder) as they are at `commit` of the git
    repository `root`, or in the folder `root` itself when there is no commit (a copy
    with a follow-up's earlier edits applied)."""
    if not paths:
        return ReadFiles()
    if root is None:
        return ReadFiles(missing=dict.fromkeys(paths, "no project to read it from"))
    base = session_base(root, session_cwd)
    shown: list[tuple[str, str]] = []
    missing: dict[str, str] = {}
    room = MAX_FILES_CHARS
    for path in paths:
        rel = PurePosixPath(base, path) if base else PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts:
            missing[path] = "its path leaves the project"
            continue
        data, why = _at_commit(root, commit, rel) if commit else _on_disk(root, rel)
        if data is None:
            missing[path] = why
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            missing[path] = "it is not text"
            continue
        if room <= 0:
            missing[path] = "the files before it fill the room for files"
            continue
        text = clipped(text, room)
        room -= len(text)
        shown.append((path, text))
    return ReadFiles(shown, missing)


def clipped(text: str, room: int) -> str:
    """`text` redacted and cut to `room` characters (MAX_FILE_CHARS at most), marked
    where it was cut."""
    text = _REDACTOR.redact(text).text
    limit = min(MAX_FILE_CHARS, room)
    if len(text) > limit:
        text = text[:limit] + f"\n[… {len(text) - limit} more characters not shown]"
    return text


def _at_commit(root: Path, commit: str, rel: PurePosixPath) -> tuple[bytes | None, str]:
    kind = run_git("cat-file", "-t", f"{commit}:{rel}", cwd=root)
    if kind.returncode != 0:
        return None, f"not in the project at commit {commit[:12]}"
    if kind.stdout.strip() != b"blob":
        return None, "it is not a file"
    done = run_git("cat-file", "blob", f"{commit}:{rel}", cwd=root)
    return (done.stdout, "") if done.returncode == 0 else (None, "git could not read it")


def _on_disk(root: Path, rel: PurePosixPath) -> tuple[bytes | None, str]:
    target = root.joinpath(*rel.parts)
    try:
        if target.is_symlink() or not target.resolve().is_relative_to(root.resolve()):
            return None, "it is a link"
        return target.read_bytes(), ""
    except FileNotFoundError:
        return None, "not in the project where the replay starts"
    except OSError as exc:
        return None, f"it cannot be read ({type(exc).__name__})"
