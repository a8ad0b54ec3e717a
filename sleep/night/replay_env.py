"""Mined tasks as an environment of the engine (core.environment.contract).

A night's tasks are replayed through the ordinary training loop: `load_split` serves the
tasks of a split, `rollout` asks the target with the skill as its system prompt, then has
the **judge** role grade the reply against the task's rubric (score in [0, 1] and a
reason), and runs the literal checks. The rubric outweighs the checks: soft =
0.75·judge + 0.25·checks (judge alone when there are no checks); hard = soft ≥ pass mark.
An agent or tools replay also runs the task's `command` checks in its workspace
(sleep/night/replay_checks.py): the judge sees their results; a failed one makes the item 0,
and passing ones make it 1 only when there is no rubric or reference to judge by.

With a coding agent as the target (`claude_code`, `codex`), a replay is an agent run in a
fresh temporary copy of the project's tree at the commit the night recorded (never the
user's checkout), the skill placed where that agent reads it; the judge then sees the
agent's final message and the diff it made. With an API (chat) backend, an agentic task
(replay mode `tools`, sleep/night/replay_modes.py) is replayed the same way by our own bounded tool loop
(sleep/night/replay_tools.py); on the handoff backend (mode `handoff-workspace`) the person's own
agent does it in a workspace the night prepared and keeps (sleep/night/handoff_workspace.py).

The judge's reply must be the JSON the prompt asks for; one repair re-ask, then the
rollout fails with a model error (the night stops loudly), never a silent 0.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.config import AGENT_BACKENDS
from core.environment.contract import SPLITS, CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.models.agents.events import summarize_events
from core.models.types import (
    AgentOutcome,
    AgentTask,
    Message,
    ModelError,
    RetriesExhausted,
    TransientError,
)
from core.optimizer import reply_schemas as schemas
from core.optimizer.json_reply import OptimizerOutputError, Shape, ask_json
from core.tree_extract import left_out_note
from sleep.harvest.file_edits import FileEdit
from sleep.mine.check_rules import not_applicable
from sleep.mine.evidence import context_text
from sleep.mine.judged_by import judged_by
from sleep.mine.tasks import Check, MinedTask, ReplayEvidence, Turn
from sleep.night.check_memo import CheckMemo, MemoCheck
from sleep.night.declared_commands import (
    declared_message,
    declared_results,
    declared_section,
    passed_commands,
)
from sleep.night.edited_tree import EditedTree, edited_tree, session_base, start_commit
from sleep.night.history import HistoryOutput, history_output, history_repo
from sleep.night.lacked_inputs import NO_HISTORY, lacked_inputs
from sleep.night.preference_gate import PreferenceGate
from sleep.night.read_files import ReadFiles, read_files
from sleep.night.replay_checks import (
    DEFAULT_CHECK_TIMEOUT_S,
    CheckResult,
    decide,
    judge_section,
    results_of,
    trajectory_message,
)
from sleep.night.replay_evidence import commands_in_events, evidence
from sleep.night.replay_modes import MISSING, WORKSPACE_MODES, replay_mode, workspace_runner
from sleep.night.replay_tools import ToolReplay, run_in_workspace
from sleep.prompts import render_sleep_prompt

NAME = "sleep"
VERSION = "1"
RUBRIC_WEIGHT = 0.75
DIFF_SHOWN_CHARS = 4000
DEFAULT_PASS_MARK = 0.7


def _check_verdict(obj: dict) -> dict:
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise OptimizerOutputError('"score" must be a number from 0 to 1')
    if not 0 <= float(score) <= 1:
        raise OptimizerOutputError(f'"score" must be from 0 to 1, got {score}')
    reason = obj.get("reason", "")
    if not isinstance(reason, str):
        raise OptimizerOutputError('"reason" must be a string')
    return {"score": float(score), "reason": reason}


VERDICT_SHAPE = Shape("judge", '{"score": 0.5, "reason": "..."}', _check_verdict, schemas.JUDGE)


def judge_advice(backend: str) -> str:
    """What can make the judge's replies usable, for the backend in use. (A handoff judge
    never gets here: a rejected answer makes the night wait for a fixed one.)"""
    if backend in AGENT_BACKENDS:
        return f"check models.judge (a stronger model for the {backend} CLI)"
    return "check models.judge (a stronger model, or a larger models.judge.max_tokens)"


def _judge_context(item: TaskItem) -> str:
    """The earlier turns a follow-up refers to ("these changes", "also"), as the target
    had them: without them the judge cannot tell what was asked."""
    turns = [Turn(p, a) for p, a in item.data.get("context", [])]
    if not turns:
        return ""
    in_workspace = item.data.get("replay") not in (None, "chat", "skipped")
    note = f"\n{PREDECESSORS_JUDGE_NOTE}" if in_workspace else ""
    return f"## Context\n{context_text(turns)}{note}\n\n"


class JudgeFailed(ModelError):
    """The judge's reply was unusable after a repair: the night must not score on it."""

    exit_code = 1


def task_item(
    task: MinedTask, backend: str = "", preferences: Sequence[str] | None = None
) -> TaskItem:
    """The judge reads the rubric and, when the person accepted an answer, that reference;
    `command` checks travel apart (they run in a workspace, not on the reply's text).
    `preferences`: every preference the task's corrections belong to (a task corrected
    for two shows the analysts both); its own `preference` alone when not given."""
    shown = list(preferences or []) or ([task.preference] if task.preference else [])
    answer = task.rubric or "(no rubric: judge the reply against the request)"
    if task.reference:
        answer += f"\n\nWhat the person accepted in their session (reference):\n{task.reference}"
    return TaskItem(
        id=task.id,
        task_type=task.kind,
        question=task.intent,
        answer=answer,
        data={
            "checks": [[c.kind, c.value] for c in task.checks if c.on_reply],
            "command_checks": [c.value for c in task.checks if c.kind == "command"],
            "context": [[t.prompt, t.answer] for t in task.context],
            "prior_edits": [e.to_dict() for e in task.prior_edits],
            "project": task.project,
            "session_started": task.session_started or task.first_seen,
            "session_commit": task.session_commit,
            "read_files": list(task.read_files),
            "reads_history": task.reads_history,  # its replay is given the history
            "history_commands": list(task.history_commands),  # a chat replay's, re-run
            "skill": task.skill,
            "replay": replay_mode(task, backend).mode,
            "judged_by_evidence": bool(task.rubric or task.reference),
            "judged_by": judged_by(task),  # the optimizer's view of `answer`, part by part
            "preferences": shown,  # the analysts name them in an edit's rationale
        },
    )


def checks_of(item: TaskItem) -> list[Check]:
    return [Check(kind, value) for kind, value in item.data.get("checks", [])]


def not_applicable_checks(checks: list[Check], seen: ReplayEvidence) -> dict[Check, str]:
    """The checks about how new code is written whose code this replay does not add
    (type hints on a change that adds no function), each with why: not applicable, so
    neither passed nor failed (sleep/mine/check_rules.not_applicable)."""
    out = {}
    for check in checks:
        why = not_applicable(check.kind, check.value, seen)
        if why:
            out[check] = why
    return out


def replay_messages(item: TaskItem, skill_text: str, files: str = "") -> list[Message]:
    """The skill, the earlier turns the task follows up on, then the task itself, after
    the files its session read (`files`, sleep/night/read_files.py) when there are any."""
    messages: list[Message] = []
    if skill_text.strip():
        messages.append({"role": "system", "content": skill_text})
    for prompt, answer in item.data.get("context", []):
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": answer or "(no answer recorded)"})
    question = f"{files}\n\nThe question:\n{item.question}" if files else item.question
    messages.append({"role": "user", "content": question})
    return messages


def with_diff(final: str, diff: str) -> str:
    """What the judge reads of an agent run: its final message and the diff it made."""
    reply = final.strip()
    return reply + "\n\nChanges made:\n" + diff[:DIFF_SHOWN_CHARS] if diff else reply


# A follow-up replays in a copy of the project as it was when its session began (its
# last commit before then), not as the session left it. Where the harvest kept the
# earlier turns' edits (every agent's edit tools, sleep/harvest/file_edits.py,
# sleep/harvest/edit_tools.py) they are applied first and the prompt says which
# (EditedTree.note); otherwise (shell edits, edits dropped by the redaction, a session
# read from a store with no tool calls) they may be missing, so the agent is told to
# carry out what the follow-up depends on first, and the judge that the diff may hold it.
PREDECESSORS_NOTE = (
    "This workspace is the project as it was when that session began, not as the session "
    "left it: the changes of the earlier requests may be missing. Where this request "
    "depends on them and they are missing, make them first, then do this request."
)
PREDECESSORS_JUDGE_NOTE = (
    "The reply was made in the project as it was when the session began, so its changes "
    "may also carry out the earlier requests this one depends on; judge this request."
)


def agent_prompt(item: TaskItem, tree: EditedTree | None = None) -> str:
    """An agent run has no message history: the context goes before the request, with
    what the workspace holds of the earlier requests' changes: the recorded edits applied
    to it (`tree`), else the note that they may be missing."""
    turns = [Turn(p, a) for p, a in item.data.get("context", [])]
    if not turns:
        return item.question
    note = tree.note() if tree is not None else PREDECESSORS_NOTE
    return f"{context_text(turns)}\n\n{note}\n\nNow: {item.question}"


def _prior_edits(item: TaskItem) -> list[FileEdit]:
    return [FileEdit.from_dict(e) for e in item.data.get("prior_edits", [])]


@dataclass(frozen=True)
class StartTree:
    """Where a replay starts (see `_start_tree`): the folder (a git repository when
    `commit` is set), a follow-up's applied edits, and whether it holds the git history
    up to the start commit (a history-reading task's, sleep/night/history.py)."""

    files: Path
    commit: str | None
    edited: EditedTree | None = None
    history: bool = False


@contextlib.contextmanager
def _start_tree(
    item: TaskItem, project: Path, commit: str | None, keep_in: Path | None = None
) -> Iterator[StartTree]:
    """Where a replay starts: the project at its last commit before the task's session
    began (not the night's `commit`, where the person's work may be done already), and
    for a follow-up a copy of that with the earlier turns' recorded edits applied (then
    the agent's diff is taken against that copy, so it shows this request's changes only).
    A task whose session read the git history starts in a repository holding the history
    up to that commit, and nothing after it."""
    if commit is not None:
        commit = start_commit(
            project, commit, item.data.get("session_started"), item.data.get("session_commit")
        )
    base = session_base(project, item.data.get("project"))
    with contextlib.ExitStack() as stack:
        history = False
        if commit is not None and item.data.get("reads_history"):
            repo = stack.enter_context(history_repo(project, commit, keep_in))
            if repo is not None:
                project, commit, history = repo, None, True
        edits = _prior_edits(item)
        if not edits:
            yield StartTree(project, commit, None, history)
            return
        tree = stack.enter_context(edited_tree(project, commit, edits, base=base, keep_in=keep_in))
        yield StartTree(tree.root, None, tree, history)


def _edits_message(tree: EditedTree | None) -> list[Message]:
    """The trajectory's record of the earlier edits applied before the run."""
    if tree is None:
        return []
    lines = [f"applied: {a}" for a in tree.applied] + tree.skipped
    return [{"role": "prior_edits", "content": "\n".join(lines) or "(none)"}]


def _left_out_message(tree: EditedTree | None, outcome: AgentOutcome) -> list[Message]:
    """The trajectory's note of what the workspace copy left out (a committed symlink out
    of the project is skipped, so the replay still runs)."""
    note = left_out_note([*(tree.left_out if tree else []), *outcome.left_out])
    return [{"role": "workspace", "content": note}] if note else []


@dataclass(frozen=True)
class AgentReplay:
    """Where an agent replay works: the project (a git repository when `commit` is set,
    whose tree at that commit is copied; else the folder itself is copied) and the name
    the skill is placed under. A workspace runner (sleep/night/replay_modes.py) also gets the
    file the skill is written to in the copy, and `keep_in`: the night's folder for
    workspaces that outlive one run (a handoff workspace waits there for its answer)."""

    project: Path
    commit: str | None
    skill_name: str
    skill_path: str = "CLAUDE.md"
    keep_in: Path | None = None


class ReplayEnvironment:
    name = NAME
    version = VERSION

    def __init__(
        self,
        splits: Mapping[str, list[MinedTask]],
        judge: CompleteFn,
        *,
        pass_mark: float = DEFAULT_PASS_MARK,
        agent: AgentReplay | None = None,
        tools: ToolReplay | None = None,
        judge_backend: str = "",
        target_backend: str = "",
        workspace: AgentReplay | None = None,
        check_timeout_s: float = DEFAULT_CHECK_TIMEOUT_S,
        checks_log: Path | None = None,
        gate_rule: PreferenceGate | None = None,
        preferences: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        # `preferences`: task id -> the ids of every preference its corrections belong to
        ids = preferences or {}
        self._items = {
            s: [task_item(t, target_backend, ids.get(t.id)) for t in splits.get(s, [])]
            for s in SPLITS
        }
        # where `tools` / `handoff-workspace` replays work (a chat target's agentic tasks)
        self.workspace = workspace
        self._read_by_item: dict[str, tuple[ReadFiles, HistoryOutput]] = {}
        self.judge = judge
        self.judge_backend = judge_backend
        self.pass_mark = pass_mark
        self.agent = agent
        self.tools = tools  # an API backend's workspace for agentic tasks (None: chat only)
        self.check_timeout_s = check_timeout_s
        # one JSON line per piece of work that ran command checks (sleep/night/check_memo.py)
        self.checks = CheckMemo(checks_log)
        # core.environment.contract.needs_agent reads this: the runner then hands
        # `rollout` the client's agent runner instead of its chat `complete`.
        self.target_kind = "agent" if agent is not None else "chat"
        # The engine gates by this rule instead of the mean when it is set
        # (core/training/candidate_gate.env_gate_rule; sleep/night/preference_gate.py).
        self.gate_rule = gate_rule

    def analyst_guide(self, kind: str) -> str:
        """What the analysts must know of these items (core.environment.contract): an edit
        names the preference it addresses, or the gate drops it, and states it in general
        words (sleep/night/preference_gate.py, sleep/night/edit_trace.py)."""
        return render_sleep_prompt("analyst_guide")

    def load_split(self, split: str) -> list[TaskItem]:
        if split not in SPLITS:
            raise EnvError(f"sleep: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
        return list(self._items[split])

    def score(self, item: TaskItem, prediction: str) -> Score:
        """Checks only (the judge is asynchronous): used where no judge is at hand."""
        seen = ReplayEvidence(prediction)
        moot = not_applicable_checks(checks_of(item), seen)
        results = [c.evaluate(seen) for c in checks_of(item) if c not in moot]
        told = [r for r in results if r is not None]
        share = sum(told) / len(told) if told else 0.0
        return Score(hard=float(share >= self.pass_mark), soft=share, explanation="checks only")

    async def rollout(self, item: TaskItem, skill_text: str, complete) -> RolloutResult:
        if self.agent is not None:
            return await self._agent_rollout(item, skill_text, complete)
        mode = item.data.get("replay")
        if mode == "tools" and self.tools is not None:
            return await self._tools_rollout(item, skill_text, complete)
        if mode in WORKSPACE_MODES:
            return await self._workspace_rollout(item, skill_text, complete, mode)
        files, history = self._session_read(item)
        shown = "\n\n".join(filter(None, [files.section(), history.section()]))
        messages = replay_messages(item, skill_text, shown)
        try:
            completion = await complete(messages)
            reply = completion.text.strip()
            verdict = await self._judge(item, reply)
        except (TransientError, RetriesExhausted) as exc:
            return self._failed(item, messages, str(exc))
        return self._scored(
            item,
            reply,
            verdict,
            trajectory=[*messages, {"role": "assistant", "content": completion.text}],
            usage=(completion.usage.input_tokens, completion.usage.output_tokens),
            latency_s=completion.latency_s,
            cached=completion.cached,
            lacking=[files.lacking(), _history_lacking(item, history)],
        )

    def _session_read(self, item: TaskItem) -> tuple[ReadFiles, HistoryOutput]:
        """What a chat replay's session read (files, history output), made once per item:
        it depends on the item and the night's tree, not on the skill, and its history
        repository is costly to build again for each rollout."""
        if item.id not in self._read_by_item:
            self._read_by_item[item.id] = (self._files_read(item), self._history_read(item))
        return self._read_by_item[item.id]

    def _files_read(self, item: TaskItem) -> ReadFiles:
        """The files a chat replay's session read, where the replay starts: in the tree a
        workspace replay of this night would copy (none without one)."""
        paths = [str(p) for p in item.data.get("read_files", [])]
        tree = self.workspace or self.tools
        if not paths or tree is None:
            return read_files(paths, None, None, None)
        with _start_tree(item, tree.project, tree.commit) as start:
            return read_files(paths, start.files, start.commit, item.data.get("project"))

    def _history_read(self, item: TaskItem) -> HistoryOutput:
        """What the history commands a chat replay's session ran print at its start
        commit, in the project a workspace replay of this night would copy (none without
        one)."""
        commands = [str(c) for c in item.data.get("history_commands", [])]
        tree = self.workspace or self.tools
        if not commands or tree is None or tree.commit is None:
            return history_output(commands, None)
        session = item.data.get("project")
        start = start_commit(
            tree.project, tree.commit, item.data.get("session_started"),
            item.data.get("session_commit"),
        )  # fmt: skip
        with history_repo(tree.project, start) as repo:
            return history_output(commands, repo, session_base(tree.project, session))

    async def _workspace_rollout(
        self, item: TaskItem, skill_text: str, complete, mode: str
    ) -> RolloutResult:
        """An agentic task on a chat target: never a bare chat call (the night skipped it
        when no runner is registered; a resumed night that lost it fails loudly)."""
        runner = workspace_runner(mode)
        if runner is None or self.workspace is None:
            raise EnvError(f"sleep: task {item.id} needs a {mode} replay: {MISSING[mode]}")

        where = self.workspace

        async def run(task: AgentTask, skill: str):
            return await runner(task, skill, complete, where)

        # a handoff is answered by the person's own agent: its commands are not seen, only
        # those it declares, run again by the night (sleep/night/declared_commands.py)
        return await self._agent_rollout(item, skill_text, run, where, commands_seen=False)

    async def _agent_rollout(
        self,
        item: TaskItem,
        skill_text: str,
        run_agent,
        where: AgentReplay | None = None,
        *,
        commands_seen: bool = True,
    ) -> RolloutResult:
        agent = where or self.agent
        assert agent is not None
        with _start_tree(item, agent.project, agent.commit, agent.keep_in) as start:
            return await self._agent_run(item, skill_text, run_agent, agent, start, commands_seen)

    async def _agent_run(
        self,
        item: TaskItem,
        skill_text: str,
        run_agent,
        agent: AgentReplay,
        start: StartTree,
        commands_seen: bool = True,
    ) -> RolloutResult:
        tree = start.edited
        commands = _commands(item)
        task = AgentTask(
            prompt=agent_prompt(item, tree),
            files=start.files,
            skill_name=agent.skill_name,
            check=self._check(item, skill_text, commands, agent.project),
            commit=start.commit,
        )
        prompt = {"role": "user", "content": task.prompt}
        try:
            outcome = await run_agent(task, skill_text)
            reply = with_diff(outcome.text, outcome.diff)
            checks = self._checked(item, skill_text, outcome.diff, outcome.check)
            declared = None if commands_seen else declared_results(outcome.events)
            verdict = await self._judge(item, reply, checks, declared)
        except (TransientError, RetriesExhausted) as exc:
            return self._failed(item, [*_edits_message(tree), prompt], str(exc))
        trajectory = [
            *_edits_message(tree),
            prompt,
            *summarize_events(outcome.events),
            {"role": "diff", "content": outcome.diff or "(no changes)"},
            *_left_out_message(tree, outcome),
            *([trajectory_message(checks)] if checks else []),
            *([declared_message(declared)] if declared is not None else []),
        ]
        ran = commands_in_events(outcome.events) if commands_seen else passed_commands(declared)
        return self._scored(
            item,
            reply,
            verdict,
            seen=evidence(outcome.text, outcome.diff, ran, agent.project),
            command_results=checks,
            trajectory=trajectory,
            usage=(outcome.usage.input_tokens, outcome.usage.output_tokens),
            latency_s=outcome.latency_s,
            cached=False,
            lacking=[_workspace_lacking(item, start)],
        )

    async def _tools_rollout(self, item: TaskItem, skill_text: str, complete) -> RolloutResult:
        commands = _commands(item)
        assert self.tools is not None
        with _start_tree(item, self.tools.project, self.tools.commit) as start:
            tree = start.edited
            prompt = agent_prompt(item, tree)
            try:
                run = await run_in_workspace(
                    replace(self.tools, project=start.files, commit=start.commit),
                    prompt,
                    skill_text,
                    complete,
                    check=(
                        self._check(item, skill_text, commands, self.tools.project)
                        if commands
                        else None
                    ),
                )
                reply = with_diff(run.final, run.diff)
                checks = self._checked(item, skill_text, run.diff, run.checked)
                verdict = await self._judge(item, reply, checks)
            except (TransientError, RetriesExhausted) as exc:
                messages = [*_edits_message(tree), {"role": "user", "content": prompt}]
                return self._failed(item, messages, str(exc))
        return self._scored(
            item,
            reply,
            verdict,
            seen=evidence(run.final, run.diff, run.commands, self.tools.project),
            command_results=checks,
            trajectory=[
                *_edits_message(tree),
                *run.trajectory,
                *([trajectory_message(checks)] if checks else []),
            ],
            usage=run.usage,
            latency_s=run.latency_s,
            cached=False,
            lacking=[_workspace_lacking(item, start)],
        )

    def _scored(
        self,
        item: TaskItem,
        reply: str,
        verdict: dict,
        *,
        seen: ReplayEvidence | None = None,
        command_results: list[CheckResult] | None = None,
        trajectory: list[Message],
        usage: tuple[int, int],
        latency_s: float,
        cached: bool,
        lacking: list[str] | None = None,
    ) -> RolloutResult:
        # the checks this replay's evidence can tell (a diff check says nothing of a chat
        # reply), then those it failed
        seen = seen or ReplayEvidence(reply)
        moot = not_applicable_checks(checks_of(item), seen)
        verdicts = [(c, c.evaluate(seen)) for c in checks_of(item) if c not in moot]
        told = [(c, r) for c, r in verdicts if r is not None]
        failed = [c for c, passed in told if not passed]
        soft = verdict["score"]
        if told:
            share = (len(told) - len(failed)) / len(told)
            soft = RUBRIC_WEIGHT * soft + (1 - RUBRIC_WEIGHT) * share
        explanation = f"judge {verdict['score']:.2f}: {verdict['reason']}"
        if told:
            explanation += f"; mined checks {len(told) - len(failed)}/{len(told)} passed"
            if failed:
                explanation += " (failed: " + ", ".join(c.describe() for c in failed) + ")"
        if moot:
            explanation += "; not applicable: " + ", ".join(
                f"{c.describe()} ({why})" for c, why in moot.items()
            )
        decision = decide(command_results or [], bool(item.data.get("judged_by_evidence", True)))
        if decision.soft is not None:
            soft = decision.soft
        if decision.note:
            explanation += f"; {decision.note}"
        hard = float(soft >= self.pass_mark)
        lacked = ""
        if not hard and not failed and decision.soft != 0.0:
            # failed with nothing it was given failing: a missing input may be why
            untold = [c for c, r in verdicts if r is None]
            lacked = lacked_inputs(lacking or [], untold, command_results or [])
        if lacked:
            explanation += f"; lacked inputs: {lacked} (not shown to the analysts as a failure)"
        return RolloutResult(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            **_reference(item),
            prediction=reply,
            hard=hard,
            soft=round(soft, 6),
            explanation=explanation,
            trajectory=trajectory,
            input_tokens=usage[0],
            output_tokens=usage[1],
            latency_s=latency_s,
            cached=cached,
            lacked_inputs=lacked,
            checks=_check_verdicts(told, command_results or []),
        )

    def _check(
        self, item: TaskItem, skill_text: str, commands: list[str], project: Path | None = None
    ) -> MemoCheck:
        """The replay's checks, run with the person's toolchain for `project` (the
        checkout the workspace was copied from)."""
        return MemoCheck(self.checks, item.id, skill_text, commands, self.check_timeout_s, project)

    def _checked(self, item: TaskItem, skill_text: str, diff: str, checked) -> list[CheckResult]:
        """The replay's check results, logged once per piece of work (a later round that
        brings the same work back adds nothing to the night's tally)."""
        results = results_of(checked, _commands(item))
        key = self._check(item, skill_text, _commands(item)).key(diff)
        self.checks.record(key, item.id, results)
        return results

    async def _judge(
        self,
        item: TaskItem,
        reply: str,
        checks: list[CheckResult] | None = None,
        declared: list[CheckResult] | None = None,
    ) -> dict:
        prompt = render_sleep_prompt(
            "judge",
            context=_judge_context(item),
            intent=item.question,
            rubric=item.answer,
            checks=judge_section(checks or []) + declared_section(declared),
            reply=reply,
        )
        answer = await ask_json(self.judge, [{"role": "user", "content": prompt}], VERDICT_SHAPE)
        if not answer.ok:
            raise JudgeFailed(
                f"the judge's reply for task {item.id} is unusable ({answer.error}); the night "
                f"stops without staging: {judge_advice(self.judge_backend)}"
            )
        return answer.value

    def _failed(self, item: TaskItem, messages: list[Message], error: str) -> RolloutResult:
        failed = RolloutResult.failed(item, messages, error, f"model error: {error}")
        return replace(failed, **_reference(item))


def _reference(item: TaskItem) -> dict[str, str]:
    """What the optimizer is shown the item is judged by: the preference it is an
    occurrence of (its id, which an edit for it names: sleep/prompts/analyst_guide.md), the
    rubric, the correction and the accepted answer, each labelled (sleep/mine/judged_by.py),
    not the judge's one block."""
    shown = item.data.get("judged_by", item.answer)
    ids = item.data.get("preferences") or []
    if ids:  # first, so no clipping loses the id an edit names
        shown = f"{'preferences' if len(ids) > 1 else 'preference'} {', '.join(ids)}\n{shown}"
    return {"reference": shown, "reference_label": ""}


def _check_verdicts(told: list[tuple[Check, bool]], commands: list[CheckResult]) -> dict[str, bool]:
    """Each mechanical check this replay applied, by its description: passed or not (a
    command that did not run is neither). The gate reads which of them flipped between the
    current skill and a candidate (sleep/night/preference_gate.py)."""
    out = {check.describe(): bool(passed) for check, passed in told}
    for result in commands:
        if result.status != "not-run":
            out[Check("command", result.command).describe()] = result.status == "pass"
    return out


def _workspace_lacking(item: TaskItem, start: StartTree) -> str:
    """Why a workspace replay lacks the git history its session read ('' when its
    workspace holds it, or its session read none)."""
    return NO_HISTORY if item.data.get("reads_history") and not start.history else ""


def _history_lacking(item: TaskItem, given: HistoryOutput) -> str:
    """Why a chat replay lacks the git history its session read ('' when the output of
    every history command it ran was shown, or its session read none)."""
    if not item.data.get("reads_history"):
        return ""
    return given.lacking() if given.shown or given.missing else NO_HISTORY


def _commands(item: TaskItem) -> list[str]:
    return [str(c) for c in item.data.get("command_checks", [])]
