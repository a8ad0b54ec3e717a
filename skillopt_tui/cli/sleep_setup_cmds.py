"""`skillopt sleep init | schedule | unschedule`: setting Sleep up once, then nightly.

`init --project P` adds P to the recorded projects and its instruction files to the
skills repository (by default in the user's data folder, shared by every project). It
asks every question before it writes anything, so an init that is refused or interrupted
leaves nothing behind. `schedule` shows the cron line, installs it after a yes, and
records where; `unschedule` removes exactly that line.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from core.errors import unreadable
from skillopt_tui.cli.sleep_home_opts import (
    CopilotHome,
    CursorHome,
    OpencodeData,
    PiHome,
    VscodeUserDir,
)
from skillopt_tui.cli.sleep_night_cmds import (
    BackendOpt,
    ClaudeHome,
    CodexHome,
    ProjectOpt,
    RepoOpt,
    SleepNightUsageError,
    StateDir,
    _state_dir,
)

CrontabFile = Annotated[
    Path | None,
    typer.Option(
        "--crontab-file", metavar="FILE", help="Edit this file instead of the user's crontab."
    ),
]


def _ask(question: str, *, default: bool, nothing: str) -> bool:
    """A yes/no question. Stdin at its end (no one to answer) ends the command with exit 1
    and the one line `nothing`; every write comes after the question."""
    try:
        return typer.confirm(question, default=default)
    except typer.Abort:
        typer.echo(f"\n{nothing}")
        raise typer.Exit(1) from None


def init_cmd(
    project: ProjectOpt = None,
    skills_repo: RepoOpt = None,
    backend: BackendOpt = None,
    claude_home: ClaudeHome = None,
    codex_home: CodexHome = None,
    pi_home: PiHome = None,
    opencode_data: OpencodeData = None,
    copilot_home: CopilotHome = None,
    vscode_user_dir: VscodeUserDir = None,
    cursor_home: CursorHome = None,
    state_dir: StateDir = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Add the files found and keep the suggested backend without asking."
        ),
    ] = False,
) -> None:
    """Add a project (again for more): its instruction files go to the skills repository,
    the project to the recorded list; choose the nights' backend. Agent homes given here
    are recorded for every later night (and the user skills under --claude-home found)."""
    from core.path_text import require_text
    from core.skills_repo import SkillsRepo
    from sleep.harvest.agent_roots import MORE_FLAGS
    from sleep.harvest.sources import check_more_roots, check_roots
    from sleep.night.instruction_files import find_instruction_files, not_yet_tracked
    from sleep.state.backend_choice import suggest_backend
    from sleep.state.settings import default_skills_repo, load_settings, save_settings

    state = _state_dir(state_dir)  # checked: a file or read-only folder is one line
    settings = load_settings(state)
    proj = (project or Path.cwd()).expanduser().absolute()
    require_text(proj, "--project")  # recorded in sleep.yaml and the cron line: UTF-8 text
    require_text(skills_repo, "--skills-repo")
    if not proj.is_dir():
        raise SleepNightUsageError(f"--project {proj}: no such directory")
    homes = {
        k: _abs_list(v)
        for k, v in dict(
            claude_home=claude_home, codex_home=codex_home, pi_home=pi_home,
            opencode_data=opencode_data, copilot_home=copilot_home,
            vscode_user_dir=vscode_user_dir, cursor_home=cursor_home,
        ).items()
        if v
    }  # fmt: skip
    for name, value in homes.items():  # recorded in sleep.yaml and the cron line
        require_text(Path(value), "--" + name.replace("_", "-"))
    check_roots(homes.get("claude_home"), homes.get("codex_home"))
    check_more_roots({flag: homes.get(name) for name, flag in MORE_FLAGS.items()})
    claude_roots = (homes.get("claude_home") or settings.claude_home or "").split(",")
    repo_path = (
        skills_repo.expanduser().absolute()
        if skills_repo is not None
        else Path(settings.skills_repo or default_skills_repo())
    )
    existing = SkillsRepo.open(repo_path) if (repo_path / ".git").exists() else None
    found = not_yet_tracked(
        find_instruction_files(
            proj, Path.home(), claude_homes=[Path(r) for r in claude_roots if r]
        ),
        existing.list_skills() if existing else [],
    )
    texts = _readable(found)
    # Every question comes before the first write: a no, or no one to answer, writes nothing.
    if texts:
        typer.echo(f"found {len(texts)} instruction file(s) to add to {repo_path}:")
        for f in texts:
            typer.echo(f"  {f.name:24} {f.path}  ({f.kind})")
        question = "add them (each deploys back to where it was found)?"
        if not yes and not _ask(question, default=True, nothing="nothing written"):
            typer.echo("nothing written; run init again to add them")
            return
    elif existing is None or not existing.list_skills():
        typer.echo(
            f"no CLAUDE.md, AGENTS.md or SKILL.md found in {proj} or your home; "
            "add one with `skillopt skills add`"
        )
    suggestion, why = suggest_backend(os.environ, shutil.which)
    chosen = backend or settings.backend or suggestion
    if backend is None and not yes and sys.stdin.isatty():
        try:
            chosen = typer.prompt(f"backend for nights ({why})", default=chosen)
        except typer.Abort:
            typer.echo("\nnothing written")
            raise typer.Exit(1) from None
    repo = existing or SkillsRepo.init(repo_path)
    for f, text in texts.items():
        repo.add_skill(f.name, text, deploy_to=str(f.path))
        typer.echo(f"added {f.name}")
    recorded = settings.with_project(str(proj)).model_copy(
        update={"skills_repo": str(repo_path), "backend": chosen, **homes}
    )
    path = save_settings(state, recorded)
    typer.echo(
        f"recorded {path}: {len(recorded.projects)} project(s), backend {chosen}; "
        "run `skillopt sleep dry-run` to see tonight's plan"
    )


def _abs_list(value: str) -> str:
    """A home flag's comma-separated folders, each absolute (cron runs in another cwd)."""
    return ",".join(str(Path(p).expanduser().absolute()) for p in value.split(",") if p)


def _readable(found):
    """Each found file with its exact text (bytes as they are, so the deploy target is
    recognised as already deployed); a file that is not UTF-8 text is passed over, said."""
    texts = {}
    for f in found:
        try:
            texts[f] = f.path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            typer.echo(f"skipped {unreadable(f.path, exc)}", err=True)
    return texts


def schedule_cmd(
    at: Annotated[
        str, typer.Option("--at", metavar="HH:MM", help="When to run every night.")
    ] = "03:30",
    crontab_file: CrontabFile = None,
    print_only: Annotated[bool, typer.Option("--print", help="Only print the line.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Install without asking.")] = False,
    state_dir: StateDir = None,
) -> None:
    """Install the nightly cron line (shown first, installed after you confirm)."""
    from sleep.harvest.agent_roots import more_homes_in_use
    from sleep.harvest.sources import claude_root_paths, codex_root_paths
    from sleep.state.schedule import (
        cron_line,
        read_crontab,
        record_installed,
        with_line,
        write_crontab,
    )
    from sleep.state.settings import load_settings

    state = _state_dir(state_dir)  # checked: a file or read-only folder is one line
    settings = load_settings(state)
    home = Path.home()
    # Cron starts with a bare environment: the roots in use now go into the line.
    claude = claude_root_paths(settings.claude_home, os.environ, home)
    codex = codex_root_paths(settings.codex_home, os.environ, home)
    more = more_homes_in_use(settings, os.environ, home)
    exe = shutil.which("skillopt") or str(Path(sys.argv[0]).absolute())
    line = cron_line(
        at=at,
        skillopt=exe,
        state_dir=state,
        log=state / "cron.log",
        claude_home=",".join(str(p) for p in claude),
        codex_home=",".join(str(p) for p in codex),
        more_homes=more,
    )
    typer.echo(line)
    if print_only:
        return
    crontab = read_crontab(crontab_file)  # an unreadable crontab fails before the question
    question = "install this line in your crontab?"
    if not yes and not _ask(question, default=False, nothing="nothing installed"):
        typer.echo("nothing installed")
        return
    write_crontab(with_line(crontab, line, state), crontab_file)
    record_installed(state, crontab_file)
    typer.echo("installed; `skillopt sleep unschedule` removes exactly this line")


def unschedule_cmd(crontab_file: CrontabFile = None, state_dir: StateDir = None) -> None:
    """Remove the nightly cron line that `schedule` installed (and nothing else)."""
    from sleep.state.schedule import (
        forget_installed,
        installed_crontab_file,
        read_crontab,
        without_line,
        write_crontab,
    )

    state = _state_dir(state_dir, writing=False)  # removing a line writes only the crontab
    where = crontab_file if crontab_file is not None else installed_crontab_file(state)
    text, removed = without_line(read_crontab(where), state)
    if not removed:
        typer.echo("no skillopt sleep line in the crontab; nothing changed")
        return
    write_crontab(text, where)
    forget_installed(state)
    typer.echo(f"removed {removed} line")


def register(app: typer.Typer) -> None:
    group = next((g.typer_instance for g in app.registered_groups if g.name == "sleep"), None)
    if group is None:
        raise RuntimeError("sleep_setup_cmds must be registered after sleep_cmds")
    group.command("init")(init_cmd)
    group.command("schedule")(schedule_cmd)
    group.command("unschedule")(unschedule_cmd)
