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


def conflict_body(error: Any) -> Text:
    difference = str(getattr(error, "difference", "") or "")
    parts = [Text(str(error)), Text("")]
    if difference.strip():
        parts += [
            Text("What the target holds now, against what we last deployed:", "dim"),
            styled_diff(difference),
        ]
    else:
        parts.append(Text("(no difference text)", "dim"))
    parts += [Text(""), Text("Overwrite replaces the hand edit; Cancel changes nothing.", "bold")]
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
