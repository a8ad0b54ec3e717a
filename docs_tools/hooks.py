"""MkDocs hooks (mkdocs.yml `hooks:`): add the generated reference pages and the TUI's
screens to the site at build time. Nothing generated is ever written into docs/: the pages
exist only in the build, so they cannot go stale in the repository."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs runs from anywhere; the engine is imported from here
    sys.path.insert(0, str(ROOT))

from docs_tools.reference import PAGES  # noqa: E402
from docs_tools.screens import screens  # noqa: E402


def on_files(files: Files, config) -> Files:
    import core

    where = Path(core.__file__).resolve().parent.parent
    if where != ROOT:  # an editable install of another checkout shadows this one
        raise SystemExit(
            f"docs: the engine was imported from {where}, not {ROOT}; "
            f"run with PYTHONPATH={ROOT} (as `make docs` does)"
        )
    for uri, render in PAGES.items():
        files.append(File.generated(config, uri, content=render()))
    for uri, path in screens().items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
