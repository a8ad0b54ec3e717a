"""`repo_tasks`: small coding tasks in tiny repositories we wrote, done by a coding agent.

Each task is a folder `tasks/<id>/` holding `task.json` (the prompt the agent gets, the
checks, a reference solution for the optimizer's eyes only) and `repo/` (the files the
agent works on). A rollout asks the target for an agent run (`target_kind = "agent"`): the
model client copies `repo/` into a fresh workspace, places the skill where the agent reads
it, runs the agent, and then the checks run in that workspace:

    {"name": "tests pass", "run": ["python", "-m", "unittest", "-q"]}   exit status 0
    {"name": "changelog", "file": "CHANGELOG.md", "contains": "- calc.add:"}

Hard score = every check passed; soft = the share of checks that passed. `python` in a
check command is this interpreter, so checks run the same everywhere.

The agent's code runs in the checks, and the answers (task.json's reference and checks) sit
on the same disk, so neither the agent nor its code can reach them: the agent is confined
to its workspace (`AgentTask.workspace_only`, the CLI's own sandbox; only `repo/` is copied
in, never task.json) with read access to this Python, and each check command runs inside
the bubblewrap jail (envs/jailed_command.py) over the workspace. Without a working
bubblewrap the environment refuses in one line, unless `env.options.sandbox: unjailed`
chooses, by name, to run checks on the host with only a scrubbed environment (weaker).

It is the exec-target path of the engine and the shape Sleep's coding-task replays take.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.environment.contract import (
    SPLITS,
    AgentFn,
    EnvError,
    RolloutResult,
    Score,
    TaskItem,
)
from core.models.types import AgentTask, RetriesExhausted, TransientError
from envs.agent_rollout import agent_result, changes_and_text
from envs.jail import BUBBLEWRAP, JailUnavailable, jail_problem
from envs.jailed_command import run_jailed

NAME = "repo_tasks"
VERSION = "repo_tasks-1"
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "tasks"
UNJAILED = "unjailed"  # checks on the host, environment scrubbed only: the weaker mode
SANDBOXES = (BUBBLEWRAP, UNJAILED)
OPTIONS = {"skill_name": "repo-tasks", "check_timeout_s": 30.0, "sandbox": BUBBLEWRAP}


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    detail: str


def validate_options(options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise EnvError(
            f"repo_tasks: unknown env option(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(OPTIONS))}"
        )
    merged = {**OPTIONS, **options}
    if not isinstance(merged["skill_name"], str) or not merged["skill_name"].strip():
        raise EnvError("repo_tasks: env.options.skill_name must be a non-empty name")
    timeout = merged["check_timeout_s"]
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise EnvError("repo_tasks: env.options.check_timeout_s must be a positive number")
    if merged["sandbox"] not in SANDBOXES:
        raise EnvError(
            f"repo_tasks: env.options.sandbox must be one of {', '.join(SANDBOXES)} "
            f"(got {merged['sandbox']!r})"
        )
    return merged


def require_check_jail(sandbox: str) -> None:
    """Refuse, in one line, to run check commands outside the jail unless the user chose
    the weaker mode by name; say once when it is in use."""
    if sandbox == UNJAILED:
        logging.getLogger(__name__).warning(
            "repo_tasks: env.options.sandbox is %s: check commands run the agent's code on "
            "this machine with only a scrubbed environment",
            UNJAILED,
        )
        return
    problem = jail_problem()
    if problem:
        raise JailUnavailable(
            f"repo_tasks: {problem}, so check commands (the agent's code) cannot be jailed; "
            f"install it (apt install bubblewrap) or set env.options.sandbox: {UNJAILED} to "
            "run them unjailed (weaker)"
        )


def python_readable() -> tuple[Path, ...]:
    """What the agent's commands read to run this Python: its prefixes and executable's
    folder (never the task folders: only `repo/` is copied into the workspace)."""
    return tuple(
        sorted(
            {
                Path(sys.prefix),
                Path(os.path.realpath(sys.prefix)),
                Path(os.path.realpath(sys.base_prefix)),
                Path(os.path.realpath(sys.executable)).parent,
            }
        )
    )


def read_task(folder: Path) -> TaskItem:
    path = folder / "task.json"
    try:
        row = json.loads(path.read_text(encoding="utf-8"))
        checks = row["checks"]
        if not isinstance(checks, list) or not checks:
            raise ValueError("checks must be a non-empty list")
        for check in checks:
            if not isinstance(check, dict) or not (
                {"run"} <= set(check) or {"file", "contains"} <= set(check)
            ):
                raise ValueError(f"check {check!r} has neither run nor file+contains")
        item = TaskItem(
            id=row["id"],
            task_type=row.get("task_type", "task"),
            question=row["prompt"],
            answer=describe_reference(row),
            data={
                "checks": checks,
                "repo": str(folder / "repo"),
                "reference": row.get("reference"),
            },
        )
    except FileNotFoundError:
        raise EnvError(f"repo_tasks: task file not found: {path}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise EnvError(f"{path}: malformed task ({exc})") from None
    if item.id != folder.name:
        raise EnvError(f"{path}: id {item.id!r} does not match its folder name {folder.name!r}")
    if not (folder / "repo").is_dir():
        raise EnvError(f"repo_tasks: task {item.id} has no repo/ folder in {folder}")
    return item


def describe_reference(row: Mapping[str, Any]) -> str:
    """What passing looks like, for the optimizer (never shown to the agent)."""
    parts = []
    for check in row["checks"]:
        if "run" in check:
            parts.append(f"{check.get('name', 'check')}: `{' '.join(check['run'])}` exits 0")
        else:
            parts.append(
                f"{check.get('name', 'check')}: {check['file']} contains {check['contains']!r}"
            )
    reference = row.get("reference")
    if isinstance(reference, dict) and "file" in reference:
        parts.append(f"reference {reference['file']}:\n{reference.get('content', '')}")
    return "\n".join(parts)


def check_environment(workspace: Path) -> dict[str, str]:
    """What a check command runs with: the agent's code runs in it, so nothing of ours
    (API keys, tokens, the user's HOME), only a PATH to find its programs."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workspace),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _run_unjailed(argv: list[str], workspace: Path, timeout_s: float) -> tuple[int | None, str]:
    done = subprocess.run(
        argv,
        cwd=workspace,
        env=check_environment(workspace),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def _run_in_jail(argv: list[str], workspace: Path, timeout_s: float) -> tuple[int | None, str]:
    env = {k: v for k, v in check_environment(workspace).items() if k not in ("PATH", "HOME")}
    done = run_jailed(argv, workspace, timeout_s, env)
    return done.status, done.output


def run_checks(
    workspace: Path, checks: list[dict[str, Any]], timeout_s: float, *, jailed: bool = True
) -> list[CheckResult]:
    """Every check, in order, in the agent's workspace (after the agent finished); a
    command runs in the jail unless `jailed` is False (env.options.sandbox: unjailed)."""
    out = []
    for check in checks:
        name = str(check.get("name") or "check")
        if "run" in check:
            argv = [sys.executable if a == "python" else str(a) for a in check["run"]]
            try:
                status, text = (_run_in_jail if jailed else _run_unjailed)(
                    argv, workspace, timeout_s
                )
            except subprocess.TimeoutExpired:
                status, text = None, ""
            except OSError as exc:
                out.append(CheckResult(name, False, f"could not run: {exc.strerror or exc}"))
                continue
            if status is None:
                out.append(CheckResult(name, False, f"timed out after {timeout_s:g}s"))
                continue
            tail = " ".join(text.split())[-200:]
            out.append(CheckResult(name, status == 0, f"exit {status}: {tail}"))
        else:
            target = workspace / check["file"]
            try:
                text = target.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                out.append(CheckResult(name, False, f"{check['file']} is missing"))
                continue
            found = check["contains"] in text
            detail = "found" if found else f"{check['file']} does not contain {check['contains']!r}"
            out.append(CheckResult(name, found, detail))
    return out


def score_checks(results: list[CheckResult], reference: str) -> Score:
    passed = sum(r.passed for r in results)
    lines = [f"{r.name}: {'passed' if r.passed else 'FAILED'} ({r.detail})" for r in results]
    hard = 1.0 if results and passed == len(results) else 0.0
    soft = passed / len(results) if results else 0.0
    explanation = (
        f"{passed} of {len(results)} checks passed — "
        + "; ".join(lines)
        + f"\nexpected:\n{reference}"
    )
    return Score(hard=hard, soft=soft, explanation=explanation)


class RepoTasksEnvironment:
    name = NAME
    version = VERSION
    target_kind = "agent"

    def __init__(
        self,
        manifest_dir: Path,
        data_dir: Path | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        self.manifest_dir = Path(manifest_dir)
        self.data_dir = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
        self.options = validate_options(options or {})
        require_check_jail(self.options["sandbox"])

    def load_split(self, split: str) -> list[TaskItem]:
        if split not in SPLITS:
            raise EnvError(f"repo_tasks: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
        path = self.manifest_dir / f"{split}.json"
        try:
            ids = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise EnvError(
                f"split manifest not found: {path} (point env.manifest_dir at it)"
            ) from None
        except json.JSONDecodeError as exc:
            raise EnvError(f"{path}: malformed manifest JSON ({exc.msg})") from None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise EnvError(f"{path}: a manifest must be a JSON list of task ids")
        if len(set(ids)) != len(ids):
            raise EnvError(f"{path}: a task id is listed more than once")
        return [read_task(self.data_dir / task_id) for task_id in ids]

    def score(self, item: TaskItem, prediction: str) -> Score:
        """Scoring needs the workspace the agent left, so it happens inside `rollout`; a
        bare prediction (text) cannot pass any check."""
        return score_checks([CheckResult("agent run", False, "no workspace to check")], item.answer)

    async def rollout(self, item: TaskItem, skill_text: str, complete: AgentFn) -> RolloutResult:
        checks = item.data["checks"]
        timeout = float(self.options["check_timeout_s"])
        jailed = self.options["sandbox"] == BUBBLEWRAP
        task = AgentTask(
            prompt=item.question,
            files=Path(item.data["repo"]),
            skill_name=self.options["skill_name"],
            check=lambda workspace: run_checks(workspace, checks, timeout, jailed=jailed),
            # task.json (the checks, the reference) is on the same disk: out of reach
            workspace_only=True,
            readable=python_readable(),
        )
        prompt = {"role": "user", "content": item.question}
        try:
            outcome = await complete(task, skill_text)
        except (TransientError, RetriesExhausted) as exc:
            # Only an agent that kept failing (or hanging) lands here: recorded as a model
            # error, which the engine never counts as a score (see rollout_runner).
            return RolloutResult.failed(item, [prompt], str(exc), f"model error: {exc}")
        score = score_checks(list(outcome.check), item.answer)
        return agent_result(item, changes_and_text(outcome), score, item.question, outcome)
