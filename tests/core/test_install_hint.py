"""Every install hint the product prints is a command that works from where the user is:
skillopt-tui is not on PyPI, so `pip install 'skillopt-tui[web]'` could never work."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

from core.install_hint import install_extra

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "envs", "sleep", "skillopt_tui", "integrations")
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"])


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name != "install_hint.py":
                yield path, path.read_text(encoding="utf-8")


def test_no_hint_names_a_package_no_index_has():
    wrong = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for path, text in _sources()
        for m in re.finditer(r"skillopt-tui\[|[`(]pip install '", text)
    ]
    assert wrong == [], "say it with core.install_hint.install_extra"


def test_every_extra_a_hint_names_exists():
    named = {
        m.group(1)
        for _, text in _sources()
        for m in re.finditer(r"install_extra\(\s*[\"']([\w-]+)[\"']\s*\)", text)
    }
    named |= {"reasoning-gym"}  # envs/reasoning_gym names it through its EXTRA constant
    assert named and named <= EXTRAS, named - EXTRAS


def test_the_checkout_hint_is_accepted_by_pip_as_printed():
    """Run the printed command itself (a dry run: nothing is installed)."""
    hint = install_extra("web")
    assert str(ROOT) in hint and " -e " in hint  # this test runs from a checkout
    result = subprocess.run(
        [*shlex.split(hint), "--dry-run", "--no-deps", "-q"],
        capture_output=True, text=True, timeout=300, cwd="/",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
