"""Errors a user can act on when working with a skills repository.

Every one is a `UserError`, so faces print it as one line; the few that carry more (the
difference at a hand-edited deploy target) keep it in an attribute for the face to show.
"""

from __future__ import annotations

from core.errors import UserError


class SkillsRepoError(UserError):
    """Not a skills repo, unknown skill or branch, bad name: fix the input and retry."""


class SkillsRepoBusy(SkillsRepoError):
    """Another process holds the repository lock."""


class DirtyTree(SkillsRepoError):
    """The working tree has changes we would overwrite or fold into our commit."""


class AdoptConflict(SkillsRepoError):
    """`main` moved since the branch was staged and a chosen hunk does not merge cleanly."""

    def __init__(self, message: str, hunks: list[int]):
        super().__init__(message)
        self.hunks = hunks


class DeployTargetChanged(SkillsRepoError):
    """The deploy target no longer holds what we last deployed (edited by hand)."""

    def __init__(self, message: str, target: str, difference: str):
        super().__init__(message)
        self.target = target
        self.difference = difference


class GitFailed(RuntimeError):
    """git itself failed where it should not: a bug or a broken repository, not user input."""
