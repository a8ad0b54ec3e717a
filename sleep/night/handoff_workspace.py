"""The `handoff-workspace` replay: an agentic task on the handoff backend is done by the
person's own agent (e.g. the plugin's `/skillopt-handoff`) in a workspace we prepare.

Why: on handoff there is no model for us to drive through a tool loop, and a bare chat
prompt would make the answerer guess at files it cannot see. So, per task and per skill
version, the night prepares a fresh copy of the project at the task's start commit (its
last before the session began, sleep/night/edited_tree.commit_before) with that
version of the skill where the agent reads it (core/agent_loop/workspace.py, as the `tools`
mode does), and writes a handoff prompt (`NNNN-replay-workspace-<hash>.md`) that names the
copy, gives the skill (as the system message), the task and the turns it follows up on, and
asks for the task to be done there and a final message written as the answer. The night
waits (exit 3) like for any handoff prompt. Once answered, the trajectory is that final
message plus the workspace's diff against the baseline (clipped, secrets masked as for any
answer), judged like a `tools` replay.

    <night>/handoff/workspaces/<key>/work       the copy the answerer works in
    <night>/handoff/workspaces/<key>/git        its git directory, beside it (not in it)
    <night>/handoff/workspaces/<key>/stale.json answers read after the copy was lost
    <night>/handoff/workspaces/<key>/read.json  the diff as the answer was first read with
    <night>/handoff/workspaces/<key>/declared.json  the commands the answer declared, re-run

They are removed when the night finishes (`discard`).
`<key>` hashes the project, commit, skill place, skill text and task prompt, so a re-run
finds the same copy and writes the same prompt (same text, same file name); a candidate
skill gets a copy of its own. A copy deleted before its answer was read cannot hold the
edits the answer speaks of: the copy is prepared again, that answer is rejected (never
used, never cached) with the reason, and a repair prompt asks for the task to be redone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shutil
import time
from pathlib import Path

from core.agent_loop.workspace import Workspace, existing_workspace, prepare_workspace
from core.atomic import write_json
from core.environment.contract import EnvError
from core.models.call_label import labelled
from core.models.handoff import AnswerRejected, accept_answer, mask_answer, reject_answer
from core.models.handoff_files import HandoffFolder, digest
from core.models.types import AgentOutcome, AgentTask, Completion, Message
from sleep.night.check_memo import MemoCheck, for_diff
from sleep.night.declared_commands import DECLARE_INSTRUCTIONS, declared_event, rerun
from sleep.night.history import seed_history
from sleep.night.replay_checks import DEFAULT_CHECK_TIMEOUT_S, CheckResult
from sleep.night.replay_modes import register_workspace_runner

KIND = "replay-workspace"
MODE = "handoff-workspace"
FOLDER = "workspaces"
REPAIRS = 1
EXPECTS = (
    "free text: the final message of the task done in the prepared workspace, ending with "
    "`Commands run:` and the commands run there (each is run again); the edits left in "
    "that workspace are read with it (its diff against the recorded commit)"
)


def skill_version(skill_text: str) -> str:
    """A short name for one version of the skill, stated in the prompt (a candidate and
    the current skill are told apart by it)."""
    return hashlib.sha256(skill_text.encode("utf-8")).hexdigest()[:12]


def workspace_key(task: AgentTask, skill_text: str, skill_path: str) -> str:
    identity = [str(task.files), task.commit, skill_path, skill_text, task.prompt]
    return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()[:16]


def prepared(
    place: Path, task: AgentTask, skill_text: str, skill_path: str
) -> tuple[Workspace, bool]:
    """The workspace kept at `place`, prepared now when it is not there (True) — built
    beside it and moved in place, so an interrupted copy is never taken for a whole one."""
    found = existing_workspace(place)
    if found is not None:
        return found, False
    if place.is_symlink():  # the folder swapped for a link: drop the link, never follow it
        place.unlink()
    shutil.rmtree(place, ignore_errors=True)  # what is left of a damaged one
    partial = place.with_name(place.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        ready = prepare_workspace(
            partial, task.files, task.commit, skill_path=skill_path, skill_text=skill_text
        )
        # a history-reading task's copy holds the history up to its start (history.py)
        seed_history(ready.root, task.files)
        partial.rename(place)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    found = existing_workspace(place)
    assert found is not None
    return found, True


def _real_folder(folder: Path) -> None:
    """`folder` as a folder of its own: a symlink put in its place is refused, so nothing
    of a workspace is written through it."""
    if folder.is_symlink():
        raise EnvError(
            f"sleep: {folder} is a symlink, not the night's workspaces folder; remove it "
            "and run again (nothing was written through it)"
        )
    folder.mkdir(parents=True, exist_ok=True)


def prompt_messages(
    task: AgentTask, skill_text: str, skill_path: str, workspace: Workspace
) -> list[Message]:
    """The handoff prompt's messages: the skill as the system message (the answerer's agent
    may not read the copy's instruction file on its own), then where and what to do."""
    version = skill_version(skill_text)
    if skill_text.strip():
        skill_line = f"skill version {version}, placed at `{skill_path}` (also the system message)"
    else:
        skill_line = "no skill (this replay is the baseline without one)"
    source = (
        f"the state it had when the person asked: commit {task.commit} (its last commit "
        "before the session began), with the session's earlier edits, if any, applied"
        if task.commit
        else "the state it had when the person asked: its files, with the session's "
        "earlier edits, if any, applied"
    )
    body = "\n".join(
        [
            "Do this task as a coding agent, in the workspace prepared for it:",
            "",
            f"    {workspace.root}",
            "",
            f"That folder is a fresh copy of the project at {source}, with {skill_line}.",
            "Work only inside it: read and edit its files and run commands there, as the task",
            "needs. Touch nothing outside it, and do nothing that acts outside the project (no",
            "pushes, posts, deploys or mail). It is not a git repository: do not commit.",
            "",
            "When you are done, write your final message (what you did and found, as you would",
            "end the task for the person who asked) as the reply. The answer is that final",
            "message together with the edits you left in the workspace: both are read.",
            *DECLARE_INSTRUCTIONS,
            "",
            "## The task",
            "",
            task.prompt,
        ]
    )
    messages: list[Message] = []
    if skill_text.strip():
        messages.append({"role": "system", "content": skill_text})
    messages.append({"role": "user", "content": body})
    return messages


def repair_text(workspace: Workspace) -> str:
    return (
        f"The workspace {workspace.root} was deleted before this answer was read, so the edits "
        "it speaks of are gone. The workspace has been prepared again (the same commit and "
        "skill). Do the task again there, then write your final message as the reply."
    )


class _Stale:
    """Answers read while their workspace had just been prepared again: they describe edits
    that are gone, so they are never used (a rewritten answer is a new one)."""

    def __init__(self, place: Path) -> None:
        self.path = place / "stale.json"

    def digests(self) -> set[str]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, list):
                return {str(d) for d in data}
        return set()

    def add(self, text: str) -> None:
        write_json(self.path, sorted(self.digests() | {digest(text)}))


async def run_handoff_workspace(task: AgentTask, skill_text: str, complete, where) -> AgentOutcome:
    """One agentic task through the person's agent; HandoffWaiting while unanswered."""
    if where is None or where.keep_in is None:
        raise EnvError(
            "sleep: a handoff-workspace replay keeps its workspace in the night's folder, "
            "and none was given; run it through `skillopt sleep run`"
        )
    started = time.monotonic()
    skill_path = where.skill_path
    place = Path(where.keep_in) / workspace_key(task, skill_text, skill_path)
    _real_folder(place.parent)
    # Prepared in the event loop's own thread, on purpose: the first HandoffWaiting of a
    # round cancels the other workers (core/training/rollout_runner.py), so a worker that
    # yielded before its call (a thread) would write its workspace and no prompt, and a
    # night of N tasks would take N rounds instead of one.
    workspace, fresh = prepared(place, task, skill_text, skill_path)
    stale = _Stale(place)
    conversation = prompt_messages(task, skill_text, skill_path, workspace)
    rejected = ""
    for attempt in range(REPAIRS + 1):
        with labelled(KIND, repair=attempt, repair_of=rejected, expects=EXPECTS):
            completion = await complete(conversation)
        if fresh and completion.answer_file:  # answered for a copy that is gone
            stale.add(completion.text)
        if digest(completion.text) not in stale.digests():
            accept_answer(completion)
            if rejected and completion.answer_file:  # the repair's answer stands for it
                HandoffFolder(Path(completion.answer_file).parent.parent).accept(rejected)
            return await _outcome(task, workspace, completion, started)
        reject_answer(completion, _lost(workspace))
        rejected = Path(completion.answer_file or "").name
        if attempt == REPAIRS:
            raise AnswerRejected(
                f"handoff: {completion.answer_file} was not used: {_lost(workspace)}"
            )
        conversation = [
            *conversation,
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": repair_text(workspace)},
        ]
    raise AssertionError("unreachable")  # pragma: no cover


def _lost(workspace: Workspace) -> str:
    return (
        f"its workspace {workspace.root} was deleted before the answer was read, so the "
        "edits are gone; it is prepared again: do the task there again and write the answer "
        "again, then run the same command"
    )


def read_diff(place: Path, workspace: Workspace, answer: str) -> str:
    """The workspace's diff as it was when this answer was first read (kept in read.json):
    a later run — the judge's answer was still to come — judges the same edits, not what
    the task's check or anyone else left in the copy since. A new answer reads it anew."""
    saved = place / "read.json"
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(saved.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("answer") == digest(answer):
            return str(data.get("diff", ""))
    diff = mask_answer(workspace.diff())  # not in a thread either: see the preparation
    write_json(saved, {"answer": digest(answer), "diff": diff})
    return diff


async def _outcome(
    task: AgentTask, workspace: Workspace, completion: Completion, started: float
) -> AgentOutcome:
    diff = read_diff(workspace.root.parent, workspace, completion.text)
    # Kept by the diff read: a later round brings the same work back, its checks are not
    # run again (sleep/night/check_memo.py).
    check = await asyncio.to_thread(for_diff(task.check, diff), workspace.root)
    text = completion.text
    events = [{"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}]
    declared = await asyncio.to_thread(_declared, task, workspace, text)
    if declared is not None:
        events.append(declared_event(declared))
    return AgentOutcome(
        text=text,
        events=events,
        diff=diff,
        exit_status=0,
        usage=completion.usage,
        latency_s=time.monotonic() - started,
        model=completion.model,
        session_id="",
        check=check,
        workspace=str(workspace.root),
        left_out=workspace.left_out,
    )


def _declared(task: AgentTask, workspace: Workspace, answer: str) -> list[CheckResult] | None:
    """The commands the answer declares, run again in the jail once per answer (kept in
    declared.json: a later round that brings the same answer back does not run them
    again). Run after the task's own checks, on the workspace as they left it."""
    saved = workspace.root.parent / "declared.json"
    with contextlib.suppress(OSError, ValueError, TypeError):
        data = json.loads(saved.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("answer") == digest(answer):
            found = data.get("results")
            return None if found is None else [CheckResult.from_dict(r) for r in found]
    check = task.check
    timeout_s = check.timeout_s if isinstance(check, MemoCheck) else DEFAULT_CHECK_TIMEOUT_S
    project = check.project if isinstance(check, MemoCheck) else None
    results = rerun(answer, workspace.root, timeout_s, project)
    found = None if results is None else [r.to_dict() for r in results]
    write_json(saved, {"answer": digest(answer), "results": found})
    return results


def discard(handoff_dir: Path) -> None:
    """A finished night's workspaces: never read again (a finished night is never resumed,
    and its rollouts hold every diff), so they are removed — project copies add up, one per
    task and skill version."""
    shutil.rmtree(Path(handoff_dir) / FOLDER, ignore_errors=True)


register_workspace_runner(MODE, run_handoff_workspace)
