"""Which skills a session used (sleep/harvest/skills_used.py), read from the transcripts' own tool
calls, and the routing rule "the skill named in the transcript" firing on them in a night
over the real CLIs' transcripts (before, the harvest never filled `skills`, so the rule
could not fire)."""

from __future__ import annotations

import json

from core.skills_repo import SkillsRepo
from sleep.harvest.claude import ClaudeTaskReader
from sleep.harvest.codex import CodexTaskReader
from sleep.harvest.identity import SessionIdentity
from sleep.night.routing import BY_MAIN_FILE, BY_SIBLING, BY_TRANSCRIPT
from tests.sleep.transcripts import (
    claude_assistant,
    claude_user,
    codex_line,
    codex_meta,
    codex_prompt,
)
from tests.support.sleep_world import real_cli_world, world_night

CWD = "/home/alex/src/app"


def _claude(records) -> SessionIdentity:
    reader = ClaudeTaskReader(SessionIdentity(), set())
    for r in records:
        reader.feed(r)
    return reader.identity


def _tool_use(name: str, arguments: dict) -> dict:
    record = claude_assistant()
    record["message"]["content"] = [
        {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}
    ]
    return record


def _codex(records) -> SessionIdentity:
    reader = CodexTaskReader(SessionIdentity(), lambda t: t, lambda _t: set())
    for r in records:
        reader.feed(r)
    reader.finish()
    return reader.identity


def _call(name: str, arguments: dict) -> dict:
    item = {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": "c1",
    }
    return codex_line("response_item", item)


def test_claude_skill_tool_read_and_loaded_body_name_the_skills():
    ident = _claude(
        [
            claude_user("review my change"),
            _tool_use("Skill", {"skill": "review"}),
            _tool_use("Skill", {"command": "my-plugin:deploy"}),  # older builds, a plugin's
            _tool_use("Read", {"file_path": f"{CWD}/.claude/skills/release/SKILL.md"}),
            _tool_use("Bash", {"command": "cat .claude/skills/lint/SKILL.md | head"}),
            claude_user(
                "Base directory for this skill: /home/alex/.claude/skills/notes\n\n# Notes",
                isMeta=True,
            ),
            _tool_use("Read", {"file_path": f"{CWD}/src/main.py"}),  # not a skill
        ]
    )
    assert ident.skills == ["review", "my-plugin:deploy", "deploy", "release", "lint", "notes"]
    assert ident.skill_files == [
        f"{CWD}/.claude/skills/release/SKILL.md",
        f"{CWD}/.claude/skills/lint/SKILL.md",
        "/home/alex/.claude/skills/notes/SKILL.md",
    ]


def test_sidechain_skill_calls_are_not_the_sessions():
    record = _tool_use("Skill", {"skill": "review"})
    record["isSidechain"] = True
    assert _claude([claude_user("hi"), record]).skills == []


def test_codex_shell_reads_and_injected_skills_name_the_skills():
    injected = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": (
        "<skill>\n<name>release</name>\n<path>/home/alex/.agents/skills/release/SKILL.md</path>\n# Release\n</skill>"
    )}]}  # fmt: skip
    ident = _codex(
        [
            codex_meta(cwd=CWD),
            *codex_prompt("ship it"),
            codex_line("response_item", injected),
            _call("exec_command", {"cmd": "sed -n 1,200p .agents/skills/deploy/SKILL.md"}),
            _call("shell", {"command": ["bash", "-lc", "cat docs/AGENTS.md && ls"]}),
            _call("exec_command", {"cmd": "wc -l notes.py"}),  # not a skill
        ]
    )
    assert ident.skills == ["release", "deploy"]
    assert ident.skill_files == [
        "/home/alex/.agents/skills/release/SKILL.md",
        f"{CWD}/.agents/skills/deploy/SKILL.md",
        f"{CWD}/docs/AGENTS.md",
    ]


# -- a night over the real CLIs' transcripts ------------------------------------------------


def _insert_after_first(path, marker: str, records: list[dict]) -> None:
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if marker in line) + 1
    lines[at:at] = [json.dumps(r) + "\n" for r in records]
    path.write_text("".join(lines))


async def test_a_skill_the_session_used_routes_its_tasks_and_names_the_rule(tmp_path):
    world = real_cli_world(tmp_path)
    project = world.project
    repo = SkillsRepo.open(world.skills)
    review = project / ".claude" / "skills" / "review" / "SKILL.md"
    release = project / ".agents" / "skills" / "release" / "SKILL.md"
    for path in (review, release):
        path.parent.mkdir(parents=True)
        path.write_text(f"# {path.parent.name}\n\nCheck the diff.\n")
        repo.add_skill(path.parent.name, path.read_text(), deploy_to=str(path))
    interactive = next((world.home / ".claude").rglob("e89635d4*.jsonl"))
    first = json.loads(interactive.read_text().splitlines()[0])
    call = _tool_use("Skill", {"skill": "review"})
    call.update(cwd=str(project), sessionId=first.get("sessionId"))
    _insert_after_first(interactive, '"type":"tool_use"', [call])
    rollout = next((world.home / ".codex").rglob("*.jsonl"))
    _insert_after_first(
        rollout,
        '"type":"function_call"',
        [_call("exec_command", {"cmd": "cat .agents/skills/release/SKILL.md"})],
    )

    plan = await world_night(world).plan()
    routes = {r["skill"]: (r["routed_by"], r["sessions"]) for r in plan.routes}
    assert routes == {
        "review": (BY_TRANSCRIPT, 1),  # the interactive Claude session
        "notes-app": (BY_MAIN_FILE["claude"], 1),  # the print-mode one used no skill
        "release": (BY_TRANSCRIPT, 1),  # the `codex exec` session
        # AGENTS.md is proposed what CLAUDE.md's sessions teach (gated on Codex's tasks)
        "notes-app-agents": (BY_SIBLING, 0),
    }

    result = await world_night(world).run()
    staged = {b.skill: b for b in SkillsRepo.open(world.skills).staged_branches()}
    for skill in set(staged) & {"review", "release"}:
        [evidence] = SkillsRepo.open(world.skills).diff(staged[skill].name).evidence
        assert evidence.trailers["Routed-By"] == BY_TRANSCRIPT
    assert result.skills["review"]["routed_by"] == BY_TRANSCRIPT
    assert result.skills["release"]["routed_by"] == BY_TRANSCRIPT
