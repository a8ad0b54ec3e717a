"""The examples of docs/ and README.md, collected and run as a newcomer would run them.

A page is read top to bottom. A fenced block whose info string names a file
(```python title="envs/wordcount/environment.py"```) is that file's content: it is
written into the page's sandbox. A ```sh / ```bash block is run with bash, and a
```python block without a title with python, in the sandbox's root, in page order, so
one block can use what an earlier one made. A block that truly cannot run in a test
carries a visible marker on the line before it, with its reason:

    <!-- not-run: installs the npm tools over the network -->

The sandbox is a copy of what a checkout's commands read (configs/, manifests/, envs/),
with its own HOME and XDG folders and no API key, so `backend: auto` is the embedded
model (the test session's shared server, when the test is marked `embedded`) and nothing a
page does reaches the user's home or the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from core.models.local_server import ATTACH_ENV

ROOT = Path(__file__).resolve().parents[2]
RUN_LANGS = {"sh": "bash", "bash": "bash", "shell": "bash", "python": "python", "py": "python"}
# Every language a fenced block of the docs may name. A block in any other (or none) would
# hide a command from the tests, so tests/docs/test_examples.py refuses it.
KNOWN_LANGS = set(RUN_LANGS) | {"yaml", "toml", "json", "text", "mermaid", "markdown", "md"}
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>[^>]*?)\s*-->")
FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>```+)(?P<info>[^`]*)$")
TITLE = re.compile(r'title="(?P<title>[^"]+)"')
# `<!-- insert: NAME -->` on the line before a titled block: it goes at the end of the
# tuple or list NAME of that file (a registry entry a guide asks you to add), not over the
# whole file. A comment, not an info-string attribute: the highlighter refuses a fence
# with an attribute it does not know, and the page then shows it as raw text.
INSERT = re.compile(r"<!--\s*insert:\s*(?P<name>[A-Za-z_]+)\s*-->")
COPIED = ("configs", "manifests", "envs")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str
    title: str | None
    not_run: str | None  # the reason, when marked
    insert: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.not_run is None and self.title is None and self.lang in RUN_LANGS


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, with the marker on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m["indent"]), m["fence"], m["info"].strip()
        lang = info.split()[0] if info else ""
        title = TITLE.search(info)
        before = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
        marker = NOT_RUN.search(before)
        insert = INSERT.search(before)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        out.append(
            Block(
                page,
                i + 1,
                lang,
                "\n".join(body) + "\n",
                title["title"] if title else None,
                marker["reason"] if marker else None,
                insert["name"] if insert else None,
            )
        )
        i = j + 1
    return out


def first_session_block() -> Block:
    """README's "A first session" block: tests/docs/test_first_session.py types it."""
    readme = ROOT / "README.md"
    start = readme.read_text(encoding="utf-8").splitlines().index("## A first session") + 1
    session = [b for b in blocks(readme) if b.line > start and b.runs]
    assert session, "README.md has no runnable block under 'A first session'"
    return session[0]


def make_sandbox(base: Path) -> tuple[Path, dict[str, str]]:
    """A checkout-shaped folder and the environment a page's commands run with."""
    root = base / "checkout"
    root.mkdir()
    for name in COPIED:
        shutil.copytree(
            ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    home = base / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(("SKILLOPT_", "XDG_", "PYTEST_"))
    }
    if ATTACH_ENV in os.environ:  # the test session's embedded server (tests/conftest.py)
        env[ATTACH_ENV] = os.environ[ATTACH_ENV]
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        # The sandbox's envs/ first (a page may add an environment), the code under test next.
        PYTHONPATH=f"{root}{os.pathsep}{ROOT}",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        GIT_AUTHOR_NAME="Docs Example",
        GIT_AUTHOR_EMAIL="docs@example.invalid",
        GIT_COMMITTER_NAME="Docs Example",
        GIT_COMMITTER_EMAIL="docs@example.invalid",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        NO_COLOR="1",
        COLUMNS="100",
    )
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    return root, env


def write_file(target: Path, block: Block) -> None:
    """A titled block: the whole file, or an entry added at the end of a registry."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if block.insert is None:
        target.write_text(block.code, encoding="utf-8")
        return
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(
        (i for i, ln in enumerate(lines) if re.match(rf"{block.insert}\b.*[(\[]$", ln.strip())),
        None,
    )
    if start is None:
        raise AssertionError(f"{block.where}: {target.name} has no {block.insert} = ( ... )")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() in (")", "]"))
    entry = block.code.rstrip()
    entry += "" if entry.endswith(",") else ","  # an element of the tuple, like the others
    lines[end:end] = [f"    {ln}\n" if ln else "\n" for ln in entry.split("\n")]
    target.write_text("".join(lines), encoding="utf-8")


@dataclass
class Outcome:
    root: Path
    ran: int = 0  # shell and Python blocks run
    files: int = 0  # titled blocks written as files
    skipped: int = 0  # shell and Python blocks marked not-run


def run_page(path: Path, base: Path, *, timeout_s: float = 600) -> Outcome:
    """Run one page's examples in a fresh sandbox; an example that fails raises
    AssertionError naming the page, the line and the output."""
    root, env = make_sandbox(base)
    outcome = Outcome(root)
    for block in blocks(path):
        if block.not_run is not None:
            outcome.skipped += block.lang in RUN_LANGS
            continue
        if block.title is not None:
            write_file(root / block.title, block)
            outcome.files += 1
            continue
        if not block.runs:
            continue
        runner = RUN_LANGS[block.lang]
        argv = (
            ["bash", "-euo", "pipefail", "-c", block.code]
            if runner == "bash"
            else [sys.executable, "-c", block.code]
        )
        proc = subprocess.run(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"{block.where}: the example exited {proc.returncode}\n--- code\n{block.code}"
                f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
            )
        outcome.ran += 1
    return outcome
