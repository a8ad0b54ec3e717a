"""What a staged Sleep edit traces to: the preference it addresses, the sessions (agent,
date) that preference was corrected in, and any project file it names that the person's
corrections never mentioned.

Why per edit: a night's commit that lists every session of the night under every rule
says nothing about where a rule came from; a reviewer adopting "use logging, not print"
wants the four sessions where they said so. And a rule is the person's preference in
general words: "use the logging module" serves every project, "`billing/report.py` uses
`log.debug`" copies one project's facts into a rule, which the person never asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.safe_git import run_git
from core.skills_repo.messages import quoted_line
from sleep.mine.preferences import Preference
from sleep.mine.tasks import MinedTask
from sleep.night.preference_gate import named_preferences

# a word that reads as a file: a path, or a name with an extension (report.py, Makefile)
_FILE_WORD = re.compile(r"[\w./-]*\w\.[A-Za-z]{1,5}\b|[\w.-]+/[\w./-]+|\b(?:Makefile|Dockerfile)\b")
_MAX_FILES = 5000  # a project's files looked at for names (a huge tree is cut, not read)


@dataclass
class EditTrace:
    """One staged edit and what it traces to."""

    index: int  # 1-based, as the commit numbers the edits
    op: str
    content: str
    preferences: list[Preference] = field(default_factory=list)
    project_facts: list[str] = field(default_factory=list)  # files named, never corrected

    @property
    def session_ids(self) -> list[str]:
        """The sessions its preferences were corrected in, first said first."""
        return list(self._sessions())

    @property
    def sessions(self) -> list[str]:
        """The same, each as "agent:session (agent, date)"."""
        return list(self._sessions().values())

    def _sessions(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for pref in self.preferences:
            for o in pref.occurrences:
                out.setdefault(o.session, f"{o.session} ({o.agent}, {(o.date or '?')[:10]})")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "edit": self.index,
            "op": self.op,
            "content": self.content,
            "preferences": [{"id": p.id, "name": p.name, "text": p.text} for p in self.preferences],
            "sessions": self.sessions,
            "project_facts": self.project_facts,
        }


def trace_edits(
    edits: Sequence[Mapping[str, Any]],
    preferences: Iterable[Preference],
    corrected: Mapping[str, str],
    files: frozenset[str],
) -> list[EditTrace]:
    """Each edit with the preferences its rationale names and the project files its
    content names that its preferences' corrections (`corrected`: id → their words) do not."""
    by_id = {p.id: p for p in preferences}
    out = []
    for i, edit in enumerate(edits, 1):
        prefs = [by_id[p] for p in named_preferences(str(edit.get("rationale", ""))) if p in by_id]
        content = str(edit.get("content", ""))
        said = " ".join(corrected.get(p.id, "") for p in prefs)
        facts = [f for f in names_files(content, files) if not _mentions(said, f)]
        out.append(EditTrace(i, str(edit.get("op", "edit")), content, prefs, facts))
    return out


def names_files(text: str, files: frozenset[str]) -> list[str]:
    """The words of `text` that name a file of the project (by path or by file name)."""
    found = []
    for word in _FILE_WORD.findall(text):
        word = word.strip("./")
        if word and (word in files or Path(word).name in files) and word not in found:
            found.append(word)
    return found


def _mentions(said: str, file: str) -> bool:
    return Path(file).name.lower() in said.lower()


def project_files(project: Path | None) -> frozenset[str]:
    """The project's files, by path and by file name: git's list, else a bounded walk."""
    if project is None or not Path(project).is_dir():
        return frozenset()
    root = Path(project)
    done = run_git("ls-files", "-z", cwd=root)
    if done.returncode == 0 and done.stdout:
        paths = [p for p in done.stdout.decode(errors="replace").split("\0") if p][:_MAX_FILES]
    else:
        paths = []
        for path in root.rglob("*"):
            if len(paths) >= _MAX_FILES:
                break
            if path.is_file() and ".git" not in path.parts:
                paths.append(path.relative_to(root).as_posix())
    return frozenset(paths) | frozenset(Path(p).name for p in paths)


def corrected_words(
    tasks: Iterable[MinedTask], preferences: Iterable[Preference]
) -> dict[str, str]:
    """Each preference's corrections, in the person's words (to tell a project file they
    named from one a rule copied in)."""
    texts = {(t.id, c.session, c.date): c.text for t in tasks for c in t.corrections}
    return {
        p.id: " ".join(texts.get((o.task, o.session, o.date), "") for o in p.occurrences)
        for p in preferences
    }


def trace_notes(traces: Sequence[EditTrace]) -> str:
    """The commit body's paragraph: each edit, the preference it addresses (by its name,
    as night.json and status show it: a raw message reads as noise), its sessions, and a flag where it names a project file the corrections did not."""
    lines = ["Each edit and the preference it addresses:"]
    for t in traces:
        said = "; ".join(f'"{quoted_line(p.name, 100)}"' for p in t.preferences) or "(none)"
        lines.append(f'{t.index}. {t.op} "{quoted_line(t.content, 80)}": addresses {said}')
        if t.sessions:
            lines.append("   corrected in " + quoted_line("; ".join(t.sessions), 600))
        if t.project_facts:
            lines.append("   " + fact_flag(t))
    return "\n".join(lines)


def fact_flag(trace: EditTrace) -> str:
    return (
        f"FLAGGED: edit {trace.index} names project file(s) {', '.join(trace.project_facts)} "
        "that its preference's corrections never mention; a rule should state the "
        "person's preference in general words"
    )


def trace_trailers(traces: Sequence[EditTrace]) -> dict[str, str]:
    """`Edit-N-Preference` and `Edit-N-Sessions` per edit (one line each)."""
    out = {}
    for t in traces:
        if t.preferences:
            out[f"Edit-{t.index}-Preference"] = "; ".join(
                quoted_line(p.name, 120) for p in t.preferences
            )
            out[f"Edit-{t.index}-Sessions"] = "; ".join(t.sessions)
        if t.project_facts:
            out[f"Edit-{t.index}-Names-Project-Files"] = ", ".join(t.project_facts)
    return out
