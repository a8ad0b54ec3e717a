"""The skill as it would be on main after an adoption, without committing anything: what
the TUI's preview shows before `A`, computed by the same rebuild and merge adopt uses."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from core.skills_repo.adopt import _review  # the diff, exactly as adopt computes it
from core.skills_repo.hunks import adopted_text
from core.skills_repo.line_select import change_count, check_selection, selected_text
from core.skills_repo.plumbing import RepoCore


def adopted_preview(
    repo: RepoCore,
    staged: str,
    hunks: list[int],
    lines: Mapping[int, Collection[int]] | None = None,
) -> tuple[bytes, bytes]:
    """(the skill on main now, the skill after adopting `hunks` whole and `lines`)."""
    diff, entry, _head = _review(repo, staged, evidence=False)
    git = repo.git
    base = git.blob(diff.base, entry.path) or b""
    head = git.blob(diff.head, entry.path) or b""
    main = git.blob(repo.main_sha(), entry.path) or b""
    if lines:
        check_selection(diff.hunks, lines, diff.branch)
        by = {h.index: h for h in diff.hunks}
        selection = {i: range(1, change_count(by[i]) + 1) for i in hunks if i in by}
        selection.update(lines)
        return main, selected_text(git, base, head, main, diff.hunks, selection)
    return main, adopted_text(git, base, head, main, diff.hunks, set(hunks))
