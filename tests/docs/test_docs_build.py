"""`make docs` on the current tree: the site builds with --strict (every nav entry, link
and anchor resolved), the generated reference pages are in it, and nothing is written
into the repository (the site goes to a temporary folder)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.doc_examples import ROOT


def _build(config, site):
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )


def test_the_site_builds_strictly_with_the_generated_reference(tmp_path):
    proc = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-4000:]
    site = tmp_path / "site"
    for page in ("configuration", "cli", "events", "run-directory", "exit-codes"):
        assert (site / "reference" / page / "index.html").is_file(), page
    config_page = (site / "reference/configuration/index.html").read_text()
    assert "max_cost_usd" in config_page and "longitudinal_pair_policy" in config_page
    assert (site / "screens/test_tui_snapshots/test_review-120x40.svg").is_file()
    assert not (ROOT / "docs/reference").exists()  # generated in the build only


def test_a_broken_link_fails_the_build(tmp_path):
    """--strict is what makes a stale link a failure: a page linking to a missing page."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the gone page](gone.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\ndocs_dir: docs\ntheme: {name: material}\n")
    proc = _build(config, tmp_path / "site")
    assert proc.returncode != 0
    assert "gone.md" in proc.stderr
