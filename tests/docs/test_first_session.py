"""README's "A first session", typed as a newcomer types it: a fresh login shell in the
checkout's root after `make demo`, `skillopt` put on PATH the way the README says
(`source .venv/bin/activate`), nothing else on PATH but the system's own folders, no API
key, a home of its own. The checkout is a temporary copy of this one's files (tracked and
untracked, as `git ls-files` lists them) with its `.venv` linked in: the session writes
into the folder it is typed in, and configs/ must be found where the README says, not in a
sandbox the test prepared."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.doc_examples import ROOT, first_session_block

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def _copy_of_the_checkout(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    # `make demo` made the venv; the session uses the one the suite runs in
    (dest / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return dest


def _entries(checkout: Path) -> set[str]:
    """The checkout's top-level entries, folders with a trailing slash (as .gitignore says)."""
    return {p.name + ("/" if p.is_dir() else "") for p in checkout.iterdir()} - {".venv"}


@pytest.mark.embedded
def test_the_first_session_runs_as_typed_in_a_fresh_shell(tmp_path):
    checkout = _copy_of_the_checkout(tmp_path / "checkout")
    home = tmp_path / "home"  # empty: no git identity, no skillopt state
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": SYSTEM_PATH,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        # The code under test is this copy's (in a clean clone the venv's editable install
        # points at the clone itself; here it may point at another checkout).
        "PYTHONPATH": str(checkout),
    }
    before = _entries(checkout)
    script = "set -e\nsource .venv/bin/activate\n" + first_session_block().code
    proc = subprocess.run(
        ["bash", "-lc", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (checkout / "first-session/deployed/capitals/SKILL.md").is_file()
    assert (checkout / "runs/first/best_skill.md").is_file()
    # What the session wrote is ignored by git: a newcomer's `git status` stays clean.
    written = sorted(_entries(checkout) - before)
    assert written, "the session wrote nothing into the checkout"
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(written),
        capture_output=True,
        text=True,
    ).stdout.split()
    assert sorted(ignored) == written, f"not ignored: {set(written) - set(ignored)}"
