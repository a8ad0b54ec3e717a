"""Which skill a night's tasks improve: a file the agent that made the task will read.

Each agent reads its own instruction files: Claude Code reads CLAUDE.md and
`.claude/skills/*`; Codex, and every other agent that reads AGENTS.md (pi, OpenCode,
Copilot CLI, VS Code Copilot Chat, Cursor: `AGENTS_MD_READERS`), reads AGENTS.md and
`.agents/skills/*`; pi, OpenCode and Copilot CLI also read their own skill folders
(`.pi/skills`, `.opencode/skills`, `.github/skills`: `OWN_SKILL_FOLDERS`), which no other
agent reads. A skill's readers follow from where it is deployed; a skill deployed
nowhere we recognise may be read by any agent. A session is routed by the first rule
that applies:

1. `--skill NAME` sends everything to one skill (an explicit override);
2. the skill the session named in its transcript, when the repository holds it and the
   session's agent reads it: a skill it loaded (`skills` in the harvest, by repository
   name or deploy folder) or a skill deployed to a file it read (`skill_files`,
   sleep/harvest/skills_used.py);
3. the project's main file for the session's agent: the skill deployed to
   `<project>/CLAUDE.md` for Claude Code, to `<project>/AGENTS.md` for the others;
4. the repository's only skill, when the session's agent reads it.

A session no rule places is left out (counted, never sent to a file its agent does not
read). Each route says which rules filled it: that is the staged commit's `Routed-By`.
A skill's gate then uses only tasks from agents that read it (`Route.accepts`).

A project with both main files (CLAUDE.md and AGENTS.md) learns a need once for both
(`sibling_files`): each file's night trains on both files' tasks, and a file whose own
agent had no session tonight is still proposed the need (`BY_SIBLING`), each gated only
on its own agent's tasks.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.skills_repo.types import SkillEntry

CLAUDE_CODE = "claude"  # the harvest's source name of Claude Code
AGENTS_MD = "agents"  # Codex and every other reader of AGENTS.md
MAIN_FILES = {CLAUDE_CODE: ("CLAUDE.md", ".claude/CLAUDE.md"), AGENTS_MD: ("AGENTS.md",)}

BY_FLAG = "--skill"
BY_TRANSCRIPT = "skill named in the transcripts"
BY_MAIN_FILE = {CLAUDE_CODE: "Claude Code reads CLAUDE.md", AGENTS_MD: "Codex reads AGENTS.md"}
# The harvest's sources that read AGENTS.md (formats/more-agents.md), by the name the
# route's Routed-By gives them.
AGENTS_MD_READERS = {
    "codex": "Codex",
    "pi": "pi",
    "opencode": "OpenCode",
    "copilot": "Copilot CLI",
    "vscode": "VS Code Copilot Chat",
    "cursor": "Cursor",
}


# Each agent's own skill folder (core/models/agents/workspace.py places skills there): a
# skill deployed under it is read by that agent only, not by every AGENTS.md reader.
OWN_SKILL_FOLDERS = {
    ".pi/skills": "pi",
    ".opencode/skills": "opencode",
    ".github/skills": "copilot",
}


def main_file_rule(source: str | None) -> str:
    """The Routed-By text of rule 3 for a session of this source."""
    if family(source) == CLAUDE_CODE:
        return BY_MAIN_FILE[CLAUDE_CODE]
    return f"{AGENTS_MD_READERS.get(source or '', 'Codex')} reads AGENTS.md"


BY_ONLY_SKILL = "the repository's only skill"
BY_SIBLING = "learned from the project's other agents' sessions too; gated on its own agent's tasks"


def family(source: str | None) -> str:
    """Which instruction files a session's agent reads, from the harvest's `source`."""
    return CLAUDE_CODE if source == CLAUDE_CODE else AGENTS_MD


def readers(entry: SkillEntry) -> frozenset[str] | None:
    """The agents that read a skill, from its deploy target; None: not known (any)."""
    if not entry.deploy_to:
        return None
    target = Path(os.path.normpath(os.path.expanduser(entry.deploy_to)))
    if target.name == "CLAUDE.md" or ".claude" in target.parts:
        return frozenset({CLAUDE_CODE})
    if target.name == "AGENTS.md" or {".agents", ".codex"} & set(target.parts):
        return frozenset({AGENTS_MD})
    for folder, source in OWN_SKILL_FOLDERS.items():
        if _under(target, folder):
            return frozenset({source})
    return None


def _under(target: Path, folder: str) -> bool:
    parts, want = target.parts, tuple(folder.split("/"))
    return any(parts[i : i + len(want)] == want for i in range(len(parts)))


def _reads(entry: SkillEntry, agent: str, source: str | None = None) -> bool:
    """Whether a session of this family (and harvest source) reads the skill."""
    known = readers(entry)
    return known is None or agent in known or (source or "") in known


@dataclass
class Route:
    skill: str
    rules: list[str] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    # The agents whose tasks may reach this skill's gate; None: any (unknown or --skill).
    agents: frozenset[str] | None = None

    @property
    def routed_by(self) -> str:
        return "; ".join(self.rules)

    def add(self, rule: str, session: dict[str, Any]) -> None:
        if rule not in self.rules:
            self.rules.append(rule)
        self.sessions.append(session)

    def accepts(self, source_sessions: list[str]) -> bool:
        """Whether a task seen in these sessions (`source:session-id`) may be replayed and
        gated for this skill: some session of it is by an agent that reads the skill."""
        if self.agents is None:
            return True
        sources = [s.split(":", 1)[0] for s in source_sessions]
        return any(family(src) in self.agents or src in self.agents for src in sources)


def left_out_reason(agent: str) -> str:
    """Why a session of this agent family was left out: no skill it reads."""
    return f"no skill its agent reads ({' or '.join(MAIN_FILES[agent])} of the project)"


@dataclass
class Routing:
    routes: list[Route]
    # The sessions no rule placed: {session: "source:id", source, reason} (dry-run --json,
    # the night's result).
    left_out: list[dict[str, str]] = field(default_factory=list)

    def left_out_by_agent(self) -> Counter:
        return Counter(family(s["source"]) for s in self.left_out)

    def describe_left_out(self) -> list[str]:
        names = {CLAUDE_CODE: "Claude Code", AGENTS_MD: "AGENTS.md agents (Codex, pi, …)"}
        return [
            f"{n} session(s) of {names[agent]} "
            f"left out: {left_out_reason(agent)}; "
            "add it with `skillopt sleep init` or pass --skill NAME"
            for agent, n in sorted(self.left_out_by_agent().items())
        ]


def _same_path(a: str, b: Path) -> bool:
    return os.path.normpath(os.path.expanduser(a)) == os.path.normpath(str(b))


def main_skill(entries: list[SkillEntry], project: Path | None, agent: str) -> SkillEntry | None:
    """The skill deployed to the project's main file for this agent."""
    if project is None:
        return None
    root = Path(project).expanduser().absolute()
    for name in MAIN_FILES[agent]:
        for entry in entries:
            if entry.deploy_to and _same_path(entry.deploy_to, root / name):
                return entry
    return None


def sibling_files(entries: list[SkillEntry], project: Path | None) -> dict[str, set[str]]:
    """The project's main instruction files when it has both (CLAUDE.md and AGENTS.md):
    each skill name with the set of both. A need the person corrected in one agent's
    sessions is theirs, so each file learns from both files' tasks; each is gated only on
    tasks of the agents that read it (`Route.accepts`). {} when there are not two."""
    found = {main_skill(entries, project, agent) for agent in MAIN_FILES}
    names = {e.name for e in found if e is not None}
    return {name: set(names) for name in names} if len(names) > 1 else {}


def plan_routes(
    sessions: list[dict[str, Any]],
    entries: list[SkillEntry],
    *,
    project: Path | None,
    forced: str | None = None,
) -> Routing:
    by_name = {e.name: e for e in entries}
    if forced is not None:
        if forced not in by_name:
            raise UserError(
                f"--skill {forced}: the skills repository has no such skill "
                f"(it has: {', '.join(sorted(by_name)) or 'none'}); add it with skillopt skills add"
            )
        return Routing([Route(forced, [BY_FLAG], list(sessions))])
    routes: dict[str, Route] = {}
    left_out: list[dict[str, str]] = []
    for session in sessions:
        agent = family(session.get("source"))
        entry, rule = _rule_for(session, agent, entries, by_name, project)
        if entry is None:
            source = str(session.get("source") or "?")
            left_out.append(
                {
                    "session": f"{source}:{session.get('session_id', '?')}",
                    "source": source,
                    "reason": left_out_reason(agent),
                }
            )
            continue
        route = routes.setdefault(entry.name, Route(entry.name, agents=readers(entry)))
        route.add(rule, session)
    unplaced = not routes and len(entries) != 1
    if left_out and unplaced and not any(main_skill(entries, project, a) for a in MAIN_FILES):
        raise UserError(
            "no skill to improve: the skills repository has no skill deployed to the "
            "project's CLAUDE.md or AGENTS.md; run `skillopt sleep init --project PATH` "
            "or pass --skill NAME"
        )
    return Routing(sorted(routes.values(), key=lambda r: r.skill), left_out)


def _named(
    session: dict[str, Any], entries: list[SkillEntry], by_name: dict[str, SkillEntry]
) -> list[SkillEntry]:
    """The skills a session's transcript names, most specific first: a skill it loaded by
    name (a repository skill of that name, or one deployed to `…/skills/<name>/SKILL.md`),
    then a skill deployed to a file it read (a SKILL.md before a main file)."""
    out: list[SkillEntry] = []
    for name in session.get("skills") or []:
        if name in by_name:
            out.append(by_name[name])
        out.extend(
            e
            for e in entries
            if e.deploy_to
            and Path(e.deploy_to).name == "SKILL.md"
            and Path(e.deploy_to).parent.name == name
        )
    read = [Path(p) for p in session.get("skill_files") or [] if isinstance(p, str)]
    for skill_md in (True, False):
        out.extend(
            e
            for e in entries
            if e.deploy_to
            and (Path(e.deploy_to).name == "SKILL.md") == skill_md
            and any(_same_path(e.deploy_to, p) for p in read)
        )
    return out


def _rule_for(
    session: dict[str, Any],
    agent: str,
    entries: list[SkillEntry],
    by_name: dict[str, SkillEntry],
    project: Path | None,
) -> tuple[SkillEntry | None, str]:
    for entry in _named(session, entries, by_name):
        if _reads(entry, agent, session.get("source")):
            return entry, BY_TRANSCRIPT
    main = main_skill(entries, project, agent)
    if main is not None:
        return main, main_file_rule(session.get("source"))
    if len(entries) == 1 and _reads(entries[0], agent, session.get("source")):
        return entries[0], BY_ONLY_SKILL
    return None, ""
