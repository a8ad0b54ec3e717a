"""The one way we run git: on a folder something else can write, nothing written there runs.

Why: the skills repository, a replay workspace kept for a handoff and the person's own
project are all folders that agents (the person's or ours) write to. Git obeys what it finds
there: the repository's config (`core.fsmonitor`, `filter.<x>.clean`, `diff.<x>.textconv`,
an include of another file), its hooks, and attributes that pick a filter or diff driver the
config defines. Any of them would run a command in a process that holds the user's API keys,
perhaps from cron. So every git call goes through `run_git` (or `git_process` for a stream):

- a clean environment: no inherited GIT_* variable, no system or global config, no HOME (so
  no user attributes or ignore file), no terminal prompt;
- `PINNED` settings over whatever the repository says: hooks looked up in /dev/null,
  fsmonitor off, no attributes or ignore file of ours, pager, editor and signing off;
- every filter, diff and merge driver the repository's config names pinned to nothing, so an
  attribute selecting one runs nothing: a filter becomes a no-op, and a diff that would need
  a driver's command fails instead of running it.
Every `diff`, `log -p` or `show` of ours still passes `--no-ext-diff --no-textconv`: a
repository's `diff.external` cannot be pinned off (an empty one breaks every diff).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

PINNED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.sshCommand", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.quotePath", "false"),
    ("core.splitIndex", "false"),
    ("core.untrackedCache", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("color.ui", "false"),
    ("merge.conflictStyle", "merge"),
    ("i18n.commitEncoding", "UTF-8"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
)
# The keys of a named driver that hold a command, per driver kind.
_DRIVER_COMMANDS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("command", "textconv"),
    "merge": ("driver",),
}
DEFAULT_IDENTITY = ("SkillOpt", "skillopt@localhost")
# Inherited as they are: they run nothing, and fixed dates make a commit reproducible.
_PASSED_THROUGH = ("PATH", "TMPDIR", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


def git_env(
    *,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index_file: Path | None = None,
    identity: tuple[str, str] = DEFAULT_IDENTITY,
    pins: Sequence[tuple[str, str]] = PINNED,
) -> dict[str, str]:
    """The whole environment of a git call (nothing inherited but `_PASSED_THROUGH`)."""
    name, email = identity
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env |= {
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_EDITOR": "true",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_COUNT": str(len(pins)),
    }
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
        env["GIT_INDEX_FILE"] = str(index_file or git_dir / "index")
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    for i, (key, value) in enumerate(pins):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _driver_pins(names: Sequence[str]) -> list[tuple[str, str]]:
    """Pins that empty every command of every driver named among the config keys `names`."""
    pins: list[tuple[str, str]] = []
    for key in names:
        kind, _, rest = key.partition(".")
        driver, dot, _ = rest.rpartition(".")
        if dot and kind.lower() in _DRIVER_COMMANDS:
            for command in _DRIVER_COMMANDS[kind.lower()]:
                pin = (f"{kind}.{driver}.{command}", "")
                if pin not in pins:
                    pins.append(pin)
    return pins


# A repository's driver pins, keyed by its git dir and its config file's identity, so the
# config is listed again only when it changes (not cached when it includes other files).
_pin_cache: dict[tuple[str, tuple[int, ...]], list[tuple[str, str]]] = {}


def _config_stamp(git_dir: Path) -> tuple[int, ...] | None:
    """The identity of the repository's config files (None: no `config` to go by)."""
    stamp: list[int] = []
    for name in ("config", "config.worktree"):
        try:
            st = os.stat(git_dir / name)
        except OSError:
            if name == "config":
                return None
            continue
        stamp += [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    return tuple(stamp)


def _repository_pins(
    git_dir: Path | None, work_tree: Path | None, cwd: Path | None
) -> list[tuple[str, str]]:
    stamp = _config_stamp(git_dir) if git_dir is not None else None
    key = (str(git_dir), stamp) if stamp is not None else None
    if key is not None and key in _pin_cache:
        return _pin_cache[key]
    listed = subprocess.run(
        ["git", "config", "--list", "--name-only", "-z"],
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=git_env(git_dir=git_dir, work_tree=work_tree),
    )
    names = [n for n in listed.stdout.decode("utf-8", "replace").split("\0") if n]
    pins = _driver_pins(names)
    if key is not None and not any(n.lower().startswith(("include.", "includeif.")) for n in names):
        _pin_cache[key] = pins
    return pins


def _prepare(
    git_dir: Path | None,
    work_tree: Path | None,
    cwd: Path | None,
    index_file: Path | None,
    identity: tuple[str, str],
) -> dict[str, str]:
    pins = [*PINNED, *_repository_pins(git_dir, work_tree, cwd)]
    return git_env(
        git_dir=git_dir, work_tree=work_tree, index_file=index_file, identity=identity, pins=pins
    )


def run_git(
    *args: str,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    index_file: Path | None = None,
    identity: tuple[str, str] = DEFAULT_IDENTITY,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` on the repository `git_dir` (work tree `work_tree`), or the one found
    from `cwd`; stdout and stderr are captured as bytes, the status is not checked."""
    env = _prepare(git_dir, work_tree, cwd, index_file, identity)
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
    )


def git_process(
    *args: str, git_dir: Path | None = None, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """`git args` started with its stdout and stderr as pipes, for output read as a stream
    (e.g. `git archive`); the caller waits for it."""
    env = _prepare(git_dir, None, cwd, None, DEFAULT_IDENTITY)
    return subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def one_line(stderr: bytes, limit: int = 200) -> str:
    """git's complaint as one line, for an error message."""
    return " ".join(stderr.decode("utf-8", "replace").split())[:limit]
