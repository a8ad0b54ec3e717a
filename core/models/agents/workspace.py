"""A fresh workspace per agent run, with the skill where the agent really reads it.

Why a copy: the agent edits files, runs commands, and may be killed half-way. It works on a
temporary copy of the item's files, or of a git project's tree at a recorded commit (never
the user's live checkout), the diff against that original is part of the trajectory, and
the copy is removed afterwards unless kept for debugging.

Placements (config `skill_placement`):
  claude_skill          .claude/skills/<name>/SKILL.md (listed to Claude Code, loaded by
                        its Skill tool) — the default for claude_code
  claude_md             CLAUDE.md at the workspace root (read into every request)
  append_system_prompt  `claude --append-system-prompt <skill>`
  agents_md             AGENTS.md at the workspace root (Codex, pi, OpenCode and Copilot
                        read it) — the default for all four
  codex_skill           .agents/skills/<name>/SKILL.md (Codex's repository skills; pi
  agents_skill          reads the same folder, under either name)
  pi_skill              .pi/skills/<name>/SKILL.md (pi's own project skills)
  opencode_skill        .opencode/skills/<name>/SKILL.md (OpenCode's project skills)
  copilot_skill         .github/skills/<name>/SKILL.md (Copilot CLI's project skills)
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.models.types import BadRequestError
from core.safe_git import one_line, run_git
from core.tree_extract import extract_tree

CLAUDE_PLACEMENTS = ("claude_skill", "claude_md", "append_system_prompt")
PLACEMENTS = {
    "claude_code": CLAUDE_PLACEMENTS,
    "codex": ("agents_md", "codex_skill"),
    "pi": ("agents_md", "agents_skill", "codex_skill", "pi_skill"),
    "opencode": ("agents_md", "opencode_skill"),
    "copilot": ("agents_md", "copilot_skill"),
}
DEFAULT_PLACEMENT = {
    agent: "claude_skill" if agent == "claude_code" else "agents_md" for agent in PLACEMENTS
}
_SKILL_FOLDERS = {
    "claude_skill": ".claude/skills",
    "codex_skill": ".agents/skills",
    "agents_skill": ".agents/skills",
    "pi_skill": ".pi/skills",
    "opencode_skill": ".opencode/skills",
    "copilot_skill": ".github/skills",
}
_MAX_DIFF_CHARS = 50_000


@dataclass(frozen=True)
class Placement:
    """Where the skill went: files written into the workspace (left out of the diff) and
    arguments for the CLI."""

    files: tuple[str, ...]
    args: tuple[str, ...]


def resolve_placement(agent: str, placement: str, *, setting: str) -> str:
    chosen = DEFAULT_PLACEMENT[agent] if placement == "auto" else placement
    allowed = PLACEMENTS[agent]
    if chosen not in allowed:
        raise BadRequestError(
            f"{setting}.skill_placement {placement!r} is not read by {agent}; "
            f"use auto or one of {', '.join(allowed)}"
        )
    return chosen


def slug(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    return cleaned or "skill"


def skill_file_text(name: str, skill_text: str) -> str:
    """A SKILL.md: the skill itself if it carries front matter, else ours in front of it
    (both agents list a skill by its front matter's name and description)."""
    if skill_text.lstrip().startswith("---"):
        return skill_text
    description = "How to do the tasks in this repository; read it before starting."
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{skill_text}"


def place_skill(workspace: Path, placement: str, name: str, skill_text: str) -> Placement:
    """Put the skill into `workspace` (or the CLI's arguments). An empty skill is placed
    nowhere: the baseline run has no skill at all."""
    if not skill_text.strip():
        return Placement((), ())
    name = slug(name)
    if placement == "append_system_prompt":
        return Placement((), ("--append-system-prompt", skill_text))
    folder = _SKILL_FOLDERS.get(placement)
    relative = (
        f"{folder}/{name}/SKILL.md"
        if folder
        else {"claude_md": "CLAUDE.md", "agents_md": "AGENTS.md"}[placement]
    )
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    is_skill = folder is not None
    target.write_text(skill_file_text(name, skill_text) if is_skill else skill_text, "utf-8")
    return Placement((relative,), ())


@dataclass(frozen=True)
class PristineTree:
    """The files an agent starts from, and what their copy left out (one note each: a
    committed symlink out of the project is skipped, never fatal)."""

    root: Path
    left_out: tuple[str, ...] = ()


@contextlib.contextmanager
def pristine_tree(files: Path, commit: str | None) -> Iterator[PristineTree]:
    """The files the agent starts from: `files` itself, or the tree of `commit` in the git
    repository `files`, extracted to a temporary folder (removed on exit)."""
    if not files.is_dir():
        raise BadRequestError(f"agent task files {files} is not a folder")
    if commit is None:
        yield PristineTree(files)
        return
    tree = Path(tempfile.mkdtemp(prefix="skillopt-agent-tree-"))
    try:
        archive = run_git("archive", "--format=tar", commit, cwd=files)
        if archive.returncode != 0:
            why = one_line(archive.stderr)
            raise BadRequestError(f"cannot take commit {commit!r} of {files}: {why}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            left_out = extract_tree(tar, tree)
        yield PristineTree(tree, tuple(left_out))
    finally:
        shutil.rmtree(tree, ignore_errors=True)


@contextlib.contextmanager
def fresh_workspace(files: Path, *, keep: bool):
    """A temporary copy of the folder `files`, removed on exit unless `keep`."""
    workspace = Path(tempfile.mkdtemp(prefix="skillopt-agent-ws-"))
    try:
        shutil.copytree(files, workspace, dirs_exist_ok=True, symlinks=True)
        yield workspace
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)


def _tree(root: Path, skip: set[str]) -> dict[str, Path]:
    """The files of `root` a diff compares: not caches, and not a git directory (a replay
    that reads the history works in a copy holding one: sleep/night/history.py)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        parts = set(path.relative_to(root).parts)
        if path.is_file() and rel not in skip and not parts & {"__pycache__", ".git"}:
            out[rel] = path
    return out


def _lines(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        return path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (UnicodeDecodeError, OSError):
        return ["<binary file>\n"]


def workspace_diff(original: Path, workspace: Path, placement: Placement) -> str:
    """A unified diff of what the agent changed (the skill files we placed left out)."""
    before = _tree(original, set())
    after = _tree(workspace, set(placement.files))
    chunks: list[str] = []
    for rel in sorted(set(before) | set(after)):
        old, new = _lines(before.get(rel)), _lines(after.get(rel))
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                old,
                new,
                fromfile=f"a/{rel}" if rel in before else "/dev/null",
                tofile=f"b/{rel}" if rel in after else "/dev/null",
            )
        )
    text = "".join(chunks)
    if len(text) > _MAX_DIFF_CHARS:
        text = text[:_MAX_DIFF_CHARS] + "\n... (diff truncated)\n"
    return text
