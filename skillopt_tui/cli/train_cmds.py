"""`skillopt train`, `skillopt eval` (`skillopt runs` lives in runs_cmds).

Progress and errors go to stderr, data (`--json`) to stdout. Exit codes: 0 finished,
1 the run failed, 2 bad input (config, files, out dir in use), 3 stopped before the end
(budget cap reached or interrupted): the run is resumable by running the same command.
Heavy modules are imported inside the commands so `skillopt --help` stays fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from core import exit_codes
from core.errors import UserError
from core.skill.document import load_skill
from skillopt_tui.cli.output import emit_json

EXIT_STOPPED = exit_codes.STOPPED


class TrainUsageError(UserError):
    """Bad command-line input for train / eval / runs."""


ConfigOption = Annotated[Path, typer.Option("--config", "-c", help="Config YAML file.")]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config key: section.key=value (repeatable)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def _default_run_name(config) -> str:
    return config.run.name or f"{config.env.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def _install_stop_handlers(loop: asyncio.AbstractEventLoop, stop: asyncio.Event, log) -> None:
    def request_stop(signame: str) -> None:
        if stop.is_set():  # a second signal: stop now (the run stays resumable)
            log(
                f"{signame} again: stopping now, without finishing the step; the same command "
                "resumes from the last finished step"
            )
            raise KeyboardInterrupt
        log(f"{signame} received: stopping at the next step boundary (the run stays resumable)")
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        # Not available off the main thread or on some platforms: Ctrl-C then just raises.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, request_stop, sig.name)


def train(
    config: ConfigOption,
    set_: SetOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Run directory (default: <runs_dir>/<run.name or env-time>). "
            "Rerunning with the same --out resumes.",
        ),
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start over instead of resuming.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --fresh: archive the existing run and start over."),
    ] = False,
    skills_repo: Annotated[
        Path | None, typer.Option("--skills-repo", help="Skills repository to stage into.")
    ] = None,
    skill: Annotated[
        str | None, typer.Option("--skill", help="Skill name in --skills-repo.")
    ] = None,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the pre-run estimate of calls, tokens "
            "and cost, then exit without training.",
        ),
    ] = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help="With run.batch: stop (exit 3, resumable) instead of waiting while a "
            "provider batch is pending; the same command picks the batch up.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Train a skill (resumes when --out already holds the run). Exit 3 = stopped, resumable."""
    from core.config import load_config
    from core.run.directory import RunDirectory
    from core.run.events import EventBus
    from skillopt_tui.console import ConsoleLogger

    cfg = load_config(config, set_ or [])
    _mask_handoff_answers(cfg)
    if (skills_repo is None) != (skill is None):
        raise TrainUsageError("--skills-repo and --skill go together: give both or neither")
    from envs import get_environment

    # Everything that can be wrong with the input is checked before the run directory is
    # touched, so a typo never leaves an empty run behind.
    env = get_environment(cfg.env, target_backend=cfg.models.target.backend)
    env.load_split("train")  # data not materialised: one line saying how, before any run dir
    repo = None
    if skills_repo is not None and skill is not None:
        from core.skills_repo import SkillsRepo

        repo = SkillsRepo.open(skills_repo)
        initial_skill = repo.read_skill(skill)
    elif cfg.train.initial_skill:
        initial_skill = load_skill(cfg.train.initial_skill)
    else:
        initial_skill = ""
    if estimate:
        typer.echo(asyncio.run(_estimate(cfg, env, initial_skill)))
        return
    _check_before_the_run(cfg, env)
    run_path = out or Path(cfg.run.runs_dir) / _default_run_name(cfg)
    run_dir = RunDirectory(run_path)
    run_dir.acquire()
    try:
        before = run_dir.read_state() if repo is not None else None
        # The staged branch a run started on stays its branch (resume, --fresh archive);
        # states from before the id was kept staged on the run directory's name.
        kept_id = (before.stager_run_id or run_dir.run_id) if before is not None else None
        if fresh and not run_dir.is_empty() and not force:
            raise TrainUsageError(
                f"{run_path} already holds a run; add --force to archive it and start over"
            )
        if not fresh:
            _refuse_a_changed_config_of_a_finished_run(run_dir, cfg)
        if fresh and repo is not None:
            # The discarded run's commits must not be reused (same run id, same branch: the
            # stager would dedupe onto them) nor lost: archive them as a rejected branch.
            archived = _archive_staged_branch(repo, kept_id) if kept_id else None
            if archived:
                print(
                    f"skillopt: archived staged/{kept_id} of the discarded run as {archived}",
                    file=sys.stderr,
                )
        if fresh and not run_dir.is_empty():
            archive = run_dir.archive()
            print(f"skillopt: archived the discarded run as {archive}", file=sys.stderr)
        stager = None
        if repo is not None:
            from core.skills_repo.repo_stager import SkillsRepoStager
            from core.skills_repo.run_names import new_staging_id

            state = run_dir.read_state()
            base = state.stager_base if state is not None else None
            reuse = fresh or (state is not None and state.stager_reuses_run_id)
            # a fresh start keeps the discarded run's id (its branch is archived above)
            staging_id = kept_id or new_staging_id(repo, run_path)
            stager = SkillsRepoStager(repo, skill, staging_id, base=base, reuse_run_id=reuse)
        logger = ConsoleLogger(quiet=False)
        bus = EventBus()
        bus.subscribe(logger)
        summary = asyncio.run(
            _train(cfg, run_dir, bus, logger, env, initial_skill, stager, wait=not no_wait)
        )
        _write_card(run_dir, env, config, set_ or [])
    finally:
        run_dir.release()
    if as_json:
        emit_json({"run_dir": str(run_path), **summary.to_dict()})
    else:
        typer.echo(str(run_path))
    if summary.status == "waiting":  # the prompts are listed above (the console logger)
        print(
            "skillopt: waiting for handoff answers; run the same command once written",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_STOPPED)
    if summary.status != "finished":
        print(f"skillopt: stopped: {summary.reason}", file=sys.stderr)
        raise typer.Exit(EXIT_STOPPED)
    print(_next_steps(run_path, repo, stager), file=sys.stderr)


def _write_card(run_dir, env, config_path: Path, overrides: list[str]) -> None:
    """card.json: what the run's numbers rest on (`skillopt runs show`), written whenever
    a run stops, so a stopped run's card says what it had so far."""
    from core.research.card import build_card, write_card
    from skillopt_tui.cli.run_cards import config_sources, load_splits

    try:
        card = build_card(run_dir.path, load_splits(env), config_sources(config_path, overrides))
        write_card(run_dir.path, card)
    except (UserError, OSError) as exc:  # the run's result stands; only its card is missing
        print(
            f"skillopt: card.json not written ({exc}); `skillopt runs show {run_dir.path}` "
            "builds it later",
            file=sys.stderr,
        )


def _next_steps(run_path: Path, repo, stager) -> str:
    """What a person does after a finished run: where the result is, how to look at it."""
    best = run_path / "best_skill.md"
    lines = [
        f"next: the best skill is {best}",
        f"      watch and replay it: skillopt tui --runs-dir {run_path.parent}",
    ]
    if repo is not None and stager is not None:
        lines.append(
            f"      review what it staged: skillopt skills diff {stager.run_id} --repo {repo.path}"
        )
    return "\n".join(lines)


def _refuse_a_changed_config_of_a_finished_run(run_dir, cfg) -> None:
    """A finished run is shown again, not rerun: a changed --set or config would be ignored
    without a word, so it is refused, naming the way to start over with it."""
    from core.training.resume import ConfigChanged, config_differences, first_difference

    state = run_dir.read_state()
    saved = run_dir.read_config()
    if state is None or not state.finished or saved is None:
        return
    diffs = config_differences(saved, cfg)
    if diffs:
        raise ConfigChanged(
            f"run {run_dir.path} already finished, and a finished run is not rerun: "
            f"{first_difference(diffs)}. Add --fresh --force to start over with the new "
            "config, or give another --out"
        )


def _mask_handoff_answers(cfg) -> None:
    """With a handoff role, secrets pasted into answers are masked by Sleep's patterns."""
    from core.config import ROLES

    if any(cfg.models.role(r).backend == "handoff" for r in ROLES):
        import sleep.night.handoff_answers  # noqa: F401 - registers the mask


def _check_before_the_run(cfg, env) -> None:
    """Raise the input problems a run would otherwise meet after its directory exists: the
    splits the run reads (unreadable data or manifests), the configuration of the model
    roles it calls (an unset api_key_env, a missing model name), a cost cap on a model
    with no price, run.batch on for a target without a batch API."""
    from core.models.factory import build_model_client
    from core.training.batch_phase import batch_provider_for
    from core.training.executor import check_executor
    from core.training.setup import check_cost_cap_is_priced, roles_in_use

    check_executor(cfg)  # no Ray, or nothing at run.ray.address: one line, no run dir
    for split in ("train", "val", *(("test",) if cfg.train.final_test else ())):
        env.load_split(split)
    client = build_model_client(cfg)
    try:
        for role in roles_in_use(cfg, client):
            problem = client.configuration_error(role)
            if problem is not None:
                raise problem
        check_cost_cap_is_priced(cfg, client)
        batch_provider_for(cfg, client)  # run.batch on with a target that cannot batch
    finally:
        asyncio.run(client.aclose())


def _archive_staged_branch(repo, run_id: str) -> str | None:
    """Reject staged/<run_id> if it exists; the archive's name (rejected/<run_id>, or with a
    numeric suffix when that name is taken), else None."""
    if not any(b.run_id == run_id for b in repo.staged_branches()):
        return None
    return repo.reject(f"staged/{run_id}")


async def _estimate(cfg, env, initial_skill) -> str:
    from core.models.factory import build_model_client
    from core.run.budget_minimum import budget_warning_for
    from core.run.estimate import estimate_for
    from core.training.executor import planned_words
    from core.training.setup import choose_strategy

    client = build_model_client(cfg)
    try:
        uses_llm = choose_strategy(cfg, client).name == "llm"
        line = estimate_for(cfg, env, client, initial_skill, uses_llm=uses_llm)
        warning = budget_warning_for(cfg, env, client, initial_skill, uses_llm=uses_llm)
        before = f"{warning}\n" if warning else ""
        return f"{before}rollouts run: {planned_words(cfg)}\n{line}"  # the estimate stays last
    finally:
        await client.aclose()


async def _train(cfg, run_dir, bus, logger, env, initial_skill, stager, *, wait=True):
    from core.training.trainer import run_training

    stop = asyncio.Event()
    _install_stop_handlers(asyncio.get_running_loop(), stop, logger.line)
    state = run_dir.read_state()
    if state is not None and state.finished:
        logger.line(f"run {run_dir.path} already finished; use --fresh --force to start over")
    from core.models.factory import EMBEDDED_NOTICE
    from core.run.budget_minimum import budget_warning_for
    from core.run.estimate import estimate_for
    from core.training.setup import build_client_with_budget_events, choose_strategy
    from skillopt_tui.cli.long_run import embedded_warning, planned_calls

    client = build_client_with_budget_events(cfg, bus)
    try:
        strategy = choose_strategy(cfg, client)
        uses_llm = strategy.name == "llm"
        uses_local = client.is_local("target") or (uses_llm and client.is_local("optimizer"))
        for notice in client.notices:
            if notice != EMBEDDED_NOTICE or uses_local:
                logger.notice(notice)
        plan = planned_calls(cfg, env, uses_llm=uses_llm)
        logger.expected_calls = plan.target_calls + plan.optimizer_calls
        warning = embedded_warning(plan)
        if uses_local and EMBEDDED_NOTICE in client.notices and warning:
            logger.line(warning)
        if state is None:
            logger.line(estimate_for(cfg, env, client, initial_skill, uses_llm=uses_llm))
            warning = budget_warning_for(cfg, env, client, initial_skill, uses_llm=uses_llm)
            if warning:
                logger.line(warning)
        return await run_training(
            cfg,
            run_dir=run_dir,
            bus=bus,
            client=client,
            env=env,
            strategy=strategy,
            stager=stager,
            initial_skill=initial_skill,
            stop=stop,
            batch_wait=wait,
        )
    finally:
        logger.close()
        await client.aclose()


def eval_(
    config: ConfigOption,
    skill: Annotated[Path, typer.Option("--skill", help="Skill file to evaluate.")],
    split: Annotated[str, typer.Option("--split", help="val or test.")] = "val",
    set_: SetOption = None,
    as_json: JsonOption = False,
) -> None:
    """Score one skill on the val or test split."""
    from core.config import load_config
    from core.training.evaluate import evaluate_skill

    if split not in ("val", "test"):
        raise TrainUsageError(f"--split must be val or test, got {split!r}")
    cfg = load_config(config, set_ or [])
    _mask_handoff_answers(cfg)
    text = load_skill(skill)
    from envs import get_environment

    env = get_environment(cfg.env, target_backend=cfg.models.target.backend)
    from core.models.handoff import HandoffWaiting, waiting_summary

    try:
        result = asyncio.run(evaluate_skill(cfg, text, split, env=env))
    except HandoffWaiting:  # every waiting prompt, then exit 3 like train
        folder = Path(cfg.models.handoff_dir or ".").expanduser()
        print(f"skillopt: {waiting_summary(folder)}", file=sys.stderr)
        raise typer.Exit(EXIT_STOPPED) from None
    if as_json:
        emit_json(result.to_dict())
        return
    typer.echo(f"{split}: hard {result.hard:.3f} · soft {result.soft:.3f} · n {result.n}")
    for task_type, b in result.buckets.items():
        typer.echo(f"  {task_type}: hard {b['hard']:.3f} · soft {b['soft']:.3f} · n {int(b['n'])}")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("eval")(eval_)
