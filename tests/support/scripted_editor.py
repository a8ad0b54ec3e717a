"""A stand-in for $EDITOR, named as a test double: a script that edits the file it is given
as a person would (replace one text with another), or exits non-zero, or changes nothing.

`scripted_editor(tmp, replace=("old", "new"))` returns the $EDITOR value to set; the script
records the text it was handed beside itself (`seen.md`), so a test can check what the
editor got.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

SCRIPT = """
import json, sys
from pathlib import Path
here = Path(__file__).parent
plan = json.loads((here / "plan.json").read_text())
path = Path(sys.argv[-1])
text = path.read_text(encoding="utf-8")
(here / "seen.md").write_text(text, encoding="utf-8")
if plan["ask"]:  # as a terminal editor: it owns the terminal until the person answers
    print("SCRIPTED EDITOR: type ok and Enter to save", flush=True)
    if sys.stdin.readline().strip() != "ok":
        sys.exit(1)
for old, new in plan["replace"]:
    text = text.replace(old, new)
path.write_text(text, encoding="utf-8")
sys.exit(plan["exit"])
"""


def scripted_editor(
    folder: Path,
    *,
    replace: list[tuple[str, str]] = (),
    exit_status: int = 0,
    ask: bool = False,
) -> str:
    """`ask`: the editor prints a prompt and saves only once "ok" is typed on its stdin
    (what a real terminal test types into the terminal the app handed over)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "editor.py").write_text(SCRIPT)
    plan = {"replace": replace, "exit": exit_status, "ask": ask}
    (folder / "plan.json").write_text(json.dumps(plan))
    return shlex.join([sys.executable, str(folder / "editor.py")])


def seen(folder: Path) -> str:
    """The text the editor was handed."""
    return (folder / "seen.md").read_text(encoding="utf-8")
