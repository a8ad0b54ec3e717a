"""Mining with the miner role: the model reads a project's prompts in order and refines
the heuristic's tasks (sleep/mine/heuristic.py): their kind, a rubric and checks of every
kind a replay applies without a judge (sleep/mine/tasks.py `Check`), and the tasks the
heuristic missed.

Why on top of the heuristic and not instead of it: the session's evidence — what the
person accepted (the reference), the turns a follow-up refers to and their file edits,
the corrections with their sessions and dates, the verification commands — is read from
the transcript, not from the prompts the model is shown, and a task without it replays
blind. So each prompt the model names as a source brings the heuristic task it became:
that task keeps its id, intent, reference, context, prior edits and corrections; the
model adds rubric and checks and may set its kind. A model task whose prompts the
heuristic made no task of is new, with the same stable id (project + shape of the
intent). Heuristic tasks the model does not name are kept: its silence is no evidence.

Used wherever the miner role has a capable model (`uses_model_miner`): one the config
names, or `auto` resolving to an API model; the heuristic alone where `auto` would fall
back to the embedded demonstration model, whose tasks are worse than the heuristic's. A
kind or check it gives is validated; an unusable reply (after one repair) is a model
error: the night stops instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from core.config import RoleConfig
from core.models.factory import resolve_backend_name
from core.models.types import ModelError
from core.optimizer import reply_schemas as schemas
from core.optimizer.json_reply import OptimizerOutputError, Shape, ask_json
from core.secrets import Secrets
from sleep.harvest.file_edits import FileEdit, prior_edits
from sleep.mine.check_rules import SIZE
from sleep.mine.correction_checks import is_plain_word
from sleep.mine.corrections import head_and_next
from sleep.mine.evidence import bounded_context, points_back, reference_of, verification_commands
from sleep.mine.follow_up import Before, changes_of
from sleep.mine.heuristic import (
    Placed,
    add_reads,
    attach_correction,
    edits_of_turn,
    is_acknowledgement,
    mine_sessions,
    session_commit,
    session_key,
    session_start,
    shape_of,
)
from sleep.mine.judged_by import correction_note
from sleep.mine.kinds import KINDS, TaskKind, kind_of
from sleep.mine.preferences import assign_preferences, need_key
from sleep.mine.tasks import (
    CHECK_KINDS,
    MAX_CORRECTION_CHARS,
    Check,
    Correction,
    MinedTask,
    Turn,
    task_id,
)
from sleep.prompts import render_sleep_prompt

PROMPTS_PER_CALL = 40
MAX_PROMPT_CHARS = 600
MAX_REPLY_CHARS = 240  # how a reply began: enough to tell what a correction answers


HEURISTIC = "heuristic"  # what `mined_by` says when no model mined


class MinerFailed(ModelError):
    exit_code = 1


def uses_model_miner(miner: RoleConfig, env_file: str | None = None) -> bool:
    """Whether a night mines with the miner model after the heuristic: always when the
    config names its backend, and on `auto` unless that resolves to the embedded local
    model (a 135M-1.7B model writes worse tasks than the heuristic does)."""
    if miner.backend != "auto":
        return True
    return resolve_backend_name(miner, Secrets(env_file)) != "local"


def mined_by_model(kind: str, model: str) -> str:
    """How a night's tasks were mined, as the console and `dry-run --json` say it."""
    return f"{HEURISTIC}+{kind}:{model or 'default'}"


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
            problem = check_problem(c)
            if problem:
                raise OptimizerOutputError(problem)
        if "kind" in t and t["kind"] not in KINDS:
            raise OptimizerOutputError(f'"kind" must be one of {", ".join(KINDS)}')
        if not all(isinstance(s, int) for s in t.get("sources", [])):
            raise OptimizerOutputError('"sources" must list prompt numbers')
        if not all(isinstance(s, int) for s in t.get("corrections", [])):
            raise OptimizerOutputError('"corrections" must list prompt numbers')
        if not isinstance(t.get("rubric") or "", str):
            raise OptimizerOutputError('"rubric" must be a string')
        for named in t.get("needs", []):
            if not (
                isinstance(named, dict)
                and isinstance(named.get("prompt"), int)
                and isinstance(named.get("need"), str)
                and named["need"].strip()
            ):
                raise OptimizerOutputError('each of "needs" is {"prompt": N, "need": "..."}')
    return obj


# The checks the model may write: every kind but `command` (a verification command is
# read from what the session ran, never invented).
MODEL_CHECK_KINDS = tuple(k for k in CHECK_KINDS if k != "command")
_PATTERN_KINDS = ("diff_adds", "diff_not_adds", "ran", "diff_leaves")


def check_problem(check: object) -> str:
    """What is wrong with a check the model wrote ('' when it is usable)."""
    shape = '{"kind": "' + '" | "'.join(MODEL_CHECK_KINDS) + '", "value": "..."}'
    if not isinstance(check, dict) or not isinstance(check.get("value"), str):
        return f"a check is {shape}"
    kind, value = check.get("kind"), check["value"]
    if kind not in MODEL_CHECK_KINDS:
        return f"a check is {shape}"
    if kind in _PATTERN_KINDS:
        try:
            re.compile(value)
        except re.error as exc:
            return f"the {kind} check's value is no regular expression ({exc})"
    if kind == "answer_first_line_max" and not SIZE.match(value):
        return 'an answer_first_line_max value is "<N> chars" or "<N> words"'
    if kind == "answer_starts_with" and not value.strip("| "):
        return 'an answer_starts_with value lists words: "yes|no"'
    if kind in ("contains", "not_contains", *_PATTERN_KINDS) and not value.strip():
        return f"a {kind} check needs a value"
    if kind in ("contains", "not_contains") and is_plain_word(value):
        return f"a {kind} check names a code term, not the English word {value!r}"
    return ""


TASKS_SHAPE = Shape(
    "miner",
    '{"tasks": [{"intent": "...", "kind": "agentic", "rubric": "...", "checks": [], '
    '"sources": [1], "corrections": [2], "needs": [{"prompt": 2, "need": "..."}]}]}',
    _check_tasks,
    schemas.miner(KINDS, MODEL_CHECK_KINDS),
)


# One prompt as the model is shown it: its session, its place there and the prompt.
Numbered = tuple[str, dict, dict, int]


def numbered_prompts(sessions: list[dict[str, Any]], include_automation: bool) -> list[Numbered]:
    """The prompts the model reads: not acknowledgements, and not an interrupted one
    nothing followed. One the person followed with a prompt is shown however they worded
    it: whether that says what they wanted of it instead (a task then) is the model's to
    read, the heuristic's correction shapes miss many."""
    out = []
    for session in sessions:
        if session.get("automation") and not include_automation:
            continue
        sid = session_key(session)
        prompts = session.get("tasks", [])
        for index, prompt in enumerate(prompts):
            text = (prompt.get("text") or "").strip()
            if not text or is_acknowledgement(text):
                continue
            if prompt.get("interrupted") and not _followed(prompts, index):
                continue
            out.append((sid, session, {**prompt, "text": text}, index))
    return out


def _followed(prompts: list[dict], index: int) -> bool:
    """Whether the person typed something after an interrupted prompt (in its session)."""
    return any(
        (p.get("text") or "").strip() and not p.get("interrupted") for p in prompts[index + 1 :]
    )


def prompts_listing(chunk: list[Numbered]) -> str:
    """The numbered prompts, each with how its reply began: a correction is told from a
    new request by what it answers ("shorter pls" after a walk-through)."""
    lines = []
    for n, (sid, _s, prompt, _i) in enumerate(chunk, 1):
        stopped = " (the person interrupted its answer)" if prompt.get("interrupted") else ""
        lines.append(f"{n}. [{sid}]{stopped} {prompt['text'][:MAX_PROMPT_CHARS]}")
        reply = " ".join(str(prompt.get("answer") or "").split())
        if reply:
            cut = reply[:MAX_REPLY_CHARS] + ("…" if len(reply) > MAX_REPLY_CHARS else "")
            lines.append(f"   reply began: {cut}")
    return "\n".join(lines)


def needs_listing(needs: list[str]) -> str:
    """The needs named so far (earlier prompts, earlier nights), for the model to reuse a
    name when a correction says the same thing: grouping compares names, not meanings."""
    if not needs:
        return "(none yet)"
    return "\n".join(f"- {need}" for need in needs)


async def mine_with_model(
    sessions: list[dict[str, Any]],
    complete,
    *,
    include_automation: bool = False,
    needs: list[str] | None = None,
) -> list[MinedTask]:
    """The heuristic's tasks refined by the model. `needs` are the need names known so
    far, shown to the model; the names it gives are appended (pass one list to every
    call of a night, so its later prompts see the earlier ones' names)."""
    needs = [] if needs is None else needs
    placed: Placed = {}
    heuristic = mine_sessions(sessions, include_automation=include_automation, placed=placed)
    by_id = {t.id: t for t in heuristic}
    prompts = numbered_prompts(sessions, include_automation)
    for start in range(0, len(prompts), PROMPTS_PER_CALL):
        chunk = prompts[start : start + PROMPTS_PER_CALL]
        reply = await ask_json(
            complete,
            [
                {
                    "role": "user",
                    "content": render_sleep_prompt(
                        "miner", prompts=prompts_listing(chunk), needs=needs_listing(needs)
                    ),
                }
            ],
            TASKS_SHAPE,
        )
        if not reply.ok:
            raise MinerFailed(
                f"the miner's reply is unusable ({reply.error}); the night stops: check models.miner"
            )
        asking = {
            n
            for t in reply.value["tasks"]
            for n in set(t.get("sources", [])) - set(t.get("corrections", []))
        }
        for t in reply.value["tasks"]:
            fixes = sorted({n for n in t.get("corrections", []) if 1 <= n <= len(chunk)})
            asked = sorted({n for n in t.get("sources", []) if 1 <= n <= len(chunk)} - set(fixes))
            sources = [chunk[n - 1] for n in asked]
            homes = [(s, by_id.get(placed.get((s[0], s[3])) or "")) for s in sources]
            known = [home for s, home in homes if home is not None and _asks_in(home, s)]
            stopped = sources and all(s[2].get("interrupted") for s in sources)
            if stopped and not (known or fixes):
                continue  # stopped and never redirected: no evidence of what was wanted
            task = known[0] if known else _new_task(t, sources, by_id)
            for source, home in homes:  # requests the heuristic took for corrections
                if home is not None and home is not task and not _asks_in(home, source):
                    _unattach(source, home, task, by_id, placed)
            for n in fixes:
                _rehome(chunk[n - 1], task, by_id, placed, also_asks=n in asking)
            _refine(task, t)
            _name_needs(task, t, chunk, set(fixes) | set(asked), needs)
    tasks = list(by_id.values())
    for task in tasks:
        task.train_only = not task.has_evidence
    assign_preferences(tasks)
    return sorted(tasks, key=lambda t: (-t.occurrences, t.id))


def _rehome(
    fix: Numbered,
    task: MinedTask,
    by_id: dict[str, MinedTask],
    placed: Placed,
    *,
    also_asks: bool = False,
) -> None:
    """A prompt the model says corrects `task`'s request, attached as the heuristic
    attaches a correction it recognises: out of the task the heuristic put it in (its own,
    when it read it as a request), into this one's rubric, checks and corrections; the
    answer it corrected is no reference, the one after it is when the person moved on.
    One that `also_asks` for the next thing ("thx. tests pls. next: add …") stays that
    request's task; its correcting head is what is attached."""
    sid, session, prompt, index = fix
    home = placed.get((sid, index))
    if home == task.id:
        return
    text = prompt["text"]
    if also_asks:
        text = (head_and_next(text) or (text, ""))[0]
    elif home in by_id:
        _detach(by_id, by_id[home], fix, text, placed)
    cwd = session.get("cwd")
    turns = session.get("tasks", [])
    before = [i for i in range(index) if placed.get((sid, i)) == task.id]
    if before:
        corrected = turns[before[-1]]
        if task.reference == reference_of(
            corrected.get("answer") or "", edits_of_turn(corrected, cwd)
        ):
            task.reference = ""
    moved_on = index + 1 < len(turns) and not turns[index + 1].get("interrupted")
    if moved_on and not task.reference and not prompt.get("aborted"):
        task.reference = reference_of(prompt.get("answer") or "", edits_of_turn(prompt, cwd))
    commands = [c for c in prompt.get("commands", []) if isinstance(c, str)]
    # read against the exchange it corrects, as the heuristic reads one it recognises
    attach_correction(task, text, commands, sid, session, prompt.get("timestamp"),
                      before=_answer_before(fix, task, placed))  # fmt: skip
    if not also_asks:
        placed[(sid, index)] = task.id


def _asks_in(task: MinedTask, prompt: Numbered) -> bool:
    """Whether `task` is the one the heuristic made of this prompt as a request (not
    one it attached the prompt to as a correction)."""
    return task.id == task_id(task.project, shape_of(prompt[2]["text"]))


def _unattach(
    prompt: Numbered,
    home: MinedTask,
    task: MinedTask,
    by_id: dict[str, MinedTask],
    placed: Placed,
) -> None:
    """A prompt the model reads as a request of its own ("no network in the tests,
    stub it. add a retry to upload()", "wait, does upload() give up after one
    timeout?") that the heuristic attached to the request before it as a correction:
    out of that request's rubric and corrections, into `task`."""
    sid, session, source, index = prompt
    _detach(by_id, home, prompt, source["text"], placed)
    cwd, turns = session.get("cwd"), session.get("tasks", [])
    taken = reference_of(source.get("answer") or "", edits_of_turn(source, cwd))
    corrected = any(c.session == sid for c in home.corrections)
    if home.reference == taken or not (home.reference or corrected):
        # its answer was taken for the request's, or the request's own answer for one it
        # corrected: the answer before it, which the person moved on from, is accepted
        before = [turns[i] for i in range(index) if placed.get((sid, i)) == home.id]
        home.reference = (
            reference_of(before[-1].get("answer") or "", edits_of_turn(before[-1], cwd))
            if before
            else ""
        )
    placed[(sid, index)] = task.id
    if sid not in task.source_sessions:
        task.source_sessions.append(sid)
        task.occurrences = max(task.occurrences, len(task.source_sessions))


def _detach(
    by_id: dict[str, MinedTask], home: MinedTask, prompt: Numbered, text: str, placed: Placed
) -> None:
    """The correction out of the task the heuristic put it in: the task it made of it
    loses this session (and goes when it has none left); a request it wrongly took it as
    correcting loses every trace of it: its rubric line, its record, the checks it alone
    implied and the preference it gave (assign_preferences sets it again from the
    corrections left: a task whose only "correction" was a question of its own kept its
    id, a ghost, issue 37 ledger round 6)."""
    sid = prompt[0]
    if home.id == task_id(home.project, shape_of(text)):
        if sid in home.source_sessions:
            home.source_sessions.remove(sid)
        if not home.source_sessions:
            del by_id[home.id]
        home.occurrences = max(1, len(home.source_sessions))
        return
    # the heuristic may have attached only the prompt's correcting head
    gone = [c for c in home.corrections if c.session == sid and c.text in text]
    notes = {correction_note(c.text) for c in gone} | {correction_note(text)}
    home.rubric = "\n".join(ln for ln in home.rubric.splitlines() if ln not in notes)
    home.corrections = [c for c in home.corrections if c not in gone]
    before = _answer_before(prompt, home, placed)
    implied = {c for t in {text, *(c.text for c in gone)} for c in _implied(home, t, before)}
    kept = {c for left in home.corrections for b in (before, None)
            for c in _implied(home, left.text, b)}  # fmt: skip
    home.checks = [c for c in home.checks if c.kind == "command" or c not in implied - kept]
    home.preference = None


def _answer_before(prompt: Numbered, home: MinedTask, placed: Placed) -> Before | None:
    """What the heuristic read `prompt` against when it attached it to `home`: the
    request and what the person added to it in this session, its latest answer and what
    its turns did (sleep/mine/heuristic.py `_Thread.before`)."""
    sid, session, _prompt, index = prompt
    turns = session.get("tasks", [])
    mine = [turns[i] for i in range(index) if placed.get((sid, i)) == home.id]
    if not mine:
        return None
    said = "\n".join(str(t.get("text") or "").strip() for t in mine)
    answers = [str(t.get("answer") or "") for t in mine if t.get("answer")]
    changes = "\n".join(filter(None, map(changes_of, mine)))
    return Before(said, answers[-1] if answers else "", changes)


def _implied(task: MinedTask, text: str, before: Before | None) -> list[Check]:
    """The checks attaching `text` as a correction of the answer `before` gives a task of
    `task`'s kind (its verification commands aside: those are what the session ran)."""
    scratch = MinedTask(id="", intent="", project=task.project, kind=task.kind)
    attach_correction(scratch, text, [], "", {}, None, before=before)
    return scratch.checks


def _refine(task: MinedTask, found: dict[str, Any]) -> None:
    """The model's view added to a task: its kind, rubric and checks."""
    if found.get("kind"):
        task.kind = found["kind"]
    rubric = (found.get("rubric") or "").strip()
    if rubric and rubric not in task.rubric:
        task.rubric = f"{task.rubric}\n{rubric}".strip()
    for c in found.get("checks", []):
        check = Check(c["kind"], c["value"])
        if check not in task.checks:
            task.checks.append(check)


def _name_needs(
    task: MinedTask, found: dict[str, Any], chunk: list[Numbered], own: set[int], needs: list[str]
) -> None:
    """The needs the model named for this task's prompts, on the corrections they are:
    the one a correcting prompt became, or the constraints a request states (a request
    whose constraint the heuristic did not recognise gets a correction of its own, so it
    joins its preference)."""
    named: dict[int, list[str]] = {}
    for item in found.get("needs", []):
        need = " ".join(item["need"].split())
        if item["prompt"] in own and need not in named.setdefault(item["prompt"], []):
            named[item["prompt"]].append(need)
    for n, names in sorted(named.items()):
        sid, session, prompt, _index = chunk[n - 1]
        text, when = prompt["text"], prompt.get("timestamp")
        said = [
            i
            for i, c in enumerate(task.corrections)
            if c.session == sid and c.text in text and (when is None or c.date in (None, when))
        ]
        if not said:
            agent = str(session.get("source") or "?")
            task.corrections.append(Correction(text[:MAX_CORRECTION_CHARS], sid, agent, when))
            said = [len(task.corrections) - 1]
        for i in said:
            task.corrections[i] = replace(task.corrections[i], needs=tuple(names))
        for name in names:
            if need_key(name) not in map(need_key, needs):
                needs.append(name)


def _new_task(
    found: dict[str, Any], sources: list[Numbered], by_id: dict[str, MinedTask]
) -> MinedTask:
    """A task the heuristic did not make: from the model's intent and its prompts' evidence."""
    project = sources[0][1].get("cwd") if sources else None
    tid = task_id(project, shape_of(found["intent"]))
    if tid in by_id:
        return by_id[tid]
    task = by_id[tid] = MinedTask(
        id=tid,
        intent=found["intent"].strip(),
        project=project,
        kind=found.get("kind") or heuristic_kind(found["intent"], sources),
    )
    for sid, session, prompt, index in sources:
        for check in verification_commands(prompt.get("commands", [])):
            if check not in task.checks:
                task.checks.append(check)
        if sid not in task.source_sessions:
            task.source_sessions.append(sid)
        add_reads(task, prompt, session.get("cwd"))
        when = prompt.get("timestamp")
        if when and (task.last_seen is None or when > task.last_seen):
            task.last_seen = when
        task.first_seen = task.first_seen or when
        task.branch = task.branch or session.get("branch")
        if task.session_started is None:
            task.session_started = session_start(session)
            task.session_commit = session_commit(session)
            task.prior_edits = edits_before(session, index)
            task.context = task.context or context_before(session, index)
    task.occurrences = max(1, len(task.source_sessions))
    return task


def edits_before(session: dict[str, Any], index: int) -> list[FileEdit]:
    """The session's file edits before its prompt `index`: the project as it stood when
    that was asked (a question the heuristic took for a correction, "what happens if two
    archive runs overlap?", is about the archive.py its session had just written)."""
    cwd = session.get("cwd")
    return prior_edits([edits_of_turn(p, cwd) for p in session.get("tasks", [])[:index]])


def context_before(session: dict[str, Any], index: int) -> list[Turn]:
    """The turn a prompt follows when it points back at it ("and a test for it pls"):
    without it neither the replay nor the judge knows what "it" is."""
    turns = session.get("tasks", [])
    if not 0 < index < len(turns) or not points_back(str(turns[index].get("text") or "")):
        return []
    before = turns[index - 1]
    return bounded_context([Turn(str(before.get("text") or ""), str(before.get("answer") or ""))])


def heuristic_kind(intent: str, sources: list[Numbered]) -> TaskKind:
    """The kind when the model gave none: the heuristic, with the session's evidence."""
    tools = [name for _sid, _s, p, _i in sources for name in p.get("tools", [])]
    commands = [c for _sid, _s, p, _i in sources for c in p.get("commands", [])]
    return kind_of(intent, tools=tools, commands=commands)
