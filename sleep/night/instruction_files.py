"""The instruction files a night can improve, found where the agents read them.

`skillopt sleep init` offers these to the skills repository (each with itself as deploy
target), so a first night needs no manual setup: the project's `CLAUDE.md` and
`AGENTS.md`, its `.claude/skills/<name>/SKILL.md`, and the user's own
`~/.claude/skills/<name>/SKILL.md` and `~/.agents/skills/<name>/SKILL.md`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from core.skills_repo.types import SkillEntry


@dataclass(frozen=True)
class FoundFile:
    name: str  # the skill name it would get in the skills repository
    path: Path
    kind: str  # "project CLAUDE.md", "user skill", ...


def slug(text: str) -> str:
    """A skill (and branch) name from a folder name. Letters and digits of any script stay
    (`ünïcode-proj`), composed (NFC) so the same folder gives the same name everywhere;
    what git refs or file names cannot hold (spaces, `~^:?*[\\`, control characters,
    bytes that are not text) becomes `-`."""
    text = unicodedata.normalize("NFC", text)
    s = re.sub(r"[^\w.-]+", "-", text).strip("-.").lower()
    s = re.sub(r"\.{2,}", ".", s).removesuffix(".lock").strip("-.")
    return s or "project"


def find_instruction_files(
    project: Path, home: Path, *, claude_homes: list[Path] | None = None
) -> list[FoundFile]:
    """The project's CLAUDE.md and AGENTS.md, its skills, and the user's skills: Claude
    Code's under each Claude home given (`--claude-home`), else `~/.claude`."""
    project = Path(project).expanduser().absolute()
    home = Path(home).expanduser()
    claude_roots = [Path(h).expanduser() for h in claude_homes or []] or [home / ".claude"]
    found: list[FoundFile] = []
    base = slug(project.name)
    for filename, name in (("CLAUDE.md", base), ("AGENTS.md", f"{base}-agents")):
        if (project / filename).is_file():
            found.append(FoundFile(name, project / filename, f"project {filename}"))
    for root, kind in (
        (project / ".claude" / "skills", "project skill"),
        *((r / "skills", "user skill (Claude Code)") for r in claude_roots),
        (home / ".agents" / "skills", "user skill (Codex)"),
    ):
        for skill in sorted(root.glob("*/SKILL.md")):
            found.append(FoundFile(slug(skill.parent.name), skill, kind))
    return _unique_names(found)


def _unique_names(found: list[FoundFile]) -> list[FoundFile]:
    seen: dict[str, int] = {}
    out = []
    for f in found:
        n = seen.get(f.name, 0)
        seen[f.name] = n + 1
        out.append(f if n == 0 else FoundFile(f"{f.name}-{n + 1}", f.path, f.kind))
    return out


def not_yet_tracked(found: list[FoundFile], entries: list[SkillEntry]) -> list[FoundFile]:
    """Files no skill of the repository deploys to yet (re-running init adds nothing twice)."""
    targets = {str(Path(e.deploy_to).expanduser().absolute()) for e in entries if e.deploy_to}
    names = {e.name for e in entries}
    return [f for f in found if str(f.path) not in targets and f.name not in names]
