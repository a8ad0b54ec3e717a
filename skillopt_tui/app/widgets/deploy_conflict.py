"""The modal for a hand-edited deploy target: what differs, then Cancel or Overwrite.

`skillopt skills adopt/rollback` refuse and suggest --force; here the same choice is a key,
made after seeing the difference (what the person would lose by overwriting)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from skillopt_tui.app.widgets.confirm_dialog import Choice, ConfirmDialog
from skillopt_tui.app.widgets.word_diff import styled_diff

CHOICES = (
    Choice("c", "Cancel", "cancel", "primary"),
    Choice("o", "Overwrite", "overwrite", "error"),
)


def changed_lines(difference: str) -> int:
    """Lines that differ: per hunk the larger of lines removed and added (an edited line
    is one line, not a removal and an addition)."""
    total, added, removed = 0, 0, 0
    for ln in difference.splitlines():
        if ln.startswith("@@"):
            total, added, removed = total + max(added, removed), 0, 0
        elif ln[:1] == "+" and not ln.startswith("+++"):
            added += 1
        elif ln[:1] == "-" and not ln.startswith("---"):
            removed += 1
    return total + max(added, removed)


def conflict_body(error: Any) -> Text:
    """In this dialog's words: its keys, not the CLI's --force; plurals done right."""
    difference = str(getattr(error, "difference", "") or "")
    target = getattr(error, "target", "") or "the deploy target"
    n = changed_lines(difference)
    differ = f"{n} line differs" if n == 1 else f"{n} lines differ"
    parts = [
        Text.assemble(
            (str(target), "bold"),
            f" was edited outside SkillOpt since it was last deployed ({differ}).",
        ),
        Text(""),
    ]
    if difference.strip():
        parts += [
            Text("What the target holds now, against what we last deployed:", "dim"),
            styled_diff(difference),
        ]
    else:
        parts.append(Text("(no difference text)", "dim"))
    parts += [
        Text(""),
        Text(
            "Overwrite (o) replaces the hand edit; Cancel (c) changes nothing (fold the edit "
            "into the skill first to keep it).",
            "bold",
        ),
    ]
    return Text("\n").join(parts)


def deploy_conflict_dialog(action: str, error: Any) -> ConfirmDialog:
    return ConfirmDialog(
        f"Cannot {action}: the deploy target was edited by hand", conflict_body(error), CHOICES
    )


def ask_overwrite(screen: Any, message: Any) -> None:
    """Shows the dialog for a DeployConflict message; Overwrite runs its retry."""

    def answered(choice: str | None) -> None:
        if choice == "overwrite":
            message.retry()

    screen.app.push_screen(deploy_conflict_dialog(message.action, message.error), answered)
