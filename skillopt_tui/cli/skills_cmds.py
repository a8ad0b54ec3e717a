"""`skillopt init` and `skillopt skills ...`: the skills repository from the shell.

Data goes to stdout (`--json` for scripts); errors are UserErrors (one line, exit 2). The
one exception is a hand-edited deploy target: its difference is printed to stderr before
the one-line error, since the person needs to see what they would lose.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from core.errors import UserError
from core.skill.document import load_skill
from skillopt_tui.cli.output import emit_json

if TYPE_CHECKING:
    from core.skills_repo import SkillsRepo

REPO_ENV = "SKILLOPT_SKILLS_REPO"


class SkillsUsageError(UserError):
    """Bad command-line input for a skills command."""


def _default_repo() -> Path:
    """Where `init` creates a repository when given no path."""
    return Path(os.environ.get(REPO_ENV) or "skills")


def _enclosing_repo(start: Path) -> Path | None:
    """The skills repository `start` is in, like git finds its repository: the nearest of
    the directory and its parents that is the top of a git work tree holding skills.yaml."""
    from core.skills_repo.manifest import MANIFEST

    for directory in (start, *start.parents):
        if (directory / ".git").exists() and (directory / MANIFEST).is_file():
            return directory
    return None


def find_repo() -> Path:
    """The repository a skills command uses without --repo: the one the current directory
    is in, else $SKILLOPT_SKILLS_REPO, else ./skills."""
    return _enclosing_repo(Path.cwd().absolute()) or _default_repo()


RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help=f"Skills repository (default: the one the current directory is in, "
        f"else ${REPO_ENV}, else ./skills).",
    ),
]


def _open(repo: Path | None) -> SkillsRepo:
    from core.skills_repo import SkillsRepo

    opened = SkillsRepo.open(repo or find_repo())
    if opened.recovered:
        typer.echo(f"skillopt: {opened.recovered}", err=True)
    return opened


def parse_hunks(spec: str, count: int | None = None, branch: str = "the branch") -> list[int]:
    """'1,3,5-7' → [1, 3, 5, 6, 7], bounded by the `count` hunks that exist (a range is
    checked before it is expanded, so `1-1000000000` is an error, not a gigabyte). Without
    a count (the caller cannot know it yet) no diff is taken to have more than MAX_HUNKS."""
    numbers: set[int] = set()
    has = f"it has hunks 1-{count}" if count else "it has no hunks"
    if count is None:
        count, has = MAX_HUNKS, f"no diff has more than {MAX_HUNKS} hunks"
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi or lo < 1:
                    raise ValueError(part)
            elif part:
                lo = hi = int(part)
                if lo < 1:
                    raise ValueError(part)
            else:
                continue
            if hi > count:
                raise SkillsUsageError(f"no hunk {part} in {branch}; {has}")
            numbers.update(range(lo, hi + 1))
    except ValueError as exc:
        raise SkillsUsageError(f"bad --hunks {spec!r}: give numbers like 1,3,4 or 2-5") from exc
    if not numbers:
        raise SkillsUsageError("--hunks is empty: give numbers like 1,3,4, or use --all")
    return sorted(numbers)


MAX_HUNKS = 10_000


def parse_line_groups(specs: list[str]) -> dict[int, frozenset[int]]:
    """`--lines 2:3-5,7 --lines 4:1` → {2: {3, 4, 5, 7}, 4: {1}} (see core line_select)."""
    from core.skills_repo.line_select import parse_lines

    selection: dict[int, frozenset[int]] = {}
    for spec in specs:
        try:
            for index, numbers in parse_lines(spec).items():
                selection[index] = selection.get(index, frozenset()) | numbers
        except ValueError as exc:
            raise SkillsUsageError(
                f"bad --lines {spec!r}: give HUNK:LINES like 2:3-5,7 (hunk 2, its changed "
                "lines 3 to 5 and 7; numbers from `skillopt skills diff --numbers`)"
            ) from exc
    return selection


def _with_difference(fn, *args, **kwargs):
    from core.skills_repo import DeployTargetChanged

    try:
        return fn(*args, **kwargs)
    except DeployTargetChanged as exc:
        if exc.difference:
            sys.stderr.write(exc.difference)
        raise


skills_app = typer.Typer(help="Skills repository: stage, review, adopt, reject, roll back.")


def init_cmd(
    path: Annotated[
        Path | None, typer.Argument(help=f"Directory (default: ${REPO_ENV} or ./skills).")
    ] = None,
    author: Annotated[
        str | None, typer.Option("--author", help='Commit identity, "Name <email>".')
    ] = None,
) -> None:
    """Create a skills repository (or make an existing git repo one)."""
    from core.skills_repo import SkillsRepo

    identity = None
    if author:
        name, _, email = author.partition("<")
        if not name.strip() or not email.endswith(">"):
            raise SkillsUsageError(f'bad --author {author!r}: use "Name <email>"')
        identity = (name.strip(), email[:-1].strip())
    repo = SkillsRepo.init(path or _default_repo(), identity=identity)
    typer.echo(f"skills repository ready: {repo.path}")


@skills_app.command("list")
def list_cmd(
    repo: RepoOption = None,
    as_json: bool = typer.Option(False, "--json", help="Skills and staged branches as JSON."),
) -> None:
    """Skills with their deploy targets, and staged branches with commit counts."""
    r = _open(repo)
    skills, staged = r.list_skills(), r.staged_branches()
    if as_json:
        emit_json({"skills": [asdict(s) for s in skills], "staged": [asdict(b) for b in staged]})
        return
    for s in skills:
        typer.echo(f"{s.name}\t{s.path}\t{s.deploy_to or '-'}")
    for b in staged:
        typer.echo(f"{b.name}\t{b.skill}\t{b.commits} commit{'s' * (b.commits != 1)}")


@skills_app.command("add")
def add_cmd(
    name: Annotated[str, typer.Argument(help="The skill's name in the repository.")],
    from_file: Annotated[Path, typer.Option("--from", help="The skill file to import.")],
    deploy_to: Annotated[
        str | None, typer.Option("--deploy-to", help="Where adopt/rollback write it.")
    ] = None,
    path: Annotated[
        str | None, typer.Option("--path", help="File inside the repo (default NAME/SKILL.md).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a different deploy target.")
    ] = False,
    repo: RepoOption = None,
) -> None:
    """Import an existing skill onto main."""
    text = load_skill(from_file)
    r = _open(repo)
    sha = r.add_skill(name, text, path=path, deploy_to=deploy_to, force=force)
    typer.echo(sha)
    entry = _entry(r, name)
    typer.echo(f"added {name} as {entry.path} on main of {r.path}")
    if entry.deploy_to:
        typer.echo(f"deployed to {entry.deploy_to} (adopt and rollback write it there)")


def _entry(r, name: str):
    return next(e for e in r.list_skills() if e.name == name)


@skills_app.command("stage")
def stage_cmd(
    name: Annotated[str, typer.Argument(help="The skill to stage a new version of.")],
    from_file: Annotated[Path, typer.Option("--from", help="The candidate skill text.")],
    message: Annotated[str, typer.Option("--message", "-m", help="One-line summary.")],
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Default: manual-<timestamp>.")
    ] = None,
    repo: RepoOption = None,
) -> None:
    """Stage a hand-made candidate as a commit on staged/<run-id>."""
    import time

    text = load_skill(from_file)
    r = _open(repo)
    run = run_id or time.strftime("manual-%Y%m%d-%H%M%S")
    step = next((b.commits + 1 for b in r.staged_branches() if b.run_id == run), 1)
    sha = r.stage(name, run, text, subject=message, trailers={"Step": str(step)}, body="")
    typer.echo(f"staged/{run}\t{sha}")


@skills_app.command("log")
def log_cmd(
    name: Annotated[str | None, typer.Argument(help="Only commits touching this skill.")] = None,
    repo: RepoOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The commits as JSON.")] = False,
) -> None:
    """History of main: init, add, adopt, rollback."""
    entries = _open(repo).log(name)
    if as_json:
        emit_json([asdict(e) for e in entries])
        return
    for e in entries:
        typer.echo(f"{e.sha[:12]}  {e.date_iso}  {e.kind:<8}  {e.subject}")


@skills_app.command("diff")
def diff_cmd(
    staged: Annotated[str, typer.Argument(help="staged/<run-id> or <run-id>.")],
    repo: RepoOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The hunks and evidence as JSON.")
    ] = False,
    numbers: Annotated[
        bool,
        typer.Option("--numbers", help="Number each hunk's changed lines (for adopt --lines)."),
    ] = False,
) -> None:
    """The staged branch's net diff as numbered hunks, with each commit's evidence."""
    d = _open(repo).diff(staged)
    if as_json:
        emit_json(d.to_dict())
        return
    for c in d.evidence:
        facts = ", ".join(f"{k} {v}" for k, v in c.trailers.items() if k not in ("Skill",))
        typer.echo(f"# {c.sha[:12]} {c.subject} ({facts})")
        for line in c.body.strip("\n").splitlines():  # rationales, what moved and why
            typer.echo(f"#   {line}".rstrip())
    for h in d.hunks:
        typer.echo(f"[{h.index}] {h.file} {h.header}")
        changed = 0
        for line in h.lines:
            if numbers:
                if line[:1] in ("+", "-"):
                    changed += 1
                    line = f"{changed:>3} {line}"
                else:
                    line = f"    {line}"
            typer.echo(line)


@skills_app.command("adopt")
def adopt_cmd(
    staged: Annotated[str, typer.Argument(help="staged/<run-id> or <run-id>.")],
    hunks: Annotated[
        str | None, typer.Option("--hunks", help="Hunk numbers, e.g. 1,3,4 or 2-5.")
    ] = None,
    all_hunks: Annotated[bool, typer.Option("--all", help="Adopt every hunk.")] = False,
    lines: Annotated[
        list[str] | None,
        typer.Option(
            "--lines",
            help="Some changed lines of a hunk: HUNK:LINES, e.g. 2:3-5,7 (repeatable; line "
            "numbers from `skills diff --numbers`). With --hunks, those hunks whole too.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a hand-edited deploy target.")
    ] = False,
    repo: RepoOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="What was adopted, as JSON.")] = False,
) -> None:
    """Apply chosen hunks (or lines of hunks) to the skill on main (one commit), deploy."""
    if hunks is not None and all_hunks:
        raise SkillsUsageError("give either --hunks or --all, not both")
    if lines and all_hunks:
        raise SkillsUsageError("give either --lines or --all, not both")
    if hunks is None and not lines and not all_hunks:
        raise SkillsUsageError(
            "choose what to adopt: --hunks 1,3,4 (numbers from `skillopt skills diff`), "
            "--lines HUNK:LINES, or --all for every hunk"
        )
    r = _open(repo)
    chosen = None
    if hunks is not None:
        diff = r.diff(staged)
        chosen = parse_hunks(hunks, len(diff.hunks), diff.branch)
    selection = parse_line_groups(lines) if lines else None
    result = _with_difference(r.adopt, staged, chosen, force=force, lines=selection)
    if as_json:
        emit_json(asdict(result))
        return
    typer.echo(result.commit)
    if result.deployed_to:
        typer.echo(f"deployed to {result.deployed_to}")


@skills_app.command("edit")
def edit_cmd(
    staged: Annotated[str, typer.Argument(help="staged/<run-id> or <run-id>.")],
    hunk: Annotated[
        int | None,
        typer.Option("--hunk", help="Edit only this hunk's lines (numbers from `skills diff`)."),
    ] = None,
    repo: RepoOption = None,
) -> None:
    """Edit the staged candidate (or one hunk) in $EDITOR; stage the result on the same
    branch as a commit marked `Edited: by hand`. An editor that exits non-zero, or a file
    left unchanged, stages nothing."""
    from skillopt_tui.hand_editor import EditFile, stage_edited

    r = _open(repo)
    edit = EditFile.write(r.edit_target(staged, hunk))
    edit.run_editor()
    typer.echo(stage_edited(r, edit))


@skills_app.command("reject")
def reject_cmd(
    staged: str = typer.Argument(..., help="staged/<run-id> or <run-id>."),
    repo: RepoOption = None,
) -> None:
    """Archive a staged branch as rejected/<run-id> (kept, not deleted)."""
    typer.echo(_open(repo).reject(staged))


@skills_app.command("rollback")
def rollback_cmd(
    target: Annotated[
        str | None, typer.Argument(help="Adoption commit, or skill name (its last adoption).")
    ] = None,
    hunks: Annotated[
        str | None,
        typer.Option(
            "--hunks", help="Only these hunks of the adoption's diff, e.g. 2 (see `skills show`)."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a hand-edited deploy target.")
    ] = False,
    repo: RepoOption = None,
) -> None:
    """Revert an adoption (or some of its hunks) on main, then redeploy."""
    chosen = parse_hunks(hunks) if hunks is not None else None
    r = _open(repo)
    sha = _with_difference(r.rollback, target, force=force, hunks=chosen)
    typer.echo(sha)
    # What the commit did, from its own trailers: which adoption and which skill.
    done = next(e for e in r.log() if e.sha == sha)
    skill, reverted = done.trailers.get("Skill", ""), done.trailers.get("Reverts", "")
    part = f"hunks {hunks} of " if hunks is not None else ""
    typer.echo(f"rolled back {part}adoption {reverted[:12]} of {skill} on main")
    deploy_to = _entry(r, skill).deploy_to
    if deploy_to:
        typer.echo(f"redeployed to {deploy_to}")
    else:
        typer.echo(f"{skill} has no deploy target: nothing outside the repository changed")


@skills_app.command("show")
def show_cmd(
    commit: str = typer.Argument(..., help="A commit of the skills repository."),
    repo: RepoOption = None,
) -> None:
    """The unified diff of one commit."""
    typer.echo(_open(repo).show(commit), nl=False)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.add_typer(skills_app, name="skills")
