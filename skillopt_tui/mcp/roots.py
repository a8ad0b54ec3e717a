"""Which folders an MCP tool's path arguments may name.

A model fills in the arguments, so a path argument is untrusted: `state_dir=/etc` must not
make sleep_dry_run read /etc. A path argument must lie (after resolving symlinks and `..`)
inside one of the server's roots:

- the folders it was started with (`--state-dir`, else the default Sleep state dir;
  `--skills-repo`; `--runs-dir`, else ./runs) and every `--root DIR`;
- what `skillopt sleep init` recorded in that state dir (the skills repo, the projects);
- its working directory (the agent starts it in the project), unless that is `/` or the
  home directory itself, which would let a model reach every file the user has.

What the server reads from its own configuration (the skills repo `sleep init` recorded, a
default) is trusted; only arguments are checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserError


class OutsideRoots(UserError):
    """A path argument names a folder the server may not touch (an invalid argument)."""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass(frozen=True)
class Roots:
    folders: tuple[Path, ...]

    @classmethod
    def of(cls, configured: Iterable[Path | None], cwd: Path | None = None) -> Roots:
        cwd = _real(cwd or Path.cwd())
        folders = [_real(p.expanduser()) for p in configured if p is not None]
        if cwd not in (Path("/"), _real(Path.home())):
            folders.append(cwd)
        return cls(tuple(dict.fromkeys(folders)))

    def with_recorded(self, state_dir: Path) -> Roots:
        """These roots plus the folders `sleep init` recorded in `state_dir` (read on each
        call: an init after the server started counts)."""
        from sleep.state.settings import load_settings

        try:
            settings = load_settings(state_dir)
        except (UserError, OSError, ValueError):
            return self  # unreadable settings add nothing; the tool itself will say why
        named = [settings.skills_repo, getattr(settings, "project", None)]
        named += list(getattr(settings, "projects", None) or [])
        extra = [_real(Path(p).expanduser()) for p in named if isinstance(p, str) and p]
        return Roots(tuple(dict.fromkeys([*self.folders, *extra])))

    def confine(self, argument: str, value: str) -> Path:
        """`value` as an absolute path, if it lies inside a root; else OutsideRoots, naming
        the argument and the roots but not echoing the value."""
        path = Path(value).expanduser().absolute()
        real = _real(path)
        if any(real == root or real.is_relative_to(root) for root in self.folders):
            return path
        allowed = ", ".join(str(root) for root in self.folders) or "none"
        raise OutsideRoots(
            f"{argument} is outside the folders this server may touch ({allowed}); "
            "start `skillopt mcp --root DIR` to allow another"
        )
