"""Where a coding-agent CLI keeps its config, login and sessions, and the user's login
lent to one call.

Each call runs with a private HOME, holding the same folder the CLI would use under the
user's HOME, with the CLI's variable pointing there: nothing of ours lands in the user's
agent config or history. Why a login is *copied*: a subscription user has no API key,
only the CLI's credentials file; a copy of that one file (mode 0600, removed with the
private HOME) lets the call authenticate without the CLI ever writing to the user's own
directory. A token the CLI refreshes during the call is refreshed in the copy only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ConfigFolder:
    """The folder `variable` names (`below_variable` inside it), else `below_home` under
    HOME: e.g. $CODEX_HOME, else ~/.codex; $XDG_DATA_HOME/opencode, else
    ~/.local/share/opencode."""

    variable: str
    below_home: tuple[str, ...]
    below_variable: tuple[str, ...] = ()

    def user(self, environ: Mapping[str, str] | None) -> Path:
        env = environ or os.environ
        if env.get(self.variable):
            return Path(env[self.variable]).expanduser().joinpath(*self.below_variable)
        return Path(env.get("HOME") or Path.home()).joinpath(*self.below_home)

    def private(self, home: Path) -> Path:
        """The same folder in a call's private home."""
        return home.joinpath(*self.below_home)

    def make_private(self, home: Path, env: dict[str, str]) -> Path:
        """Make the folder in the private `home` and point the CLI's variable at it."""
        folder = self.private(home)
        folder.mkdir(parents=True, exist_ok=True)
        named = folder.parents[len(self.below_variable) - 1] if self.below_variable else folder
        env[self.variable] = str(named)
        return folder


@dataclass(frozen=True)
class Login:
    """The CLI's credentials file (in its config folder), how to log in (e.g. "`codex
    login`"), and what key to give instead (e.g. "an OpenAI key")."""

    file: str
    how: str
    key: str = "a key"


def lend_login(source: Path, target: Path) -> bool:
    """Copy one credentials file into a private config dir; False if there is none."""
    if not source.is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(0o600)
    return True
