"""How to install an optional extra, said as a command that works from where the user is.

skillopt-tui is not on PyPI: `pip install 'skillopt-tui[web]'` names a package no index
has. A person running from a checkout (`make demo` made its venv) needs the checkout's own
extra, installed with the pip of the Python that runs us (`python -m pip`, so no PATH or
activated venv is assumed); one who installed a wheel needs that wheel's file again, with
the extra. Every hint the product prints goes through `install_extra`, so none can drift.
"""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DIST = "skillopt-tui"
CHECKOUT = Path(__file__).resolve().parents[1]  # where core/ sits: a checkout's root


@cache
def _source() -> tuple[str, str]:
    """(how, where): ("checkout", root), ("file", wheel path) or ("index", DIST)."""
    try:
        project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
        if project.get("project", {}).get("name") == DIST:
            return "checkout", str(CHECKOUT)
    except (OSError, ValueError):
        pass
    try:
        recorded = json.loads(metadata.distribution(DIST).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        recorded = {}
    url = urlparse(recorded.get("url", ""))
    if url.scheme == "file" and url.path:
        return "file", unquote(url.path)
    return "index", DIST


def pip_install() -> str:
    """The pip of the Python that runs us, whatever is on PATH."""
    return f"{shlex.quote(sys.executable)} -m pip install"


def install_extra(extra: str) -> str:
    """The command that adds `extra` (a name in pyproject's optional-dependencies)."""
    how, where = _source()
    if how == "checkout":
        return f"{pip_install()} -e {shlex.quote(f'{where}[{extra}]')}"
    return f"{pip_install()} {shlex.quote(f'{where}[{extra}]')}"
