"""The person's own Python toolchain for a mined check, lent to the jail read-only.

A check is a command the person ran (`python -m pytest -q`), and its `python` is theirs:
the project's virtualenv, or a pyenv, uv or conda interpreter on their PATH, none of which
the jail's system folders hold. So before a check runs, each program its command starts
(the first word of each simple command) is looked up as the host finds it for that
project: `<project>/.venv/bin`, `<project>/venv/bin` (the replay's workspace is a fresh
checkout without them), then the host's PATH. A pyenv shim is resolved to the program
pyenv picks for the project; the Python that runs the program is asked for its prefixes
(`sys.prefix`, `sys.base_prefix`: a venv and the Python it was made from), and those are
bound read-only at the same paths, the program's folder put on PATH ahead of the system
ones. A `make` the command starts runs its recipes' programs (`make test` whose recipe
calls `python`): those of the targets it names and their prerequisites, read from the
workspace's Makefile as text, are lent the same way.

Nothing else of the host shows: never the home folder (a prefix that holds it, or the
project, is refused), never the host's environment (the jail sets its own), never the
project's sources (an editable install pointing there finds nothing: the check tests the
workspace). Only Python toolchains are lent: another program outside the system folders
(node from nvm, cargo from rustup) would need folders that can hold an npmrc or registry
credentials beside the binaries, so it stays missing and the check says why. Looking up
runs the person's own interpreter on the host (`-I`, a fixed query), never a file of the
workspace, which a model wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from envs.jail import LIBRARY_DIRS
from envs.jailed_command import SYSTEM_BINARIES

PROJECT_VENVS = (".venv", "venv")
PROBE_TIMEOUT_S = 20.0
_PYTHON_NAME = re.compile(r"^(python|pypy)[0-9.]*$")
_ASK = (
    "import json, sys; print(json.dumps([sys.prefix, sys.exec_prefix, "
    "getattr(sys, 'base_prefix', sys.prefix), getattr(sys, 'base_exec_prefix', "
    "sys.exec_prefix), sys.path]))"
)
# A Python whose prefix is one of these is the system's: the jail shows its libraries
# already but for the folders on its sys.path outside /usr/lib (/usr/local/lib/python3.x).
_SYSTEM_PREFIXES = ("/", "/usr", "/usr/local")
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "!", "{", "}"})
# Words that start no program of their own: the shell's keywords and builtins, and the
# wrappers whose next word is the program.
_KEYWORDS = frozenset(str.split("if then else elif fi for while until do done case esac in"))
_BUILTINS = frozenset(
    str.split(
        ". : [ alias bg break cd continue echo eval exit export false fg getopts hash jobs "
        "kill local printf pwd read readonly return set shift test times trap true type "
        "ulimit umask unalias unset wait"
    )
)
_WRAPPERS = frozenset({"env", "command", "exec", "nohup", "nice", "time"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Toolchain:
    """What a check's programs need in the jail: host folders bound read-only at the same
    paths, bin folders for PATH (ahead of the system ones), and the programs that cannot
    be found for the jail, each with why."""

    binds: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)

    def add(self, binds: list[str], folder: str) -> None:
        for bind in binds:
            if not any(bind == b or bind.startswith(b + "/") for b in self.binds):
                self.binds = [b for b in self.binds if not b.startswith(bind + "/")] + [bind]
        if folder not in self.path:
            self.path.append(folder)


def programs(command: str) -> list[str]:
    """The programs a shell command starts by name or absolute path (a relative path is
    the workspace's own file), first word of each simple command; [] when it does not
    parse."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return []
    found: list[str] = []
    starts = True
    for word in words:
        if word in _OPERATORS or set(word) <= set("&|;()"):
            starts = True
            continue
        if not starts:
            continue
        if _ASSIGNMENT.match(word) or word in _KEYWORDS or word in _WRAPPERS:
            continue
        if word.startswith("-"):
            continue  # a wrapper's option
        starts = False
        if (
            "$" in word
            or "`" in word
            or word in _BUILTINS
            or ("/" in word and not word.startswith("/"))
        ):
            continue
        if word not in found:
            found.append(word)
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    return any(_inside(path, folder) for folder in (*SYSTEM_BINARIES, *LIBRARY_DIRS))


def locate(name: str, project: Path | None) -> str | None:
    """Where the host finds `name` for `project`: its venv, then the host's PATH (its
    absolute folders), then the jail's system folders."""
    if name.startswith("/"):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    folders = [str(Path(project) / v / "bin") for v in PROJECT_VENVS] if project else []
    folders += [f for f in os.environ.get("PATH", "").split(os.pathsep) if f.startswith("/")]
    return shutil.which(name, path=os.pathsep.join([*folders, *SYSTEM_BINARIES]))


def _script(path: str) -> str:
    """The start of a script (a file with a `#!` line), '' for a binary."""
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return ""
    return head.decode("utf-8", errors="replace") if head.startswith(b"#!") else ""


def _pyenv_shim(path: str) -> str:
    """The pyenv a shim execs ('' when `path` is no pyenv shim)."""
    if Path(path).parent.name != "shims":
        return ""
    found = re.search(r'exec "([^"]+/pyenv)" exec', _script(path))
    return found.group(1) if found else ""


def _run(argv: list[str], project: Path | None) -> tuple[str, str]:
    """(stdout, "") of a host lookup, or ("", why it failed)."""
    cwd = str(project) if project and Path(project).is_dir() else None
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", str(exc)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return "", lines[0].strip() if lines else f"exit status {done.returncode}"
    return done.stdout.strip(), ""


def _interpreter(path: str) -> str:
    """The Python that runs `path`: itself, its shebang's, or pip's long-path `exec`
    line; '' when it is no Python program."""
    if _PYTHON_NAME.match(os.path.basename(os.path.realpath(path))):
        return path
    lines = _script(path).splitlines()[:2]
    if not lines:
        return ""
    words = lines[0][2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    if words and _PYTHON_NAME.match(os.path.basename(words[0])):
        return words[0] if words[0].startswith("/") else shutil.which(words[0]) or ""
    if len(lines) > 1 and lines[1].startswith("'''exec' "):
        return lines[1].split()[1]
    return ""


def _refused(prefix: str, project: Path | None) -> str:
    """Why a prefix may not be shown in the jail ('' when it may)."""
    for what, folder in (("the home folder", "~"), ("the project", project)):
        if folder is not None:
            held = os.path.realpath(os.path.expanduser(str(folder)))
            if _inside(held, prefix):
                return f"its prefix {prefix} holds {what}, which the jail never shows"
    return ""


def lend(name: str, project: Path | None) -> tuple[list[str], str, str]:
    """(folders to bind, folder for PATH, "") for the program `name` starts in `project`,
    or ([], "", why it cannot be lent). A system program needs nothing: ([], "", "")."""
    found = locate(name, project)
    if found is None:
        where = "the project's virtualenv, " if project else ""
        return [], "", f"`{name}` is not found on this machine ({where}PATH and system folders)"
    pyenv = _pyenv_shim(found)
    if pyenv:
        found, problem = _run([pyenv, "which", name], project)
        if problem:
            return [], "", f"pyenv has no `{name}` for this project ({problem})"
    python = _interpreter(found)
    if not python:
        if _system(found):
            return [], "", ""
        return (
            [],
            "",
            (
                f"`{name}` ({found}) is no Python program, and only Python toolchains are "
                "lent to the jail"
            ),
        )
    answer, problem = _run([python, "-I", "-c", _ASK], project)
    try:
        *prefixes, path = json.loads(answer)
    except (ValueError, TypeError):
        return [], "", f"`{name}`'s Python ({python}) did not say where it lives ({problem})"
    binds: list[str] = []
    for prefix in sorted({*prefixes, *map(os.path.realpath, prefixes)}):
        real = os.path.realpath(prefix)
        if real in _SYSTEM_PREFIXES:
            binds += [p for p in path if _inside(p, real) and os.path.isdir(p) and not _system(p)]
            continue
        refused = _refused(real, project)
        if refused:
            return [], "", f"`{name}` is not lent to the jail: {refused}"
        binds.append(prefix)
    program = os.path.realpath(found)
    if not _system(program) and not any(_inside(program, os.path.realpath(b)) for b in binds):
        return (
            [],
            "",
            (
                f"`{name}` ({found}) lies outside its Python's prefixes (a `pip install --user`?), "
                "and only those are lent to the jail"
            ),
        )
    return sorted(binds), "" if _system(found) else os.path.dirname(found), ""


MAKE_PROGRAMS = frozenset({"make", "gmake"})
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)\s*([^;#]*)")
MAX_MAKEFILE_CHARS = 200_000
_MAKE_VARIABLE = re.compile(r"\$[({][^)}]*[)}]")


def _rules(text: str) -> tuple[list[str], dict[str, tuple[list[str], list[str]]]]:
    """A Makefile's explicit rules in order: target → (prerequisites, recipe lines)."""
    order: list[str] = []
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("\t"):
            for target in current:
                rules[target][1].append(line[1:].lstrip("@+- "))
            continue
        found = _RULE.match(line)
        current = []
        if found is None:
            continue
        for target in found.group(1).split():
            if target.startswith(".") or "%" in target or "$" in target:
                continue
            rules.setdefault(target, ([], []))[0].extend(found.group(2).split())
            order.append(target)
            current.append(target)
    return order, rules


def make_targets(command: str) -> list[str]:
    """The targets a `make` command names (none: the default goal); options skipped."""
    words = command.split()
    return [w for w in words[1:] if not w.startswith("-") and "=" not in w]


def recipe_programs(command: str, folder: Path | None) -> list[str]:
    """The programs a `make` command's recipes start (its targets' and their
    prerequisites'), read from the Makefile in `folder`: the jail lends a program the
    command starts, and `make test` starts make, whose recipe starts the person's
    `python`. Other commands, or no Makefile: []."""
    words = command.split()
    if not words or os.path.basename(words[0]) not in MAKE_PROGRAMS or folder is None:
        return []
    text = ""
    for name in MAKEFILES:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = (Path(folder) / name).read_text(encoding="utf-8")[:MAX_MAKEFILE_CHARS]
            break
    order, rules = _rules(text)
    todo = make_targets(command) or order[:1]
    seen: set[str] = set()
    found: list[str] = []
    while todo:
        target = todo.pop(0)
        if target in seen or target not in rules:
            continue
        seen.add(target)
        prerequisites, recipe = rules[target]
        todo += prerequisites
        for line in recipe:
            line = _MAKE_VARIABLE.sub("$V", line)  # $(MAKE), ${PY}: not a program by name
            found += [p for p in programs(line) if p not in found and p not in MAKE_PROGRAMS]
    return found


def toolchain(command: str, project: Path | None, makefile_in: Path | None = None) -> Toolchain:
    """What the jail needs to run `command` with the person's programs: those it starts,
    and those a `make` it starts runs (read from the Makefile in `makefile_in`, else the
    project's)."""
    lent = Toolchain()
    started = programs(command)
    for name in started:
        if os.path.basename(name) in MAKE_PROGRAMS:
            started += [
                p for p in recipe_programs(command, makefile_in or project) if p not in started
            ]
            break
    for name in started:
        binds, folder, problem = lend(name, project)
        if problem:
            lent.missing[name] = problem
        elif folder:
            lent.add(binds, folder)
    return lent
