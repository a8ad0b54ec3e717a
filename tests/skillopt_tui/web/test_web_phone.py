"""The web face on a phone (Chromium at 412×915): Review is one pane, its evidence behind
`i`, and `A Adopt` stays in the footer; words are not broken mid-word. `e` (edit in
$EDITOR) has no terminal to hand over in a browser: it says which command does it, and
stages nothing (issue 40).

SKILLOPT_PHONE_SHOT=DIR saves what the page shows, for a person to look at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.tui_app import RUNS, make_skills_repo
from tests.support.web_face import skillopt_env, start_server

pytestmark = pytest.mark.web
PHONE = (412, 915)


def _shot(screen, name: str) -> None:
    folder = os.environ.get("SKILLOPT_PHONE_SHOT")
    if folder:
        screen.page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _columns(screen) -> int:
    return screen.page.evaluate("() => window.__terms[0].cols")


def _serve(tmp_path):
    args = ("--runs-dir", str(RUNS), "--skills-repo", str(tmp_path / "skills"))
    args += ("--state-dir", str(tmp_path / "state"))
    return start_server(tmp_path, *args, env=skillopt_env())


def test_review_on_a_phone_keeps_adopt_and_hides_evidence_behind_a_toggle(tmp_path, open_screen):
    make_skills_repo(tmp_path / "skills", deploy_to=tmp_path / "deployed" / "SKILL.md")
    server = _serve(tmp_path)
    try:
        screen = open_screen(server.url, *PHONE)
        screen.wait_for("demo-finished")
        assert _columns(screen) < 80  # a phone: the narrow layout's width
        _shot(screen, "home")
        screen.keys("v")
        screen.wait_for("#3")
        text = screen.wait_for("i evidence")  # the status line says where the pane went
        _shot(screen, "review")
        footer = text.rstrip("\n").splitlines()[-1]
        assert "A Adopt" in footer, footer
        assert "Evidence" not in text  # the side pane is folded away
        screen.keys("i")
        text = screen.wait_for("Items-Improved")
        _shot(screen, "evidence")
        assert "Evidence" in text
        assert "Impro\n" not in text  # no word broken across lines
        screen.keys("i")
        screen.wait_for("#3")
    finally:
        assert server.stop() == 0


def test_e_in_the_browser_names_the_command_and_stages_nothing(tmp_path, open_screen):
    repo = make_skills_repo(tmp_path / "skills")
    before = repo.git.rev("refs/heads/staged/demo-finished")
    server = _serve(tmp_path)
    try:
        screen = open_screen(server.url)
        screen.wait_for("quiz")
        screen.keys("v")
        screen.wait_for("[ ] #3")
        screen.keys("e")
        screen.wait_for("no editor in the web face")
        screen.wait_for("skills edit staged/demo-finished --hunk 1")
    finally:
        assert server.stop() == 0
    assert repo.git.rev("refs/heads/staged/demo-finished") == before
