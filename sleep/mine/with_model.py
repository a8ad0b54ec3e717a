"""Mining with the miner role: the model reads a project's prompts in order and returns
replayable tasks (intent, kind, rubric, checks, which prompts they came from). A kind it
gives is validated (sleep/mine/kinds.py); without one the heuristic decides.

Used when the night's config names a miner (`models.miner.backend` not `auto`); the
heuristic miner (sleep/mine/heuristic.py) is the fallback everywhere else. The model's tasks get the
same stable ids (project + shape of the intent) as heuristic ones, so a task keeps its
split whichever miner found it. An unusable reply (after one repair) is a model error: the
night stops instead of guessing.
"""

from __future__ import annotations

from typing import Any

from core.models.types import ModelError
from core.optimizer import reply_schemas as schemas
from core.optimizer.json_reply import OptimizerOutputError, Shape, ask_json
from sleep.mine.evidence import verification_commands
from sleep.mine.heuristic import is_acknowledgement, shape_of
from sleep.mine.kinds import KINDS, TaskKind, kind_of
from sleep.mine.tasks import Check, MinedTask, task_id
from sleep.prompts import render_sleep_prompt

PROMPTS_PER_CALL = 40
MAX_PROMPT_CHARS = 600


class MinerFailed(ModelError):
    exit_code = 1


def _check_tasks(obj: dict) -> dict:
    tasks = obj.get("tasks")
    if not isinstance(tasks, list):
        raise OptimizerOutputError('"tasks" must be a list')
    for t in tasks:
        if (
            not isinstance(t, dict)
            or not isinstance(t.get("intent"), str)
            or not t["intent"].strip()
        ):
            raise OptimizerOutputError('each task needs a non-empty "intent" string')
        for c in t.get("checks", []):
            if (
                not isinstance(c, dict)
                or c.get("kind") not in ("contains", "not_contains")
                or not isinstance(c.get("value"), str)
            ):
                raise OptimizerOutputError(
                    'a check is {"kind": "contains" | "not_contains", "value": "..."}'
                )
        if "kind" in t and t["kind"] not in KINDS:
            raise OptimizerOutputError(f'"kind" must be one of {", ".join(KINDS)}')
        if not all(isinstance(s, int) for s in t.get("sources", [])):
            raise OptimizerOutputError('"sources" must list prompt numbers')
        if not isinstance(t.get("rubric") or "", str):
            raise OptimizerOutputError('"rubric" must be a string')
    return obj


TASKS_SHAPE = Shape(
    "miner",
    '{"tasks": [{"intent": "...", "kind": "agentic", "rubric": "...", "checks": [], '
    '"sources": [1]}]}',
    _check_tasks,
    schemas.miner(KINDS),
)


def numbered_prompts(
    sessions: list[dict[str, Any]], include_automation: bool
) -> list[tuple[str, dict, dict]]:
    out = []
    for session in sessions:
        if session.get("automation") and not include_automation:
            continue
        sid = f"{session.get('source', '?')}:{session.get('session_id', '?')}"
        for prompt in session.get("tasks", []):
            text = (prompt.get("text") or "").strip()
            if text and not is_acknowledgement(text) and not prompt.get("interrupted"):
                out.append((sid, session, {**prompt, "text": text}))
    return out


async def mine_with_model(
    sessions: list[dict[str, Any]], complete, *, include_automation: bool = False
) -> list[MinedTask]:
    prompts = numbered_prompts(sessions, include_automation)
    by_id: dict[str, MinedTask] = {}
    for start in range(0, len(prompts), PROMPTS_PER_CALL):
        chunk = prompts[start : start + PROMPTS_PER_CALL]
        listing = "\n".join(
            f"{n}. [{sid}] {p['text'][:MAX_PROMPT_CHARS]}"
            for n, (sid, _s, p) in enumerate(chunk, 1)
        )
        reply = await ask_json(
            complete,
            [{"role": "user", "content": render_sleep_prompt("miner", prompts=listing)}],
            TASKS_SHAPE,
        )
        if not reply.ok:
            raise MinerFailed(
                f"the miner's reply is unusable ({reply.error}); the night stops: check models.miner"
            )
        for t in reply.value["tasks"]:
            sources = [chunk[n - 1] for n in t.get("sources", []) if 1 <= n <= len(chunk)]
            project = sources[0][1].get("cwd") if sources else None
            tid = task_id(project, shape_of(t["intent"]))
            task = by_id.get(tid)
            if task is None:
                task = by_id[tid] = MinedTask(
                    id=tid,
                    intent=t["intent"].strip(),
                    project=project,
                    kind=t.get("kind") or heuristic_kind(t["intent"], sources),
                )
            if t.get("rubric") and t["rubric"] not in task.rubric:
                task.rubric = f"{task.rubric}\n{t['rubric']}".strip()
            for c in t.get("checks", []):
                check = Check(c["kind"], c["value"])
                if check not in task.checks:
                    task.checks.append(check)
            for sid, session, prompt in sources:
                for check in verification_commands(prompt.get("commands", [])):
                    if check not in task.checks:
                        task.checks.append(check)
                if sid not in task.source_sessions:
                    task.source_sessions.append(sid)
                when = prompt.get("timestamp")
                if when and (task.last_seen is None or when > task.last_seen):
                    task.last_seen = when
                task.first_seen = task.first_seen or when
                task.branch = task.branch or session.get("branch")
            task.occurrences = max(1, len(task.source_sessions))
    for task in by_id.values():
        task.train_only = not task.has_evidence
    return sorted(by_id.values(), key=lambda t: (-t.occurrences, t.id))


def heuristic_kind(intent: str, sources: list[tuple[str, dict, dict]]) -> TaskKind:
    """The kind when the model gave none: the heuristic, with the session's evidence."""
    tools = [name for _sid, _s, p in sources for name in p.get("tools", [])]
    return kind_of(intent, tools=tools)
