"""A staged candidate, or one of its hunks, edited by hand and staged again.

A reviewer who would keep a hunk but for one word should not have to reject it and stage a
whole file from the shell. The edited text becomes a commit of its own on the same staged
branch, with an `Edited: by hand` trailer, so the evidence still tells what the run
proposed from what a person changed, and adopt/reject treat the branch as before.

Editing one hunk hands the editor only that hunk's lines of the candidate (its new side);
what comes back replaces exactly those lines, byte for byte, the rest of the file kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.skills_repo import adopt as adopt_mod
from core.skills_repo import repo_stager as staging
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.hunks import split_lines
from core.skills_repo.plumbing import RepoCore

EDITED_TRAILER = "Edited"
EDITED_VALUE = "by hand"


@dataclass(frozen=True)
class EditTarget:
    """What is being edited: the candidate at `head`, and the lines [start, end) of it the
    editor gets (the whole file when `hunk` is None)."""

    branch: str  # staged/<run-id>
    run_id: str
    skill: str
    head: str
    text: bytes  # the whole candidate at head
    start: int
    end: int
    hunk: int | None = None

    @property
    def region(self) -> bytes:
        return b"".join(split_lines(self.text)[self.start : self.end])

    def spliced(self, edited: bytes) -> bytes:
        """The whole candidate with the edited region in place of the old one."""
        lines = split_lines(self.text)
        after = lines[self.end :]
        if after and edited and not edited.endswith(b"\n"):
            edited += b"\n"  # an editor that drops the last newline does not join two lines
        return b"".join([*lines[: self.start], edited, *after])

    @property
    def what(self) -> str:
        return f"hunk {self.hunk} of {self.branch}" if self.hunk else self.branch


def edit_target(repo: RepoCore, staged: str, hunk: int | None = None) -> EditTarget:
    """The candidate of `staged` (or its hunk number `hunk`, as `skills diff` numbers them)."""
    diff, entry, _ = adopt_mod._review(repo, staged, evidence=False)
    _, run_id, _ = staging.resolve(repo, staged)
    text = repo.git.blob(diff.head, entry.path) or b""
    start, end = 0, len(split_lines(text))
    if hunk is not None:
        found = next((h for h in diff.hunks if h.index == hunk), None)
        if found is None:
            has = f"it has hunks 1-{len(diff.hunks)}" if diff.hunks else "it has no hunks"
            raise SkillsRepoError(f"no hunk {hunk} in {diff.branch}; {has}")
        # an empty new side (the hunk only removes) is the gap after line target_start
        start = found.target_start - 1 if found.target_length else found.target_start
        end = start + found.target_length
    return EditTarget(diff.branch, run_id, diff.skill, diff.head, text, start, end, hunk)


def stage_edit(repo: RepoCore, target: EditTarget, edited: bytes) -> str | None:
    """Stages the edited candidate on the same branch; None when the edit changed nothing
    (nothing is staged). Refused when the branch moved since `target` was read (a run
    staged a new step meanwhile): the edit was made on text that is no longer the head."""
    text = target.spliced(edited)
    if text == target.text:
        return None
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillsRepoError(
            f"the edited {target.what} is not UTF-8 text; save it as UTF-8 and edit again"
        ) from exc
    return staging.stage(
        repo,
        target.skill,
        target.run_id,
        decoded,
        subject=f"Edit {target.what} by hand",
        trailers={EDITED_TRAILER: EDITED_VALUE},
        expect_head=target.head,
    )
