"""What `skillopt sleep harvest` says of each source it read: one line per root found."""

from __future__ import annotations

from sleep.harvest.run import HarvestResult


def source_lines(result: HarvestResult) -> list[str]:
    """One line per source found: where, its files (or store sessions), the sessions with
    new tasks, sub-agent sessions and skips. Sources not found are not listed."""
    lines = []
    for root in result.roots:
        if not root.exists:
            continue
        shown = str(root.path)
        files = {f.shown for f in root.sessions}
        sessions = sum(
            1 for s in result.sessions if s.file in files or s.file.startswith(shown + "::")
        )
        skips = sum(1 for k in result.skipped if k.file in files or k.file.startswith(shown))
        what = (
            f"{root.store_sessions} stored session(s)"
            if root.tool == "opencode"
            else f"{len(files)} file(s)"
        )
        sub = f", {root.subagent_files} sub-agent" if root.subagent_files else ""
        lines.append(
            f"source {root.tool} {shown}: {what}, {sessions} with new tasks{sub}, {skips} skipped"
        )
    return lines
