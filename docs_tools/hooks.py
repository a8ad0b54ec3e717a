"""MkDocs hooks (mkdocs.yml `hooks:`): add the generated reference pages, the TUI's
screens and the pinned Mermaid script to the site at build time, and check that each page
rendered what its Markdown says. Nothing generated is ever written into docs/: the pages
exist only in the build, so they cannot go stale in the repository."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs runs from anywhere; the engine is imported from here
    sys.path.insert(0, str(ROOT))

from docs_tools.reference import PAGES  # noqa: E402
from docs_tools.render_check import problems  # noqa: E402
from docs_tools.screens import screens  # noqa: E402

log = logging.getLogger("mkdocs.plugins.skillopt")
# Where `make docs` installs the pinned Mermaid (Makefile MERMAID_PKG); the site serves
# this copy (mkdocs.yml extra_javascript), so the theme never fetches one from a CDN.
MERMAID_URI = "assets/vendor/mermaid.min.js"
MERMAID_JS = Path(
    os.environ.get("SKILLOPT_MERMAID_JS")
    or ROOT / ".tools/docs/node_modules/mermaid/dist/mermaid.min.js"
)


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
    if not MERMAID_JS.is_file():
        raise SystemExit(
            f"docs: Mermaid is not installed at {MERMAID_JS}; run `make docs` "
            "(it installs the pinned copy the site serves)"
        )
    files.append(File.generated(config, MERMAID_URI, abs_src_path=str(MERMAID_JS)))
    return files


def on_page_content(html: str, page, config, files) -> str:
    """A warning (a failure under --strict) for each thing the HTML lost of the Markdown."""
    for problem in problems(page.markdown or "", html):
        log.warning("%s: %s", page.file.src_uri, problem)
    return html
