"""`skillopt sleep init | run | dry-run | status | schedule | unschedule`: the night from
the shell and from cron. `harvest` lives in sleep_cmds.py; these join the same group."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json

EXIT_STOPPED = 3


class SleepNightUsageError(UserError):
    """Bad command-line input for a night command."""


StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", metavar="DIR", help="Sleep state (default: ~/.local/state/skillopt/sleep)."
    ),
]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        metavar="PATH",
        help="The project (default: recorded by init, else the current directory).",
    ),
]
RepoOpt = Annotated[
    Path | None,
    typer.Option(
        "--skills-repo", metavar="PATH", help="The skills repository (default: recorded by init)."
    ),
]
SkillOpt = Annotated[
    str | None,
    typer.Option(
        "--skill", metavar="NAME", help="Improve only this skill (default: route by transcripts)."
    ),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        metavar="NAME",
        help="auto, handoff, or any model backend (openai, anthropic, claude_code, codex, ...).",
    ),
]
ClaudeHome = Annotated[
    str | None,
    typer.Option("--claude-home", metavar="DIR", help="Claude Code root(s), comma-separated."),
]
CodexHome = Annotated[str | None, typer.Option("--codex-home", metavar="DIR", help="Codex root.")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", metavar="FILE", help="A run config for the night (models, budget)."),
]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help="Override a config key.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]
AutomationOpt = Annotated[
    bool, typer.Option("--include-automation", help="Also mine sessions no person typed in.")
]


def _state_dir(state_dir: Path | None) -> Path:
    from sleep.harvest import default_state_dir

    return (state_dir or default_state_dir()).expanduser().absolute()


def _settings(state_dir: Path, **flags):
    from sleep.settings import load_settings

    settings = load_settings(state_dir)
    updates = {k: v for k, v in flags.items() if v is not None}
    return settings.model_copy(update=updates)


def _night(state_dir: Path, settings, config_path, sets, *, dry: bool, backend_flag=None):
    """A ready Night from the recorded settings and this command's flags."""
    from core.config import load_config
    from core.skills_repo import SkillsRepo
    from sleep.harvest import HarvestOptions, harvest
    from sleep.night import Night, night_defaults

    if not settings.skills_repo:
        raise SleepNightUsageError(
            "no skills repository: run `skillopt sleep init --project PATH` first, or pass --skills-repo"
        )
    project = Path(settings.project or Path.cwd()).expanduser().absolute()
    if not project.is_dir():
        raise SleepNightUsageError(f"--project {project}: no such directory")
    repo = SkillsRepo.open(settings.skills_repo)
    overrides = list(sets or [])
    # The miner stays as the config has it: the heuristic miner unless a night config
    # names a model for it (a model miner costs calls; see sleep/mine_model.py).
    roles = ("target", "optimizer", "judge")
    if backend_flag is not None:  # the command line's --backend: every role but the miner
        overrides = [f"models.{r}.backend={backend_flag}" for r in roles] + overrides
    config = load_config(config_path or settings.config or night_defaults(), overrides)
    # The recorded backend fills the roles the config leaves on `auto`.
    backend = backend_flag or settings.backend or "handoff"
    for role in roles:
        rc = config.models.role(role)
        if rc.backend == "auto" and backend != "auto":
            rc.backend = backend
    chosen = ", ".join(sorted({f"{config.models.role(r).backend}" for r in roles}))

    def harvested():
        result = harvest(
            HarvestOptions(
                state_dir=state_dir,
                project=project,
                claude_home=settings.claude_home,
                codex_home=settings.codex_home,
                include_automation=settings.include_automation,
                commit=not dry,
            )
        )
        for skipped in result.skipped:
            print(f"skillopt: sleep: skipped {skipped.file}: {skipped.reason}", file=sys.stderr)
        return [s.to_json() for s in result.sessions]

    night = Night(
        state_dir=state_dir,
        repo=repo,
        config=config,
        harvest=harvested,
        project=project,
        skill=settings.skill,
        val_fraction=settings.val_fraction,
        test_fraction=settings.test_fraction,
        max_tasks=settings.max_tasks,
        pass_mark=settings.pass_mark,
        include_automation=settings.include_automation,
        auto_adopt=settings.auto_adopt,
        on_line=lambda line: print(f"skillopt: sleep: {line}", file=sys.stderr),
        dry=dry,
    )
    return night, chosen


def _night_from_flags(
    state_dir, config, sets, backend, *, dry: bool, project, skills_repo, **flags
):
    """The recorded settings with this command's flags over them, and the Night they make.
    `--backend` is not a setting: it overrides every role but the miner for this night."""
    state = _state_dir(state_dir)
    flags = {k: (v or None) if isinstance(v, bool) else v for k, v in flags.items()}
    settings = _settings(state, project=_abs(project), skills_repo=_abs(skills_repo), **flags)
    return _night(state, settings, config, sets, dry=dry, backend_flag=backend)


def run_cmd(
    project: ProjectOpt = None,
    skills_repo: RepoOpt = None,
    skill: SkillOpt = None,
    backend: BackendOpt = None,
    claude_home: ClaudeHome = None,
    codex_home: CodexHome = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    include_automation: AutomationOpt = False,
    auto_adopt: Annotated[
        bool,
        typer.Option(
            "--auto-adopt", help="Adopt and deploy what the gate accepts (off: stage for review)."
        ),
    ] = False,
    state_dir: StateDir = None,
    as_json: JsonOpt = False,
) -> None:
    """Run tonight's night: harvest, mine, replay, judge, gate and stage for review."""
    from sleep.night import run_night

    night, chosen = _night_from_flags(
        state_dir, config, set_, backend, dry=False, project=project, skills_repo=skills_repo,
        skill=skill, claude_home=claude_home, codex_home=codex_home,
        include_automation=include_automation, auto_adopt=auto_adopt,
    )  # fmt: skip
    print(f"skillopt: sleep: night {night.night_id}, backend {chosen}", file=sys.stderr)
    result = run_night(night)
    if as_json:
        emit_json(result.to_dict())
    else:
        for skill_name, outcome in result.skills.items():
            typer.echo(_outcome_line(skill_name, outcome))
        typer.echo(result.message)
    if result.status == "failed":
        raise typer.Exit(1)
    if result.status in ("waiting", "stopped"):
        raise typer.Exit(EXIT_STOPPED)


def _outcome_line(skill: str, o: dict) -> str:
    scores = ""
    if o.get("baseline_val") is not None:
        scores = f" val {o['baseline_val']:.3f} -> {o.get('best_val') or 0:.3f}"
    staged = f", staged {o['staged']}" if o.get("staged") else ""
    return f"{skill}: {o['status']} ({o.get('train', 0)} train / {o.get('val', 0)} val tasks){scores}{staged}"


def dry_run_cmd(
    project: ProjectOpt = None,
    skills_repo: RepoOpt = None,
    skill: SkillOpt = None,
    backend: BackendOpt = None,
    claude_home: ClaudeHome = None,
    codex_home: CodexHome = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    include_automation: AutomationOpt = False,
    state_dir: StateDir = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what tonight would do (sessions, tasks per skill, estimated calls and cost); writes nothing."""
    import asyncio

    from sleep.estimate import estimate_night

    night, chosen = _night_from_flags(
        state_dir, config, set_, backend, dry=True, project=project, skills_repo=skills_repo,
        skill=skill, claude_home=claude_home, codex_home=codex_home,
        include_automation=include_automation,
    )  # fmt: skip

    async def planned():
        plan = await night.plan()
        return plan, await estimate_night(night, plan)

    plan, estimates = asyncio.run(planned())
    if as_json:
        emit_json(
            {
                "night_id": plan.night_id,
                "backend": chosen,
                "sessions": plan.sessions,
                "automation_skipped": plan.automation_skipped,
                "skills": plan.routes,
                "estimate": estimates,
            }
        )
        return
    typer.echo(
        f"night {plan.night_id} (backend {chosen}): {plan.sessions} session(s), "
        f"{plan.automation_skipped} automation session(s) left out"
    )
    for route in plan.routes:
        typer.echo(
            f"  {route['skill']}: {route['train']} train / {route['val']} val / "
            f"{route['test']} test tasks from {route['sessions']} session(s) ({route['routed_by']})"
        )
        if route["skill"] in estimates:
            typer.echo(f"    {estimates[route['skill']]}")


def status_cmd(state_dir: StateDir = None, as_json: JsonOpt = False) -> None:
    """Recorded settings, recent nights and handoff prompts waiting for answers."""
    from sleep.status import night_status

    status = night_status(_state_dir(state_dir))
    if as_json:
        emit_json(status)
        return
    s = status["settings"]
    typer.echo(f"state: {status['state_dir']}")
    typer.echo(
        f"project: {s.get('project') or '-'} · skills repo: {s.get('skills_repo') or '-'} · backend: {s.get('backend') or 'handoff'}"
    )
    typer.echo(f"scheduled: {status['scheduled'] or 'no'}")
    if not status["nights"]:
        typer.echo("no nights yet: run `skillopt sleep run` (or `sleep dry-run` first)")
    for n in status["nights"]:
        staged = (
            ", ".join(_branch_now(v) for v in n["skills"].values() if v.get("staged"))
            or "nothing staged"
        )
        pending = f", {n['pending']} handoff answer(s) waiting" if n.get("pending") else ""
        typer.echo(f"{n['night_id']}: {n['status']} — {staged}{pending}")


def _branch_now(outcome: dict) -> str:
    """The branch a night staged, with what became of it when it is no longer staged."""
    state = outcome.get("branch_state", "staged")
    return outcome["staged"] + ("" if state == "staged" else f" ({state})")


def init_cmd(
    project: ProjectOpt = None,
    skills_repo: RepoOpt = None,
    backend: BackendOpt = None,
    state_dir: StateDir = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Add the files found and keep the suggested backend without asking."
        ),
    ] = False,
) -> None:
    """Find the project's instruction files, add them to the skills repository, choose a backend."""
    from core.skills_repo import SkillsRepo
    from sleep.backend_choice import suggest_backend
    from sleep.instruction_files import find_instruction_files, not_yet_tracked
    from sleep.settings import save_settings

    state = _state_dir(state_dir)
    settings = _settings(state, project=_abs(project), skills_repo=_abs(skills_repo))
    proj = Path(settings.project or Path.cwd()).absolute()
    if not proj.is_dir():
        raise SleepNightUsageError(f"--project {proj}: no such directory")
    repo_path = Path(settings.skills_repo or proj / ".skillopt" / "skills").absolute()
    repo = (
        SkillsRepo.init(repo_path)
        if not (repo_path / ".git").exists()
        else SkillsRepo.open(repo_path)
    )
    found = not_yet_tracked(find_instruction_files(proj, Path.home()), repo.list_skills())
    if found:
        typer.echo(f"found {len(found)} instruction file(s) to add to {repo_path}:")
        for f in found:
            typer.echo(f"  {f.name:24} {f.path}  ({f.kind})")
        if yes or typer.confirm(
            "add them (each deploys back to where it was found)?", default=True
        ):
            for f in found:
                repo.add_skill(f.name, f.path.read_text(encoding="utf-8"), deploy_to=str(f.path))
                typer.echo(f"added {f.name}")
    elif not repo.list_skills():
        typer.echo(
            f"no CLAUDE.md, AGENTS.md or SKILL.md found in {proj} or your home; add one with `skillopt skills add`"
        )
    suggestion, why = suggest_backend(os.environ, shutil.which)
    chosen = backend or suggestion
    if backend is None and not yes and sys.stdin.isatty():
        chosen = typer.prompt(f"backend for nights ({why})", default=suggestion)
    settings = settings.model_copy(
        update={"project": str(proj), "skills_repo": str(repo_path), "backend": chosen}
    )
    path = save_settings(state, settings)
    typer.echo(
        f"recorded {path}: backend {chosen}; run `skillopt sleep dry-run` to see tonight's plan"
    )


def schedule_cmd(
    at: Annotated[
        str, typer.Option("--at", metavar="HH:MM", help="When to run every night.")
    ] = "03:30",
    crontab_file: Annotated[
        Path | None,
        typer.Option(
            "--crontab-file", metavar="FILE", help="Edit this file instead of the user's crontab."
        ),
    ] = None,
    print_only: Annotated[bool, typer.Option("--print", help="Only print the line.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Install without asking.")] = False,
    state_dir: StateDir = None,
) -> None:
    """Install the nightly cron line (shown first, installed after you confirm)."""
    from sleep.schedule import cron_line, read_crontab, with_line, write_crontab

    state = _state_dir(state_dir)
    settings = _settings(state)
    exe = shutil.which("skillopt") or str(Path(sys.argv[0]).absolute())
    line = cron_line(
        at=at,
        skillopt=exe,
        state_dir=state,
        project=Path(settings.project) if settings.project else None,
        log=state / "cron.log",
    )
    typer.echo(line)
    if print_only:
        return
    if not yes and not typer.confirm("install this line in your crontab?", default=False):
        typer.echo("not installed")
        raise typer.Exit(1)
    write_crontab(with_line(read_crontab(crontab_file), line, state), crontab_file)
    typer.echo("installed; `skillopt sleep unschedule` removes exactly this line")


def unschedule_cmd(
    crontab_file: Annotated[
        Path | None,
        typer.Option(
            "--crontab-file", metavar="FILE", help="Edit this file instead of the user's crontab."
        ),
    ] = None,
    state_dir: StateDir = None,
) -> None:
    """Remove the nightly cron line that `schedule` installed (and nothing else)."""
    from sleep.schedule import read_crontab, without_line, write_crontab

    state = _state_dir(state_dir)
    text, removed = without_line(read_crontab(crontab_file), state)
    if not removed:
        typer.echo("no skillopt sleep line in the crontab; nothing changed")
        return
    write_crontab(text, crontab_file)
    typer.echo(f"removed {removed} line")


def _abs(path: Path | None) -> str | None:
    return str(path.expanduser().absolute()) if path is not None else None


def register(app: typer.Typer) -> None:
    group = next((g.typer_instance for g in app.registered_groups if g.name == "sleep"), None)
    if group is None:
        raise RuntimeError("sleep_night_cmds must be registered after sleep_cmds")
    group.command("init")(init_cmd)
    group.command("run")(run_cmd)
    group.command("dry-run")(dry_run_cmd)
    group.command("status")(status_cmd)
    group.command("schedule")(schedule_cmd)
    group.command("unschedule")(unschedule_cmd)
