"""What the staged commits say for themselves: scores before/after, items, rationales and
(for Sleep) source sessions, read from the commit trailers."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

PATH_ROOM = 18  # characters of a deploy path the side column shows without wrapping


def short_path(path: str | None, room: int = PATH_ROOM) -> str:
    """The end of a long path (its file name matters most), marked with … where cut, so
    it never wraps mid-name in the side column."""
    if not path or len(path) <= room:
        return path or ""
    return "…" + path[-(room - 1) :]


def evidence_text(diff: Any, deploy_to: str | None, decisions: dict[int, str]) -> Text:
    parts: list[Text] = []
    total = len(decisions) or len(diff.hunks)  # review items (a split hunk is several)
    approved = sum(1 for v in decisions.values() if v == "approved")
    rejected = sum(1 for v in decisions.values() if v == "rejected")
    adopted = sum(1 for v in decisions.values() if v == "adopted")
    partial = sum(1 for v in decisions.values() if v == "partial")
    parts.append(Text.assemble(("skill ", "dim"), (diff.skill, "bold")))
    parts.append(Text.assemble(("deploy ", "dim"), short_path(deploy_to) or "— (repo only)"))
    parts.append(
        Text.assemble(
            ("hunks ", "dim"),
            f"{total}  ",
            (f"y {approved}", "green"),
            "  ",
            (f"n {rejected}", "red"),
            (f"  ~ {partial}" if partial else "", "yellow"),
            f"  ? {total - approved - rejected - adopted - partial}",
            (f"  on main {adopted}" if adopted else "", "cyan"),
        )
    )
    for ev in diff.evidence:
        parts.append(Text(""))
        parts.append(Text.assemble((ev.sha[:7], "yellow"), " ", (ev.subject, "bold")))
        for key, value in ev.trailers.items():
            parts.append(Text.assemble((f"  {key}: ", "cyan"), str(value)))
        # The body carries the edit rationales: the "why" a reviewer most needs.
        for line in ev.body.strip().splitlines():
            parts.append(Text(f"  {line}", style="italic"))
    return Text("\n").join(parts)


class EvidencePanel(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._body = Static(Text("Select a staged branch.", style="dim"))

    def compose(self):
        yield self._body

    def show(self, diff: Any, deploy_to: str | None, decisions: dict[int, str]) -> None:
        self._body.update(evidence_text(diff, deploy_to, decisions))

    def clear(self, text: str) -> None:
        self._body.update(Text(text, style="dim"))
