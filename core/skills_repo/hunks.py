"""The net diff of a staged branch as numbered hunks, and rebuilding text from a subset.

git computes the diff (pinned options, so numbering is stable for a given base and head);
unidiff parses it. The new text is rebuilt from byte positions, taking each chosen hunk's
lines from the staged file itself rather than from the parsed diff text: CRLF endings and a
missing final newline survive exactly, whatever the diff parser does with line ends.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from unidiff import PatchSet

from core.skills_repo.errors import AdoptConflict, GitFailed
from core.skills_repo.gitcmd import GitRunner
from core.skills_repo.types import Hunk

DIFF_ARGS = (
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--text",
    "--no-renames",
    "--unified=3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: split on LF only, each keeping its ending."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def net_hunks(git: GitRunner, base: str, head: str, path: str) -> list[Hunk]:
    raw = git.run(*DIFF_ARGS, base, head, "--", path)
    if not raw.strip():
        return []
    patch = PatchSet(raw.decode("utf-8", "replace"))
    hunks: list[Hunk] = []
    for pf in patch:
        for h in pf:
            lines = []
            for ln in h:
                value = ln.value.rstrip("\n")
                value = value[:-1] if value.endswith("\r") else value
                lines.append(f"{ln.line_type}{value}")
            header = (
                f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
            )
            if h.section_header:
                header += f" {h.section_header}"
            hunks.append(
                Hunk(
                    index=len(hunks) + 1,
                    file=path,
                    header=header,
                    lines=lines,
                    added=h.added,
                    removed=h.removed,
                    source_start=h.source_start,
                    source_length=h.source_length,
                    target_start=h.target_start,
                    target_length=h.target_length,
                )
            )
    return hunks


def apply_hunks(base: bytes, head: bytes, hunks: list[Hunk], chosen: set[int]) -> bytes:
    """`base` with the chosen hunks of the base→head diff applied, byte-exact."""
    src, dst = split_lines(base), split_lines(head)
    out: list[bytes] = []
    pos = 0
    for h in sorted(hunks, key=lambda x: x.index):
        if h.index not in chosen:
            continue
        s0 = h.source_start - 1 if h.source_length else h.source_start
        t0 = h.target_start - 1 if h.target_length else h.target_start
        out.extend(src[pos:s0])
        out.extend(dst[t0 : t0 + h.target_length])
        pos = s0 + h.source_length
    out.extend(src[pos:])
    result = b"".join(out)
    if chosen >= {h.index for h in hunks} and result != head:
        raise GitFailed("internal error: applying every hunk did not reproduce the staged file")
    return result


def merge3(git: GitRunner, ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    """Three-way merge via `git merge-file`; returns (text, number of conflicts)."""
    if ours in (base, theirs):
        return theirs, 0
    if theirs == base:
        return ours, 0
    tmpdir = git.git_dir / "skillopt"
    tmpdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmpdir) as d:
        files = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            f = Path(d) / name
            f.write_bytes(data)
            files.append(str(f))
        status, out, err = git.call(
            "merge-file", "-p", "-L", "main", "-L", "base", "-L", "staged", *files
        )
    if status < 0 or status > 127:
        raise GitFailed(f"git merge-file failed ({status}): {err.strip()}")
    return out, status


def adopted_text(
    git: GitRunner, base: bytes, head: bytes, main: bytes, hunks: list[Hunk], chosen: set[int]
) -> bytes:
    """The skill text for main: chosen hunks applied, merged with main's own changes since
    the branch was staged. Refuses (naming the hunks) where the merge is not clean."""
    theirs = apply_hunks(base, head, hunks, chosen)
    merged, conflicts = merge3(git, main, base, theirs)
    if not conflicts:
        return merged
    bad = [
        i for i in sorted(chosen) if merge3(git, main, base, apply_hunks(base, head, hunks, {i}))[1]
    ] or sorted(chosen)
    names = ", ".join(str(i) for i in bad)
    raise AdoptConflict(
        f"hunk {names} conflicts with changes made on main since the branch was staged; "
        "adopt the other hunks (--hunks) or re-stage from the current main",
        bad,
    )


def mark_on_main(
    git: GitRunner, base: bytes, head: bytes, main: bytes, hunks: list[Hunk]
) -> list[Hunk]:
    """`hunks` with `on_main` set where adopting that hunk alone onto `main` would leave it
    unchanged: the same test `adopt` uses to refuse ("already on main"), so what review
    shows as adopted is exactly what adopt would call a no-op. `conflicts` is set where
    that merge is not clean, so review can mark the hunk before anyone tries to adopt it."""
    if main == base:
        return hunks  # main has not moved since the branch was staged: nothing is on it
    marked = []
    for h in hunks:
        merged, conflicts = merge3(git, main, base, apply_hunks(base, head, hunks, {h.index}))
        marked.append(
            replace(h, on_main=not conflicts and merged == main, conflicts=bool(conflicts))
        )
    return marked
