"""`skillopt sleep run | dry-run | status`: the night from the shell and from cron.
`harvest` lives in sleep_cmds.py, `init | schedule | unschedule` in sleep_setup_cmds.py;
these join the same group."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json
from skillopt_tui.cli.sleep_cmds import sleep_group
from skillopt_tui.cli.sleep_options import NIGHT_FLAGS, SleepFlags, takes_flags


class SleepNightUsageError(UserError):
    """Bad command-line input for a night command."""


StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", metavar="DIR", help="Sleep state (default: ~/.local/state/skillopt/sleep)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]


def _state_dir(state_dir: Path | None, *, writing: bool = True) -> Path:
    """The state directory, checked before anything reads or writes it (sleep/state/state_dir.py)."""
    from sleep.harvest.run import default_state_dir
    from sleep.state.state_dir import check_state_dir

    return check_state_dir(
        (state_dir or default_state_dir()).expanduser().absolute(), writing=writing
    )


def _settings(state_dir: Path, **flags):
    from core.path_text import require_text
    from sleep.state.settings import load_settings

    settings = load_settings(state_dir)
    updates = {k: v for k, v in flags.items() if v is not None}
    settings = settings.model_copy(update=updates)
    for flag, value in (("--project", settings.project), ("--skills-repo", settings.skills_repo)):
        require_text(Path(value) if value else None, flag)
    return settings


def _night(
    state_dir: Path,
    settings,
    project: Path,
    config_path,
    sets,
    *,
    dry: bool,
    backend_flag=None,
    heuristic_only: bool = False,
):
    """A ready Night of one project from the recorded settings and this command's flags."""
    from core.config import load_config
    from core.path_text import require_text
    from core.skills_repo import SkillsRepo
    from sleep.harvest.agent_roots import MORE_FLAGS
    from sleep.harvest.run import HarvestOptions
    from sleep.harvest.sources import check_more_roots, check_roots
    from sleep.night.held_tasks import transcript_harvester
    from sleep.night.projects import night_label
    from sleep.night.run import Night, night_defaults

    check_roots(settings.claude_home, settings.codex_home)
    check_more_roots({flag: getattr(settings, name) for name, flag in MORE_FLAGS.items()})
    require_text(project, "--project")
    if not settings.skills_repo:
        raise SleepNightUsageError(
            "no skills repository: run `skillopt sleep init --project PATH` first, or pass --skills-repo"
        )
    if not project.is_dir():
        raise SleepNightUsageError(f"--project {project}: no such directory")
    repo = SkillsRepo.open(settings.skills_repo)
    overrides = list(sets or [])
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
    miner = config.models.miner
    if miner.backend == "auto" and miner_follows(backend_flag, settings.backend):
        miner.backend = backend
    chosen = ", ".join(sorted({f"{config.models.role(r).backend}" for r in roles}))

    harvested = transcript_harvester(
        HarvestOptions(
            state_dir=state_dir,
            project=project,
            claude_home=settings.claude_home,
            codex_home=settings.codex_home,
            **{name: getattr(settings, name) for name in MORE_FLAGS},
            include_automation=settings.include_automation,
            commit=not dry,  # a dry run is a preview: it moves no cursor
        ),
        lambda skipped: print(f"skillopt: sleep: {skipped.line()}", file=sys.stderr),
    )

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
        check_timeout_s=settings.check_timeout_s,
        min_val_tasks=settings.min_val_tasks,
        max_val_tasks=settings.max_val_tasks,
        include_automation=settings.include_automation,
        auto_adopt=settings.auto_adopt,
        batch=settings.batch,
        on_line=lambda line: print(f"skillopt: sleep: {line}", file=sys.stderr),
        dry=dry,
        heuristic_only=heuristic_only,
        label=night_label(project, settings.projects),
    )
    return night, chosen


# Backends the miner role never follows the night's backend to: the embedded
# demonstration model writes worse tasks than the heuristic, scripted is a test double.
NOT_MINERS = ("auto", "local", "scripted")


def miner_follows(backend_flag: str | None, recorded: str | None) -> bool:
    """Whether a miner left on `auto` mines with the night's backend: one named by
    --backend (handoff too: the person asked for prompt files tonight), or a recorded one
    that answers by itself (an API, a coding-agent CLI). A recorded handoff is also what
    no choice at all records, so it adds no prompt the person did not ask for; `auto`
    otherwise resolves by key (sleep/mine/with_model.uses_model_miner)."""
    if backend_flag is not None:
        return backend_flag not in NOT_MINERS
    return recorded is not None and recorded not in (*NOT_MINERS, "handoff")


def _with_sets(settings, sets):
    """`--set sleep.<key>=…` over the settings for this night; the rest for the config."""
    from sleep.state.settings import with_sets

    return with_sets(settings, sets)


def _flagged_settings(state_dir, flags: SleepFlags, *, writing: bool = True, **more):
    """The state directory, and the recorded settings with this command's flags over them
    (a switch left off keeps the recorded value)."""
    state = _state_dir(state_dir, writing=writing)
    given = {
        "skill": flags.skill, **flags.homes.given(),
        "include_automation": flags.include_automation, **more,
    }  # fmt: skip
    given = {k: (v or None) if isinstance(v, bool) else v for k, v in given.items()}
    return state, _settings(state, skills_repo=_abs(flags.skills_repo), **given)


@takes_flags(*NIGHT_FLAGS)
def run_cmd(
    flags: SleepFlags,
    auto_adopt: Annotated[
        bool,
        typer.Option(
            "--auto-adopt", help="Adopt and deploy what the gate accepts (off: stage for review)."
        ),
    ] = False,
    state_dir: StateDir = None,
    as_json: JsonOpt = False,
) -> None:
    """Run tonight's nights, one per recorded project (or --project): harvest, mine,
    replay, judge, gate and stage for review."""
    from sleep.night.projects import exit_status, projects_to_run
    from sleep.night.run import NightBusy, run_night

    state, settings = _flagged_settings(state_dir, flags, auto_adopt=auto_adopt)
    settings, sets = _with_sets(settings, flags.set_)
    projects = projects_to_run(settings.projects, flags.project, Path.cwd())
    results, statuses = [], []
    for path in projects:
        try:
            night, chosen = _night(
                state, settings, path, flags.config, sets, dry=False,
                backend_flag=flags.backend,
            )  # fmt: skip
            print(f"skillopt: sleep: night {night.night_id}, backend {chosen}", file=sys.stderr)
            result = run_night(night)
        except UserError as exc:
            if len(projects) == 1 or isinstance(exc, NightBusy):
                raise
            print(f"skillopt: sleep: {path}: {exc}", file=sys.stderr)  # the other projects go on
            statuses.append("failed")
            continue
        results.append(result.to_dict())
        statuses.append(result.status)
        if not as_json:
            if len(projects) > 1:
                typer.echo(f"{path}:")
            for skill_name, outcome in result.skills.items():
                typer.echo(_outcome_line(skill_name, outcome))
            typer.echo(result.message)
        if result.status == "stopped":  # an interrupt or the budget: the rest waits too
            break
    if as_json:
        emit_json(results[0] if len(projects) == 1 else {"nights": results})
    code = exit_status(statuses)
    if code:
        raise typer.Exit(code)


def _outcome_line(skill: str, o: dict) -> str:
    scores = ""
    if o.get("baseline_val") is not None and not o.get("scores_unchanged"):
        scores = f" val {o['baseline_val']:.3f} -> {o.get('best_val') or 0:.3f}"
    staged = f", staged {o['staged']}" if o.get("staged") else ""
    why = f": {o['reason']}" if o.get("status") == "skipped" and o.get("reason") else ""
    return f"{skill}: {o['status']} ({o.get('train', 0)} train / {o.get('val', 0)} val tasks){scores}{staged}{why}"


@takes_flags(*NIGHT_FLAGS)
def dry_run_cmd(
    flags: SleepFlags,
    heuristic_only: Annotated[
        bool,
        typer.Option(
            "--heuristic-only",
            help="Mine with the heuristic alone: no miner-model call (the night may still ask it).",
        ),
    ] = False,
    state_dir: StateDir = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what tonight would do, per recorded project (or --project): sessions, tasks per
    skill as the night mines them, estimated calls and cost. Writes nothing but the miner
    model's replies (kept for the night) or, under handoff, its prompts."""
    import asyncio

    from core.models.handoff import HandoffWaiting
    from core.models.types import ModelError
    from sleep.night.estimate import estimate_night
    from sleep.night.projects import exit_status, projects_to_run

    state, settings = _flagged_settings(state_dir, flags, writing=False)
    settings, sets = _with_sets(settings, flags.set_)
    projects = projects_to_run(settings.projects, flags.project, Path.cwd())
    plans = []
    for path in projects:
        night, chosen = _night(
            state, settings, path, flags.config, sets, dry=True,
            backend_flag=flags.backend, heuristic_only=heuristic_only,
        )  # fmt: skip

        async def planned(night=night):
            plan = await night.plan()
            return plan, await estimate_night(night, plan)

        try:
            plan, estimates = asyncio.run(planned())
        except HandoffWaiting:  # the miner's prompts wait for answers, as a night's do
            plans.append(_waiting_json(night, chosen))
            if not as_json:
                typer.echo(plans[-1]["message"])
            continue
        except ModelError as exc:  # one line, as the night's, with the free way to plan
            failed = ModelError(
                f"{exc}; `skillopt sleep dry-run --heuristic-only` plans without the miner model"
            )
            failed.exit_code = exc.exit_code
            raise failed from None
        plans.append(_plan_json(plan, chosen, estimates))
        if not as_json:
            _echo_plan(plans[-1], path if len(projects) > 1 else None)
    if as_json:
        emit_json(plans[0] if len(projects) == 1 else {"nights": plans})
    code = exit_status([p.get("status", "planned") for p in plans])
    if code:
        raise typer.Exit(code)


def _waiting_json(night, backend: str) -> dict:
    """A dry run whose miner waits for handoff answers: what to answer, as the night says it."""
    from core.models.handoff import pending_prompts, waiting_summary

    handoff = night.folder / "handoff"
    return {
        "night_id": night.night_id,
        "backend": backend,
        "status": "waiting",
        "mined_by": night.mined_by,
        "message": waiting_summary(handoff),
        "pending": [str(p) for p in pending_prompts(handoff)],
    }


def _plan_json(plan, backend: str, estimates: dict) -> dict:
    from sleep.night.estimate import skipped_counts

    for route in plan.routes:
        route["skipped"] = skipped_counts(route["tasks"])
    return {
        "night_id": plan.night_id,
        "backend": backend,
        "mined_by": plan.mined_by,
        "sessions": plan.sessions,
        "automation_skipped": plan.automation_skipped,
        "continues": plan.continues,
        "skills": plan.routes,
        "left_out": plan.left_out,
        "preferences": plan.preferences,
        "estimate": estimates,
    }


SHOWN_PREFERENCES = 5  # the console's; `--json` lists them all


def _echo_plan(plan: dict, project: Path | None) -> None:
    from sleep.night.estimate import skipped_line
    from sleep.night.known_preferences import preference_line

    if project is not None:
        typer.echo(f"{project}:")
    continues = (
        f", continuing the {plan['continues']} night's frozen tasks" if plan["continues"] else ""
    )
    typer.echo(
        f"night {plan['night_id']} (backend {plan['backend']}{continues}): "
        f"{plan['sessions']} session(s), {plan['automation_skipped']} automation session(s) left out"
    )
    if plan["mined_by"]:
        typer.echo(f"  mined by {plan['mined_by']}")
    for route in plan["skills"]:
        typer.echo(
            f"  {route['skill']}: {route['train']} train / {route['val']} val / "
            f"{route['test']} test tasks from {route['sessions']} session(s) ({route['routed_by']})"
        )
        if route["skipped"]:
            typer.echo(f"    {skipped_line(route['skipped'])}")
        if route["skill"] in plan["estimate"]:
            typer.echo(f"    {plan['estimate'][route['skill']]}")
    for preference in plan["preferences"][:SHOWN_PREFERENCES]:
        typer.echo(f"  preference {preference_line(preference)}")


def status_cmd(state_dir: StateDir = None, as_json: JsonOpt = False) -> None:
    """Recorded settings, recent nights and handoff prompts waiting for answers."""
    from sleep.night.adoption_effect import adoption_effects
    from sleep.night.known_preferences import preference_line, preferences_of_projects
    from sleep.night.unlanded_edits import unlanded_line
    from sleep.state.status import gate_line, night_status

    state = _state_dir(state_dir, writing=False)
    status = night_status(state)
    effects = adoption_effects(state, status["settings"].get("skills_repo"))
    status["adoption_effects"] = [e.to_dict() for e in effects]
    status["preferences"] = preferences_of_projects(state, status["settings"].get("projects") or [])
    if as_json:
        emit_json(status)
        return
    s = status["settings"]
    typer.echo(f"state: {status['state_dir']}")
    typer.echo(
        f"projects: {', '.join(s.get('projects') or []) or '-'} · skills repo: {s.get('skills_repo') or '-'} · backend: {s.get('backend') or 'handoff'}"
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
        for skill, outcome in n["skills"].items():  # why a skill is not gated yet
            gated = gate_line(skill, outcome)
            if gated:
                typer.echo(f"  {gated}")
            if outcome.get("status") == "skipped" and outcome.get("reason"):
                typer.echo(f"  {skill}: {outcome.get('reason')}")
            if outcome.get("edits_not_landed"):
                typer.echo(f"  {unlanded_line(skill, outcome['edits_not_landed'])}")
    if status["preferences"]:
        typer.echo("preferences (what the person keeps correcting):")
        for preference in status["preferences"][:SHOWN_PREFERENCES]:
            typer.echo(f"  {preference_line(preference)}")
        if len(status["preferences"]) > SHOWN_PREFERENCES:
            more = len(status["preferences"]) - SHOWN_PREFERENCES
            typer.echo(f"  and {more} more (`sleep status --json` lists them all)")
    if effects:
        typer.echo("since adoption:")
        for effect in effects:
            typer.echo(f"  {effect.skill}: {effect.line()}")


def _branch_now(outcome: dict) -> str:
    """The branch a night staged, with what became of it when it is no longer staged."""
    state = outcome.get("branch_state", "staged")
    return outcome["staged"] + ("" if state == "staged" else f" ({state})")


def _abs(path: Path | None) -> str | None:
    return str(path.expanduser().absolute()) if path is not None else None


def register(app: typer.Typer) -> None:
    group = sleep_group(app, "sleep_night_cmds")
    group.command("run")(run_cmd)
    group.command("dry-run")(dry_run_cmd)
    group.command("status")(status_cmd)
