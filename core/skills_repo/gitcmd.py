"""Running git so that the user's configuration cannot change what we do.

Every call goes through `GitRunner.run`, which holds one process-wide lock (gitpython is not
thread-safe, and two threads moving refs of one repo would race), ignores system and global
config, pins the options that change output or behaviour (hooks, signing, editor, colour,
line endings, quoting, diff shape), and names the git dir, work tree and index explicitly so
inherited GIT_* variables cannot point us at another repository.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

import git

from core.skills_repo.errors import GitFailed

GIT_LOCK = threading.RLock()

DEFAULT_IDENTITY = ("SkillOpt", "skillopt@localhost")

_PINNED_CONFIG = (
    "core.hooksPath=/dev/null",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.editor=true",
    "core.pager=cat",
    "color.ui=false",
    "core.quotePath=false",
    "core.fsmonitor=false",
    "core.splitIndex=false",
    "gc.auto=0",
    "merge.conflictStyle=merge",
    "i18n.commitEncoding=UTF-8",
    "i18n.logOutputEncoding=UTF-8",
    "log.showSignature=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
)
GLOBAL_ARGS: tuple[str, ...] = tuple(a for kv in _PINNED_CONFIG for a in ("-c", kv))


class GitRunner:
    def __init__(self, work_tree: Path, git_dir: Path, identity: tuple[str, str]):
        self.work_tree = work_tree
        self.git_dir = git_dir
        self.identity = identity
        self._git = git.Git(str(work_tree))

    def _env(self, index_file: Path | None) -> dict[str, str]:
        name, email = self.identity
        return {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.work_tree),
            "GIT_INDEX_FILE": str(index_file or self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_EDITOR": "true",
            "GIT_PAGER": "cat",
            "GIT_LITERAL_PATHSPECS": "1",
        }

    def call(
        self, *args: str, stdin: bytes | None = None, index_file: Path | None = None
    ) -> tuple[int, bytes, str]:
        """Run git; return (status, stdout bytes exactly as written, stderr)."""
        with GIT_LOCK, contextlib.ExitStack() as stack:
            fh = None
            if stdin is not None:  # gitpython wants a real file for stdin
                fh = stack.enter_context(tempfile.TemporaryFile())
                fh.write(stdin)
                fh.seek(0)
            status, out, err = self._git.execute(
                ["git", *GLOBAL_ARGS, *args],
                istream=fh,
                with_extended_output=True,
                with_exceptions=False,
                stdout_as_string=False,
                strip_newline_in_stdout=False,
                env=self._env(index_file),
            )
        return status, out or b"", err if isinstance(err, str) else err.decode("utf-8", "replace")

    def run(self, *args: str, stdin: bytes | None = None, index_file: Path | None = None) -> bytes:
        status, out, err = self.call(*args, stdin=stdin, index_file=index_file)
        if status != 0:
            raise GitFailed(f"git {' '.join(args[:3])} failed ({status}): {err.strip()}")
        return out

    def line(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).decode("utf-8").strip()

    def rev(self, spec: str) -> str | None:
        """Full sha of `spec`, or None if it does not resolve."""
        status, out, _ = self.call("rev-parse", "--verify", "-q", spec + "^{commit}")
        return out.decode().strip() if status == 0 else None

    def blob(self, commit: str, path: str) -> bytes | None:
        status, out, _ = self.call("cat-file", "blob", f"{commit}:{path}")
        return out if status == 0 else None

    def hash_blob(self, data: bytes) -> str:
        return self.line("hash-object", "-w", "--no-filters", "--stdin", stdin=data)
