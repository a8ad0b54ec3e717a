"""The Sleep screen's table rows and detail texts, from sleep_data's views (pure: no
widgets, so they are easy to read and to test)."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from skillopt_tui.app.compare_marks import marked_cell
from skillopt_tui.app.sleep_data import (
    HarvestPreview,
    NightSkill,
    NightView,
    SleepContext,
    TaskList,
    TaskRow,
)
from sleep.harvest.model import Session

STATUS_STYLE = {
    "running": "bold green",
    "live": "bold green",
    "finished": "cyan",
    "failed": "bold red",
    "stopped": "yellow",
    "waiting": "yellow",
    "skipped": "dim",
    "unreadable": "red",
}
SPLIT_STYLE = {"train": "green", "val": "cyan", "test": "magenta"}
ROOT_COLUMNS = ("tool", "root", "found", "files", "sub-agent", "sessions", "skipped")
SKIPPED_COLUMNS = ("file", "reason")
SESSION_COLUMNS = ("", "tool", "session", "branch", "tasks", "first task")
TASK_COLUMNS = ("when", "task")
REDACTION_COLUMNS = ("kind", "secret", "in context")
NIGHT_COLUMNS = ("night · skill", "status", "mined", "replayed", "val")
MINED_COLUMNS = ("split", "skill", "seen", "intent")


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def short_path(path: str | Path, keep: int = 2) -> str:
    """The last `keep` parts of a path (the file and its folder), with a leading …."""
    parts = Path(path).parts
    return str(Path(*parts[-keep:])) if len(parts) <= keep else "…/" + str(Path(*parts[-keep:]))


def tilde(path: Path) -> str:
    """A path under the home folder as ~/…, to leave room on narrow screens."""
    home, text = os.path.expanduser("~"), str(path)
    if home in ("", "/") or not (text == home or text.startswith(home + os.sep)):
        return text
    return "~" + text[len(home) :]


def one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- header and empty states -----------------------------------------------------------------


def header(ctx: SleepContext, project: Path, everything: bool, note: str = "") -> Text:
    """The title line; `note` follows the project (which of several is shown)."""
    if ctx.problem:
        return Text.assemble(("Sleep  ", "bold"), (ctx.problem, "red"))
    which = "whole history" if everything else "new since last night"
    backend = ctx.settings.backend or "handoff"
    return Text.assemble(
        ("Sleep", "bold"), f" · {tilde(project)}{note} · backend {backend} · sessions {which}"
    )


def no_sessions(p: HarvestPreview) -> str:
    if p.problem:
        return p.problem
    where = tilde(p.project)
    if p.everything:
        return (
            f"no session of {where} in the transcripts found (see Sources): "
            "work in the project with Claude Code or Codex, or set the project with "
            "`skillopt sleep init --project PATH`"
        )
    return f"no new session of {where} since the last night: press a to see the whole history"


def no_nights(ctx: SleepContext) -> str:
    if not ctx.initialised:
        return (
            "no nights yet, and Sleep is not set up: run `skillopt sleep init --project PATH` "
            "in a shell (it finds the project's CLAUDE.md/AGENTS.md), then press r"
        )
    return "no nights yet: press r to run one now, or schedule them with `skillopt sleep schedule`"


# -- sources -------------------------------------------------------------------------------


def root_cells(preview: HarvestPreview) -> list[tuple]:
    return [
        (
            r.tool,
            tilde(r.path),
            Text("yes", style="green") if r.exists else Text("no", style="dim"),
            str(r.files),
            str(r.subagent_files),
            str(r.sessions),
            str(r.skipped),
        )
        for r in preview.roots()
    ]


def sources_summary(preview: HarvestPreview) -> Text:
    result = preview.result
    if result is None:
        return Text(
            preview.problem or "reading the transcripts…", style="red" if preview.problem else "dim"
        )
    which = "whole history" if preview.everything else "new since the last night"
    left = ", ".join(f"{reason or '?'} {n}" for reason, n in sorted(result.left_out.items()))
    auto = sum(1 for s in result.sessions if s.automation)
    parts = [
        f"{result.files_read} file(s) read ({result.bytes_read / 1e6:.1f} MB, {which}), "
        f"{result.files_unchanged} unchanged; ",
        (f"{len(result.sessions)} session(s)", "bold"),
        f" of {tilde(preview.project)}",
        f" ({auto} automation)" if auto else "",
    ]
    if left:
        parts.append(f"; left out: {left}")
    return Text.assemble(*parts)


def skipped_cells(preview: HarvestPreview) -> list[tuple]:
    if preview.result is None:
        return []
    return [(Path(s.file).name, s.detail()) for s in preview.result.skipped]


# -- sessions and redactions -----------------------------------------------------------------


def sessions_of(preview: HarvestPreview) -> list[Session]:
    return [] if preview.result is None else list(preview.result.sessions)


def session_cells(sessions: list[Session]) -> list[tuple]:
    return [
        (
            Text("auto", style="bold magenta") if s.automation else "",
            s.source,
            s.session_id[-8:],  # Codex ids are time-ordered: their heads repeat
            s.branch or "—",
            str(len(s.tasks)),
            one_line(s.tasks[0].text, 60) if s.tasks else "",
        )
        for s in sessions
    ]


def task_cells(session: Session) -> list[tuple]:
    rows = []
    for t in session.tasks:
        when = (t.timestamp or "—")[:16].replace("T", " ")
        text = Text(one_line(t.text))
        if t.aborted:
            text = Text.assemble(("aborted ", "yellow"), text)
        rows.append((when, text))
    return rows


def session_title(session: Session) -> str:
    kind = (
        "automation session (mined only with --include-automation)"
        if session.automation
        else "session"
    )
    return f"{kind} {session.session_id} · {short_path(session.file)}"


def redaction_summary(preview: HarvestPreview) -> Text:
    if preview.result is None or not preview.result.redactions:
        return Text("")
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(preview.result.redactions.items()))
    total = sum(preview.result.redactions.values())
    return Text.assemble((f"{total} redaction(s)", "bold"), f": {counts} — secrets are masked")


def redaction_detail(preview: HarvestPreview | None, pos: int) -> Text:
    shown = preview.result.shown if preview and preview.result else []
    if not 0 <= pos < len(shown):
        return Text("")
    r = shown[pos]
    return Text.assemble(
        (r.kind, "yellow"), f" ({r.hint})\n", r.context, "\n", (f"in {tilde(Path(r.file))}", "dim")
    )


def redaction_cells(preview: HarvestPreview) -> list[tuple]:
    if preview.result is None:
        return []
    return [
        (Text(r.kind, style="yellow"), r.hint, one_line(r.context, 120))
        for r in preview.result.shown
    ]


# -- nights ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NightRow:
    """What a row of the nights table stands for (Enter acts on it)."""

    kind: str  # "night" | "skill" | "branch"
    night: NightView
    skill: NightSkill | None = None


BRANCH_STYLE = {"adopted": "green", "rolled back": "yellow", "rejected": "dim", "gone": "dim"}


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def night_rows(
    nights: list[NightView], marked: Collection[Path] = ()
) -> tuple[list[NightRow], list[tuple]]:
    """The nights table; a skill whose run folder is in `marked` (to compare) has a dot."""
    refs: list[NightRow] = []
    cells: list[tuple] = []
    for night in nights:
        pending = f" ({night.pending} waiting)" if night.pending else ""
        refs.append(NightRow("night", night))
        cells.append(
            (
                Text(night.night_id, style="bold"),
                Text.assemble(status_text(night.status), pending),
                str(sum(s.mined for s in night.skills)),
                str(sum(s.replayed or 0 for s in night.skills)),
                "",
            )
        )
        for skill in night.skills:
            refs.append(NightRow("skill", night, skill))
            cells.append(
                (
                    marked_cell(f" {skill.skill}", skill.run_dir in marked),
                    status_text(skill.status),
                    str(skill.mined),
                    "—" if skill.replayed is None else str(skill.replayed),
                    f"{_score(skill.baseline_val)} → {_score(skill.best_val)}"
                    if skill.baseline_val is not None
                    else "—",
                )
            )
            if skill.staged:
                refs.append(NightRow("branch", night, skill))
                waiting = skill.branch_state == "staged"
                cells.append(
                    (
                        Text.assemble(
                            ("    ↳ ", "dim"), (skill.staged, "yellow" if waiting else "dim")
                        ),
                        ""
                        if waiting
                        else Text(skill.branch_state, BRANCH_STYLE.get(skill.branch_state, "")),
                        "",
                        "",
                        "",
                    )
                )
    return refs, cells


CHECK_WORDS = (("pass", "passed", "green"), ("fail", "failed", "red"))
CHECK_WORDS += (("timeout", "timed out", "red"), ("not-run", "not run", "yellow"))


def check_line(counts: dict[str, int]) -> Text:
    """The replays' command checks (sleep/night/replay_checks.py), e.g. `4 passed, 2 failed`."""
    parts: list[Text | str] = ["command checks: "]
    shown = [(counts[k], word, style) for k, word, style in CHECK_WORDS if counts.get(k)]
    for i, (n, word, style) in enumerate(shown):
        parts += [", "] if i else []
        parts.append(Text(f"{n} {word}", style=style))
    return Text.assemble(*parts)


def branch_gone(skill: NightSkill) -> str:
    """Why a branch the night staged is not to review any more."""
    where = "History (h on Home) shows main" if skill.branch_state != "gone" else ""
    said = f"{skill.staged} is {skill.branch_state} since the night: nothing to review"
    return f"{said}; {where}" if where else said


def night_detail(row: NightRow | None) -> Text:
    if row is None:
        return Text("")
    night, skill = row.night, row.skill
    if skill is None:
        lines = [Text.assemble((night.night_id, "bold"), " ", status_text(night.status))]
        if night.message:
            lines.append(Text(night.message))
        if night.pending:
            lines.append(
                Text(
                    f"prompts waiting: {tilde(night.folder / 'handoff' / 'prompts')}",
                    style="yellow",
                )
            )
        lines.append(Text(f"folder: {tilde(night.folder)}", style="dim"))
        return Text("\n").join(lines)
    c = skill.counts
    lines = [
        Text.assemble(
            (skill.skill, "bold"),
            " ",
            status_text(skill.status),
            f"  {c['train']} train / {c['val']} val / {c['test']} test tasks",
        )
    ]
    if skill.baseline_val is not None:
        lines.append(
            Text(f"val {_score(skill.baseline_val)} (baseline) → {_score(skill.best_val)} (best)")
        )
    if skill.reason:
        lines.append(Text(skill.reason, style="dim"))
    if skill.evidence:
        lines.append(evidence_text(skill.evidence))
    if skill.checks:
        lines.append(check_line(skill.checks))
    if row.kind == "branch" and skill.branch_state == "staged":
        lines.append(Text(f"Enter: review {skill.staged}", style="yellow"))
    elif row.kind == "branch":
        lines.append(Text(branch_gone(skill), style="dim"))
    elif skill.run_dir is not None:
        lines.append(Text(f"Enter: the run ({tilde(skill.run_dir)})", style="dim"))
    if skill.adopted:
        lines.append(Text(f"adopted as {skill.adopted[:12]}", style="green"))
    return Text("\n").join(lines)


def evidence_text(evidence: dict) -> Text:
    """The staged candidate's held-out evidence: items up and down, the sign test's p,
    and, above p = 0.1, that it is weak."""
    p = evidence.get("p")
    said = (
        f"held out: {evidence.get('improved', 0)} improved / {evidence.get('regressed', 0)} "
        f"regressed of {evidence.get('val_items', '?')}"
        + (f", p={p:.3g}" if isinstance(p, int | float) else "")
    )
    if evidence.get("weak"):
        return Text(said + " — weak evidence: review before adopting", style="yellow")
    return Text(said)


def since_adoption(lines: list[str]) -> Text:
    """The adopted Sleep edits' preferences, read in the sessions since (flagged ones
    yellow, with the rollback command)."""
    if not lines:
        return Text("")
    out = [Text("Since adoption", style="bold")]
    out += [Text(ln, style="yellow" if "corrected again" in ln else "") for ln in lines]
    return Text("\n").join(out)


def preferences_text(lines: list[str]) -> Text:
    """What the person keeps correcting, with how often and by which agents."""
    if not lines:
        return Text("")
    return Text("\n").join([Text("Preferences", style="bold"), *(Text(ln) for ln in lines)])


# -- mined tasks -----------------------------------------------------------------------------


def mined_cells(tasks: TaskList) -> list[tuple]:
    return [
        (
            Text(r.split, style=SPLIT_STYLE.get(r.split, "")),
            r.task.skill or "—",
            str(r.task.occurrences),
            one_line(r.task.intent, 120),
        )
        for r in tasks.rows
    ]


def mined_detail(row: TaskRow | None) -> Text:
    if row is None:
        return Text("")
    t = row.task
    lines = [
        Text.assemble((t.id, "bold"), f" · {t.kind} · {row.split} · seen {t.occurrences}×"),
        Text(one_line(t.intent, 400)),
    ]
    if t.rubric:
        lines.append(Text.assemble(("rubric: ", "cyan"), one_line(t.rubric, 400)))
    if t.checks:
        lines.append(Text.assemble(("checks: ", "cyan"), "; ".join(c.describe() for c in t.checks)))
    lines.append(Text(f"from {len(row.sources)} session(s):", style="cyan"))
    lines += [Text(f"  {source}", style="dim") for source in row.sources]
    return Text("\n").join(lines)
