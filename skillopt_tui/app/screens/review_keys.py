"""Review's keys (git add -p / lazygit habits), its help text and its empty-state text."""

from __future__ import annotations

from textual.binding import Binding

HELP = (
    "j/k move · J/K next/previous undecided · y approve · n reject (both move on) · "
    "a approve all · s split the hunk · space choose lines (then j/k, space, v range, esc) · "
    "u undo · p preview main after adopting · / search · A adopt (asks first) · "
    "e edit the hunk in $EDITOR, E the whole candidate (staged as a new commit, marked "
    "edited by hand) · "
    "U undo the last adopt (a rollback of exactly what it adopted; asks first) · "
    "r reject the whole branch (asks first) · [ ] previous/next staged branch · "
    "i branches and evidence (under 80 columns, where they are hidden). "
    "Decisions are kept per branch until you quit."
)
NOTHING_STAGED = (
    "Nothing staged: no branch awaits review.\n\n"
    "A training run stages its best candidate here:\n"
    "  skillopt train -c CONFIG --skills-repo REPO --skill NAME\n"
    "(or press n on Home). To stage a file by hand:\n"
    "  skillopt skills stage NAME --from FILE -m 'why'"
)

# while choosing lines only these act (and show in the footer); the rest wait for esc
LINE_MODE_ACTIONS = {"move", "line_choose", "line_range", "lines_done", "undo", "whole", "help"}
LINE_MODE_ONLY = {"line_choose", "line_range", "lines_done"}

DIFF_ACTIONS = {
    "decide",
    "approve_all",
    "adopt",
    "reject_branch",
    "split",
    "lines",
    "range",
    "undo",
    "undecided",
    "preview",
    "search",
    "whole",
    "edit",
}


REVIEW_KEYS = [
    # a line-mode key comes just before the key it shares: where enabled it takes the key
    # (check_action), so the footer shows line-mode keys only while choosing lines
    Binding("escape", "lines_done", "Done", tooltip="Stop choosing lines (choices are kept)"),
    Binding(
        "escape",
        "back",
        "Back",
        tooltip="Leave Review (its decisions are kept for the session)",
    ),
    # not priority: with the branch list focused its own ↑/↓ move in the list
    Binding("j,down", "move(1)", "Move", key_display="j/k", tooltip="Next hunk (or line)"),
    Binding(
        "k,up",
        "move(-1)",
        "Previous hunk",
        show=False,
        key_display="k",
        tooltip="Previous hunk (or line, while choosing lines)",
    ),
    Binding("J", "undecided(1)", "Next undecided", show=False, tooltip="Next undecided hunk"),
    Binding("K", "undecided(-1)", "Prev undecided", show=False, tooltip="Previous undecided hunk"),
    Binding(
        "y",
        "decide('approved')",
        "Approve",
        tooltip="Approve the current hunk and move to the next",
    ),
    Binding(
        "n",
        "decide('rejected')",
        "Reject",
        tooltip="Reject the current hunk and move to the next",
    ),
    # A before the other keys: the narrowest footer still shows it
    Binding(
        "A",
        "adopt",
        "Adopt",
        tooltip="Commit the approved hunks on main and deploy (asks first)",
    ),
    Binding(
        "a", "approve_all", "All", show=False, tooltip="Approve every hunk not already on main"
    ),
    Binding("s", "split", "Split", tooltip="Split the hunk into its separate changes"),
    Binding("space", "line_choose", "Choose", tooltip="Choose or drop the line under >"),
    Binding(
        "space",
        "lines",
        "Lines",
        tooltip="Choose lines of the hunk (space again toggles the line under the cursor)",
    ),
    Binding("v", "line_range", "Range", tooltip="Start or end a range of lines"),
    Binding("v", "range", "Range", show=False, tooltip="Start or end a range of lines"),
    Binding("u", "undo", "Undo", show=False, tooltip="Undo the last decision"),
    Binding(
        "e",
        "edit(False)",
        "Edit",
        show=False,
        tooltip="Edit this hunk in $EDITOR; staged as a new commit marked edited by hand",
    ),
    Binding(
        "E",
        "edit(True)",
        "Edit all",
        show=False,
        tooltip="Edit the whole candidate in $EDITOR; staged as a new commit",
    ),
    Binding("p", "preview", "Preview", show=False, tooltip="The skill after adopting"),
    Binding("slash", "search", "Search", show=False, tooltip="Find a hunk by its text"),
    Binding("w", "whole", "Whole lines", show=False, tooltip="Show cut long lines whole"),
    Binding(
        "r",
        "reject_branch",
        "Reject branch",
        show=False,
        tooltip="Archive the whole staged branch under rejected/ (asks first)",
    ),
    Binding(
        "right_square_bracket",
        "branch(1)",
        "Next branch",
        show=False,
        tooltip="Show the next staged branch",
    ),
    Binding(
        "left_square_bracket",
        "branch(-1)",
        "Prev branch",
        show=False,
        tooltip="Show the previous staged branch",
    ),
    Binding(
        "U",
        "undo_adopt",
        "Undo adopt",
        tooltip="Roll back the last adoption made here, exactly what it adopted (asks first)",
    ),
    Binding(
        "i",
        "evidence",
        "Evidence",
        tooltip="Under 80 columns: show the branches and evidence instead of the hunks",
    ),
    Binding("question_mark", "help", "Help", tooltip="Every key of this screen"),
]
