"""Reading commits back: subjects, bodies and trailers, and the kind of each main commit."""

from __future__ import annotations

from dataclasses import dataclass

from core.skills_repo import messages
from core.skills_repo.gitcmd import GitRunner
from core.skills_repo.types import CommitEvidence, LogEntry

KINDS = ("init", "add", "adopt", "rollback")
OP_TRAILER = "Skillopt-Op"


@dataclass(frozen=True)
class Commit:
    sha: str
    date_iso: str
    author: str
    subject: str
    body: str
    trailers: dict[str, str]

    @property
    def kind(self) -> str:
        op = self.trailers.get(OP_TRAILER, "")
        return op if op in KINDS else "other"

    def evidence(self) -> CommitEvidence:
        return CommitEvidence(self.sha, self.subject, dict(self.trailers), self.body)

    def entry(self) -> LogEntry:
        return LogEntry(
            sha=self.sha,
            subject=self.subject,
            kind=self.kind,  # type: ignore[arg-type]
            trailers=dict(self.trailers),
            date_iso=self.date_iso,
            author=self.author,
            body=self.body,
        )


def commits(git: GitRunner, *revs: str, path: str | None = None) -> list[Commit]:
    """Newest first, following first parents."""
    args = ["log", "-z", "--first-parent", "--format=%H%x1f%aI%x1f%an <%ae>%x1f%B", *revs]
    if path:
        args += ["--", path]
    out = git.run(*args).decode("utf-8", "replace")
    result = []
    for record in out.split("\0"):
        if not record.strip():
            continue
        sha, date, author, message = record.lstrip("\n").split("\x1f", 3)
        subject, body, trailers = messages.parse(message)
        result.append(Commit(sha, date, author, subject, body, trailers))
    return result


def commit(git: GitRunner, sha: str) -> Commit:
    return commits(git, "-1", sha)[0]


def show(git: GitRunner, sha: str) -> str:
    out = git.run(
        "show",
        "--format=",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--text",
        "--no-renames",
        "--diff-merges=first-parent",
        sha,
    )
    return out.decode("utf-8", "replace").lstrip("\n")
