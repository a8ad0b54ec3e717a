"""The skills repository's git: `core.safe_git` (nothing the repository holds runs), under one
process-wide lock (two threads moving refs of one repo would race), with the git dir, work
tree and index named explicitly so nothing inherited points us at another repository.
"""

from __future__ import annotations

import threading
from pathlib import Path

from core.safe_git import run_git
from core.skills_repo.errors import GitFailed

GIT_LOCK = threading.RLock()


class GitRunner:
    def __init__(self, work_tree: Path, git_dir: Path, identity: tuple[str, str]):
        self.work_tree = work_tree
        self.git_dir = git_dir
        self.identity = identity

    def call(
        self, *args: str, stdin: bytes | None = None, index_file: Path | None = None
    ) -> tuple[int, bytes, str]:
        """Run git; return (status, stdout bytes exactly as written, stderr)."""
        with GIT_LOCK:
            done = run_git(
                *args,
                git_dir=self.git_dir,
                work_tree=self.work_tree,
                cwd=self.work_tree,
                stdin=stdin,
                index_file=index_file,
                identity=self.identity,
            )
        return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")

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
