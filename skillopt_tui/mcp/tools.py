"""What each MCP tool does. Short, read-only and git-only work runs in-process on the engine
(the skills repository, the Sleep state); nights and training run as `skillopt` children
(subprocess_tool.py). Every function returns plain JSON data or raises a UserError /
ToolFailure whose message is the one line the CLI would print. Every path argument passes
through the server's roots (roots.py) first."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from skillopt_tui.mcp import arguments as a
from skillopt_tui.mcp.confirmation import MAX_WRONG, ConfirmationCodes
from skillopt_tui.mcp.roots import Roots
from skillopt_tui.mcp.subprocess_tool import ProgressFn, run_skillopt


@dataclass
class ServerDefaults:
    """What `skillopt mcp` was started with; a tool's own arguments override it."""

    state_dir: Path | None = None
    skills_repo: Path | None = None
    runs_dir: Path | None = None
    extra_roots: tuple[Path, ...] = ()  # `skillopt mcp --root DIR`
    codes: ConfirmationCodes = field(default_factory=ConfirmationCodes)
    roots: Roots = field(init=False)

    def __post_init__(self) -> None:
        from sleep.harvest.run import default_state_dir

        configured = [
            self.state_dir or default_state_dir(),
            self.skills_repo,
            self.runs_dir or Path("runs"),
            *self.extra_roots,
        ]
        self.roots = Roots.of(configured)

    def path(self, argument: str, value: str | None) -> Path | None:
        """A path argument, confined to the roots (None when not given)."""
        if value is None:
            return None
        from sleep.harvest.run import default_state_dir

        roots = self.roots.with_recorded(self.state_dir or default_state_dir())
        return roots.confine(argument, value)


class ConfirmationNeeded(UserError):
    """A changing tool was called without the user's code, or with a wrong one."""


def _state_dir(args: a.StateArgs, defaults: ServerDefaults) -> Path:
    from sleep.harvest.run import default_state_dir

    chosen = defaults.path("state_dir", args.state_dir) or defaults.state_dir
    return Path(chosen or default_state_dir()).expanduser().absolute()


def _repo(args: a.RepoArgs, defaults: ServerDefaults):
    from core.skills_repo import SkillsRepo
    from sleep.state.settings import load_settings

    path = defaults.path("skills_repo", args.skills_repo) or defaults.skills_repo
    if path is None:
        path = load_settings(_state_dir(args, defaults)).skills_repo
    if path is None:
        raise UserError(
            "no skills repository: pass skills_repo, start `skillopt mcp --skills-repo PATH`, "
            "or run `skillopt sleep init` first"
        )
    return SkillsRepo.open(Path(path).expanduser())


async def sleep_status(args: a.SleepStatusArgs, defaults: ServerDefaults, progress: ProgressFn):
    from core.models.handoff import pending_prompts
    from sleep.state.status import night_status

    state = _state_dir(args, defaults)
    status = night_status(state)
    for night in status["nights"]:
        handoff = state / "nights" / night["night_id"] / "handoff"
        night["handoff_dir"] = str(handoff)
        night["pending_prompts"] = [str(p) for p in pending_prompts(handoff)]
    return status


def _night_argv(command: str, args: a.NightArgs, defaults: ServerDefaults) -> list[str]:
    argv = ["sleep", command, "--json", "--state-dir", str(_state_dir(args, defaults))]
    repo = defaults.path("skills_repo", args.skills_repo) or defaults.skills_repo
    if repo:
        argv += ["--skills-repo", str(repo)]
    if args.project:
        argv += ["--project", str(defaults.path("project", args.project))]
    if args.skill:
        argv += ["--skill", args.skill]
    if args.backend:
        argv += ["--backend", args.backend]
    return argv


async def sleep_dry_run(args: a.SleepDryRunArgs, defaults: ServerDefaults, progress: ProgressFn):
    return (await run_skillopt(_night_argv("dry-run", args, defaults), progress)).data


async def sleep_run(args: a.SleepRunArgs, defaults: ServerDefaults, progress: ProgressFn):
    """Never with --auto-adopt: what a night stages waits for sleep_review and the user."""
    return (await run_skillopt(_night_argv("run", args, defaults), progress)).data


def _diff_json(repo, staged: str) -> dict[str, Any]:
    diff = repo.diff(staged)
    data = diff.to_dict()
    data["hunk_count"] = len(diff.hunks)
    return data


async def sleep_review(args: a.SleepReviewArgs, defaults: ServerDefaults, progress: ProgressFn):
    repo = _repo(args, defaults)
    if args.staged:
        return {"repo": str(repo.path), "staged": [_diff_json(repo, args.staged)]}
    branches = repo.staged_branches()
    return {"repo": str(repo.path), "staged": [_diff_json(repo, b.name) for b in branches]}


def _check_code(defaults: ServerDefaults, action: dict[str, Any], given: str | None, preview):
    if given is None:
        return {
            "confirmed": False,
            "preview": preview,
            "confirmation_code": defaults.codes.code_for(action),
            "next": "Show this preview to the user and ask them to type the code back if they "
            f"agree; then call {action['tool']} again with the same arguments and confirm set "
            "to what they typed. Do not supply the code yourself.",
        }
    verdict = defaults.codes.check(action, given)
    if verdict == "wrong":
        raise ConfirmationNeeded(
            f"{action['tool']}: the confirmation code does not match this change; ask the user "
            "to type the code from the preview again"
        )
    if verdict == "void":
        raise ConfirmationNeeded(
            f"{action['tool']}: no confirmation pending for this change (never previewed, "
            f"already used, main moved, or {MAX_WRONG} wrong codes voided it); call it again "
            "without confirm for a new preview and code"
        )
    return None


async def sleep_adopt(args: a.SleepAdoptArgs, defaults: ServerDefaults, progress: ProgressFn):
    repo = _repo(args, defaults)
    diff = repo.diff(args.staged)
    numbers = sorted(set(args.hunks)) if args.hunks else [h.index for h in diff.hunks]
    unknown = [n for n in numbers if n not in {h.index for h in diff.hunks}]
    if unknown:
        raise UserError(
            f"{diff.branch} has hunks 1-{len(diff.hunks)}; no hunk {unknown[0]} (see sleep_review)"
        )
    action = {
        "tool": "sleep_adopt",
        "repo": str(repo.path),
        "staged": diff.branch,
        "head": diff.head,
        "hunks": numbers,
        "main": repo.main_sha(),
    }
    preview = {
        "staged": diff.branch,
        "skill": diff.skill,
        "hunks": [h.to_dict() for h in diff.hunks if h.index in numbers],
    }
    pending = _check_code(defaults, action, args.confirm, preview)
    if pending is not None:
        return pending
    result = repo.adopt(diff.branch, args.hunks and numbers, force=False)
    return {"confirmed": True, **asdict(result)}


async def sleep_rollback(args: a.SleepRollbackArgs, defaults: ServerDefaults, progress: ProgressFn):
    repo = _repo(args, defaults)
    adoption = _adoption_to_revert(repo, args.target)
    action = {
        "tool": "sleep_rollback",
        "repo": str(repo.path),
        "target": adoption.sha,
        "main": repo.main_sha(),
    }
    preview = {
        "reverts": adoption.sha,
        "subject": adoption.subject,
        "diff": repo.show(adoption.sha),
    }
    pending = _check_code(defaults, action, args.confirm, preview)
    if pending is not None:
        return pending
    return {"confirmed": True, "commit": repo.rollback(adoption.sha, force=False)}


def _adoption_to_revert(repo, target: str | None):
    """The log entry rollback would revert, so the preview shows exactly that commit."""
    names = {s.name for s in repo.list_skills()}
    skill = target if target in names else None
    entries = repo.log(skill)
    if target and skill is None:
        sha = repo.git.rev(target)
        match = next((e for e in entries if e.sha == sha), None)
        if match is None:
            raise UserError(f"{target!r} is neither a skill nor a commit on main of {repo.path}")
        return match
    adoption = next((e for e in entries if e.kind == "adopt"), None)
    if adoption is None:
        raise UserError(
            f"no adoption to roll back in {repo.path}" + (f" for {skill}" if skill else "")
        )
    return adoption


async def train(args: a.TrainArgs, defaults: ServerDefaults, progress: ProgressFn):
    argv = ["train", "--config", str(defaults.path("config", args.config))]
    for option, value in (
        ("--out", defaults.path("out", args.out)),
        ("--skills-repo", defaults.path("skills_repo", args.skills_repo)),
        ("--skill", args.skill),
    ):
        if value:
            argv += [option, str(value)]
    for item in args.set or []:
        argv += ["--set", item]
    if args.estimate:  # a text report, not JSON
        result = await run_skillopt([*argv, "--estimate"], progress)
        return {"estimate": (result.data or {}).get("output", "")}
    result = await run_skillopt([*argv, "--json"], progress)
    return {"stopped": result.exit_code != 0, **(result.data or {})}


async def eval_(args: a.EvalArgs, defaults: ServerDefaults, progress: ProgressFn):
    config, skill = defaults.path("config", args.config), defaults.path("skill", args.skill)
    argv = ["eval", "--json", "--config", str(config), "--skill", str(skill), "--split", args.split]
    for item in args.set or []:
        argv += ["--set", item]
    return (await run_skillopt(argv, progress)).data


async def runs(args: a.RunsArgs, defaults: ServerDefaults, progress: ProgressFn):
    from core.run.directory import list_runs

    folder = defaults.path("runs_dir", args.runs_dir) or defaults.runs_dir or Path("runs")
    if folder.exists() and not folder.is_dir():
        raise UserError(f"runs_dir {folder} is not a directory; give the folder of runs")
    return {"runs_dir": str(folder.absolute()), "runs": [i.to_dict() for i in list_runs(folder)]}
