"""`skills.yaml` at the repo root: which skills the repo holds, where, and where each deploys.

```yaml
version: 1
skills:
  - name: reviewer
    path: reviewer/SKILL.md
    deploy_to: ~/.claude/skills/reviewer/SKILL.md   # optional, outside the repo
```
The manifest is committed like any skill, so history shows when a skill was added.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import yaml

from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.types import SkillEntry
from core.yaml_strict import safe_load_unique

MANIFEST = "skills.yaml"
_HEADER = "# SkillOpt skills manifest: name, file inside this repo, optional deploy target.\n"


def check_name(name: str) -> str:
    clean = name.strip()
    bad = (
        not clean
        or clean != name
        or len(clean) > 200
        or any(ord(c) < 32 or c in "/\\" for c in clean)
        or clean.startswith((".", "-"))
    )
    if bad:
        raise SkillsRepoError(
            f"bad skill name {name!r}: use a non-empty name without '/', '\\', control "
            "characters or a leading '.' or '-'"
        )
    return clean


def check_path(path: str) -> str:
    p = PurePosixPath(path)
    bad = (
        not path
        or p.is_absolute()
        or ".." in p.parts
        or any(ord(c) < 32 for c in path)
        or "\\" in path
        or str(p) in (MANIFEST, ".")
        or p.parts[0] in (".git", ".skillopt")
    )
    if bad:
        raise SkillsRepoError(
            f"bad skill path {path!r}: give a relative path inside the repo, e.g. NAME/SKILL.md"
        )
    return str(p)


def normalise_deploy_to(value: str | None) -> str | None:
    """Keep `~` paths as written (portable between machines); make others absolute."""
    if value is None or not value.strip():
        return None
    if value.startswith("~"):
        return value
    return str(Path(value).absolute())


def deploy_path(entry: SkillEntry) -> Path | None:
    return Path(os.path.expanduser(entry.deploy_to)) if entry.deploy_to else None


def parse(data: bytes | None) -> list[SkillEntry]:
    if data is None:
        return []
    try:
        doc = safe_load_unique(data.decode("utf-8")) or {}
        skills = doc.get("skills") or []
        return [
            SkillEntry(str(s["name"]), check_path(str(s["path"])), s.get("deploy_to") or None)
            for s in skills
        ]
    except (yaml.YAMLError, UnicodeDecodeError, AttributeError, KeyError, TypeError) as exc:
        raise SkillsRepoError(
            f"{MANIFEST} is malformed ({_one_line(exc)}); fix it on main"
        ) from exc


def _one_line(exc: Exception) -> str:
    """A YAML error's problem and line (its str() is five lines with a caret), or the
    first line of any other error."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem} at line {exc.problem_mark.line + 1}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text, byte {exc.start}"
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def dump(entries: list[SkillEntry]) -> bytes:
    skills = []
    for e in entries:
        item = {"name": e.name, "path": e.path}
        if e.deploy_to:
            item["deploy_to"] = e.deploy_to
        skills.append(item)
    body = yaml.safe_dump(
        {"version": 1, "skills": skills}, allow_unicode=True, sort_keys=False, width=1000
    )
    return (_HEADER + body).encode("utf-8")


def find(entries: list[SkillEntry], name: str) -> SkillEntry:
    for e in entries:
        if e.name == name:
            return e
    known = ", ".join(e.name for e in entries) or "none"
    raise SkillsRepoError(
        f"unknown skill {name!r} (known: {known}); add it with `skillopt skills add`"
    )
