"""`skillopt tui`: the Textual dashboard. Textual is imported only when this runs, so the
other commands start fast."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from core.install_hint import install_extra


class TuiUsageError(UserError):
    """A `skillopt tui` option names something that is not there."""


REPO_ENV = "SKILLOPT_SKILLS_REPO"  # the same default the `skillopt skills` commands use


def resolve_skills_repo(option: Path | None) -> Path | None:
    """--skills-repo, else $SKILLOPT_SKILLS_REPO, else ./skills when it is a skills repo
    (has a skills.yaml); None when there is none (the TUI then shows runs only)."""
    if option is not None:
        if not option.is_dir():
            raise TuiUsageError(
                f"--skills-repo {option}: no such directory (create one with `skillopt init`)"
            )
        return option
    env = os.environ.get(REPO_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise TuiUsageError(
                f"${REPO_ENV}={env}: no such directory "
                "(create one with `skillopt init`, or unset it)"
            )
        return path
    local = Path("skills")
    return local if (local / "skills.yaml").is_file() else None


def resolve_state_dir(option: Path | None) -> Path:
    from sleep.harvest.run import default_state_dir

    return (option or default_state_dir()).expanduser().absolute()


def sleep_skills_repo(state_dir: Path) -> Path | None:
    """The skills repository `skillopt sleep init` recorded, so the Sleep screen's staged
    branches open in Review when no other repository was given; None if none or unreadable
    (the Sleep screen says why)."""
    from sleep.state.settings import load_settings

    try:
        recorded = load_settings(state_dir).skills_repo
    except UserError:
        return None
    return Path(recorded) if recorded and Path(recorded).is_dir() else None


RunsDirOption = Annotated[Path, typer.Option("--runs-dir", help="Folder holding run directories.")]
SkillsRepoOption = Annotated[
    Path | None,
    typer.Option(
        "--skills-repo",
        help=f"Skills repository (git) to review (default: ${REPO_ENV}, or ./skills if it is one).",
    ),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        metavar="DIR",
        help="Sleep state for the Sleep screen (default: ~/.local/state/skillopt/sleep).",
    ),
]
RunOption = Annotated[
    Path | None, typer.Option("--run", help="Open this run directory (live or finished).")
]
WebOption = Annotated[
    bool,
    typer.Option(
        "--web",
        help="Serve this dashboard to a browser instead (needs the web extra).",
    ),
]
HostOption = Annotated[
    str | None,
    typer.Option("--host", help="With --web: address to listen on (default 127.0.0.1)."),
]
PortOption = Annotated[
    int | None, typer.Option("--port", help="With --web: port (default 8765; 0 picks a free one).")
]
TokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        metavar="FILE",
        help="With --web: the token, on the first line (default: a new one each start).",
    ),
]
AllowRemoteOption = Annotated[
    bool,
    typer.Option(
        "--allow-remote", help="With --web: allow a non-loopback --host (anyone with the token)."
    ),
]
MaxSessionsOption = Annotated[
    int | None,
    typer.Option(
        "--max-sessions",
        help="With --web: browser sessions at once, each its own app process (default 4).",
    ),
]
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_MAX_SESSIONS = 4  # each session is an app process (~65 MB)
MAX_SESSIONS_LIMIT = 64


def web_args(runs_dir: Path, skills_repo: Path | None, run: Path | None, state: Path) -> list[str]:
    """The `skillopt tui` options each browser session's app process gets: what this
    command resolved, as absolute paths (sessions must all show the same repository)."""
    args = ["--runs-dir", str(runs_dir.absolute()), "--state-dir", str(state)]
    if skills_repo is not None:
        args += ["--skills-repo", str(skills_repo.absolute())]
    if run is not None:
        args += ["--run", str(run.absolute())]
    return args


def start_web(
    args: list[str],
    host: str,
    port: int,
    token_file: Path | None,
    allow_remote: bool,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
):
    from skillopt_tui.web.access import check_host, load_token

    check_host(host, allow_remote)
    if not 0 <= port <= 65535:
        raise TuiUsageError(f"--port {port}: not a port (0-65535; 0 picks a free one)")
    if not 1 <= max_sessions <= MAX_SESSIONS_LIMIT:
        raise TuiUsageError(
            f"--max-sessions {max_sessions}: give 1 to {MAX_SESSIONS_LIMIT} "
            "(each session is an app process)"
        )
    token = load_token(token_file)
    try:
        from skillopt_tui.web.server import app_command, serve
    except ImportError as exc:
        raise TuiUsageError(
            f"--web needs textual-serve ({exc.name} is missing): {install_extra('web')}"
        ) from None
    serve(
        app_command(args),
        host=host,
        port=port,
        token=token,
        allow_remote=allow_remote,
        max_sessions=max_sessions,
    )


def register(app: typer.Typer) -> None:
    @app.command("tui")
    def tui(
        runs_dir: RunsDirOption = Path("runs"),
        skills_repo: SkillsRepoOption = None,
        run: RunOption = None,
        state_dir: StateDirOption = None,
        web: WebOption = False,
        host: HostOption = None,
        port: PortOption = None,
        token_file: TokenFileOption = None,
        allow_remote: AllowRemoteOption = False,
        max_sessions: MaxSessionsOption = None,
    ) -> None:
        """Dashboard: follow or replay runs, review staged skill edits, roll back; Sleep nights."""
        given = (host, port, token_file, allow_remote or None, max_sessions)
        if not web and given != (None,) * len(given):
            raise TuiUsageError(
                "--host, --port, --token-file, --allow-remote and --max-sessions go with --web "
                "(e.g. skillopt tui --web --port 8765)"
            )
        if run is not None and not run.is_dir():
            raise TuiUsageError(f"--run {run}: no such run directory")
        if state_dir is not None and state_dir.exists() and not state_dir.is_dir():
            raise TuiUsageError(f"--state-dir {state_dir}: not a directory")
        state = resolve_state_dir(state_dir)
        skills_repo = resolve_skills_repo(skills_repo) or sleep_skills_repo(state)
        if web:
            host = DEFAULT_HOST if host is None else host
            port = DEFAULT_PORT if port is None else port
            args = web_args(runs_dir, skills_repo, run, state)
            sessions = DEFAULT_MAX_SESSIONS if max_sessions is None else max_sessions
            start_web(args, host, port, token_file, allow_remote, sessions)
            return
        from skillopt_tui.web.session import follow_web_server
        from skillopt_tui.writer_lock import claim_tui_writer

        follow_web_server()  # a browser session of `--web` ends with its server
        read_only = claim_tui_writer(skills_repo, state)  # one writer per repository
        from skillopt_tui.app.app import SkillOptApp

        SkillOptApp(
            runs_dir=runs_dir,
            skills_repo=skills_repo,
            run=run,
            state_dir=state,
            read_only=read_only,
        ).run()
