"""A corrections corpus (tests/sleep/fixtures/corrections, the billing project mining was
developed on; corrections_photos, a second one, unseen until its first figures and then
fixed against; corrections_recipes, a third, held out until its figures and then fixed
against; corrections_greenhouse, a fourth, held out from fixing; corrections_ledger, a
fifth, held out from all mining work; all made by tests/support/corrections_corpus.py
with the real CLIs) put back where it was written: a test's own home replaces the
fixture's /home/dev (in the transcripts' bytes and in Claude Code's project folder name),
the project is cloned from its bundle to the path the sessions ran in, and a skills
repository deploys one skill to the project's CLAUDE.md (read by Claude Code) and one to
its AGENTS.md (read by Codex)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.skills_repo import SkillsRepo
from sleep.state.settings import SleepSettings, save_settings
from tests.sleep.transcripts import touch_in_order

SKILLOPT = Path(sys.executable).parent / "skillopt"
LIMIT_S = 300  # a hang is what it catches: a dry run of eight sessions takes seconds
CORPUS = Path(__file__).resolve().parent / "fixtures" / "corrections"
UNSEEN_CORPUS = Path(__file__).resolve().parent / "fixtures" / "corrections_photos"
RECIPES_CORPUS = Path(__file__).resolve().parent / "fixtures" / "corrections_recipes"
HELD_OUT_CORPUS = Path(__file__).resolve().parent / "fixtures" / "corrections_greenhouse"
LEDGER_CORPUS = Path(__file__).resolve().parent / "fixtures" / "corrections_ledger"
CORPORA = {
    "billing": CORPUS,
    "photos": UNSEEN_CORPUS,
    "recipes": RECIPES_CORPUS,
    "greenhouse": HELD_OUT_CORPUS,
    "ledger": LEDGER_CORPUS,
}


def corpus_labels(corpus: Path = CORPUS) -> dict[str, Any]:
    return json.loads((corpus / "labels.json").read_text(encoding="utf-8"))


@dataclass
class CorrectionsWorld:
    home: Path
    project: Path
    skills: Path
    state: Path
    labels: dict[str, Any]
    corpus: Path = CORPUS

    def sleep(self, command: str, *args: str, ok=(0,)) -> subprocess.CompletedProcess:
        """`skillopt sleep COMMAND` as the person runs it (a process of its own, their HOME);
        an exit code not in `ok` fails the test with its stderr."""
        env = {**os.environ, "HOME": str(self.home)}
        project = ["--project", str(self.project)] if command in ("run", "dry-run") else []
        argv = [str(SKILLOPT), "sleep", command, "--state-dir", str(self.state), *project, *args]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=LIMIT_S,
                              cwd=self.project, stdin=subprocess.DEVNULL)  # fmt: skip
        assert done.returncode in ok, (
            f"skillopt sleep {command} exited {done.returncode}:\n{done.stderr[-3000:]}"
        )
        return done

    def dry_run(self) -> dict[str, Any]:
        return json.loads(self.sleep("dry-run", "--json").stdout)

    def checkout(self, commit: str, folder: Path) -> Path:
        """The project as it was at `commit`, in a folder of its own (a replay's workspace)."""
        subprocess.run(["git", "clone", "-q", str(self.corpus / "project.bundle"), str(folder)],
                       check=True, capture_output=True)  # fmt: skip
        subprocess.run(["git", "-C", str(folder), "checkout", "-q", commit], check=True)
        return folder


def _encoded(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def lay_out(root: Path, corpus: Path = CORPUS) -> CorrectionsWorld:
    labels = corpus_labels(corpus)
    fixture_home = labels["fixture_home"]
    home = root / "home"
    by_session: dict[str, list[Path]] = {}
    for file in sorted(corpus.rglob("*.jsonl")):
        rel = str(file.relative_to(corpus))
        tool, _, inside = rel.partition("/")
        target = home / f".{tool}" / inside.replace(_encoded(fixture_home), _encoded(str(home)))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes().replace(fixture_home.encode(), str(home).encode()))
        owner = next((s["key"] for s in labels["sessions"] if s["session_id"] in rel), "")
        by_session.setdefault(owner, []).append(target)
    # the order the person had the sessions in (the harvest reads by mtime)
    touch_in_order([p for s in labels["sessions"] for p in by_session.get(s["key"], [])])
    project = home / labels["project"].removeprefix(fixture_home + "/")
    project.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "-b", "main", str(corpus / "project.bundle"),
                    str(project)], check=True, capture_output=True)  # fmt: skip
    # The person's checkout has its virtualenv, whose python runs their tests (the check's
    # toolchain is looked up there first: sleep/check_toolchain.py).
    (project / ".venv").symlink_to(sys.prefix)
    with (project / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".venv\n")
    skills = root / "skills"
    repo = SkillsRepo.init(skills)
    name = project.name  # billing-svc, photo-shelf
    text = f"# {name}\n\n{_what_it_is(project / 'README.md')}\n"
    repo.add_skill(name, text, deploy_to=str(project / "CLAUDE.md"))
    repo.add_skill(f"{name}-codex", text, deploy_to=str(project / "AGENTS.md"))
    state = root / "state"
    save_settings(
        state,
        SleepSettings(
            project=str(project),
            skills_repo=str(skills),
            backend="handoff",
            claude_home=str(home / ".claude"),
            codex_home=str(home / ".codex"),
        ),
    )
    return CorrectionsWorld(home, project, skills, state, labels, corpus)


def _what_it_is(readme: Path) -> str:
    """What the project is: the first sentence of its README after the title (the
    skill's only text; "Invoice totals for the finance team.")."""
    lines = [ln for ln in readme.read_text(encoding="utf-8").splitlines() if ln.strip()]
    first = next((ln for ln in lines if not ln.startswith("#")), "")
    return first.split(". ")[0].rstrip(".") + "."
