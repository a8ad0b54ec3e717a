"""`skillopt tui --web` in a real headless Chromium: the page loads behind the token, Home
renders, keys open Review, and approving one hunk then adopting gives the same commit tree
and deployed bytes as `skillopt skills adopt --hunks 1`. A second session is read-only;
stopping the server leaves no app process; the one writer is the repository's, across
servers and the terminal; a session killed mid-adopt leaves the skills
repository whole (its journal undoes the half-done write at the next open).

SKILLOPT_WRITE_DOCS_SCREENSHOT=1 saves Review as docs/images/web-review.png (off in a
normal run: tests never write into the checkout)."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from tests.support.skills_git import plain_git
from tests.support.tmux import Tmux
from tests.support.tui_app import RUNS, make_skills_repo
from tests.support.web_face import (
    REPO,
    alive,
    children,
    skillopt,
    skillopt_env,
    start_server,
    wait_for,
)

pytestmark = pytest.mark.web
SKILLOPT = REPO / ".venv" / "bin" / "skillopt"
DOCS_SHOT = REPO / "docs" / "images" / "web-review.png"


@pytest.fixture
def world(tmp_path: Path):
    """A skills repository deploying to deployed/SKILL.md, and a copy of it taken before
    any adoption (the CLI adopts there, for the comparison)."""
    deployed = tmp_path / "deployed" / "SKILL.md"
    make_skills_repo(tmp_path / "skills", deploy_to=deployed)
    shutil.copytree(tmp_path / "skills", tmp_path / "pristine", symlinks=True)
    return tmp_path


def _serve(world: Path, **env: str):
    args = ("--runs-dir", str(RUNS), "--skills-repo", str(world / "skills"))
    args += ("--state-dir", str(world / "sleep-state"))  # not the user's Sleep state
    return start_server(world, *args, env=skillopt_env(**env))


def _open_review(screen) -> None:
    screen.wait_for("demo-finished")  # Home: the runs table
    screen.wait_for("quiz")  # Home: the skills table
    screen.keys("v")
    screen.wait_for("[ ] #3")  # Review: three hunks


def test_review_in_the_browser_adopts_what_the_cli_adopts(world, open_screen):
    server = _serve(world)
    try:
        screen = open_screen(server.url)
        assert screen.page.url == server.base + "/"  # the token left the address bar
        _open_review(screen)
        screen.keys("y")
        screen.wait_for("y 1  n 0")  # the evidence panel counts the decision
        if os.environ.get("SKILLOPT_WRITE_DOCS_SCREENSHOT") == "1":
            DOCS_SHOT.parent.mkdir(parents=True, exist_ok=True)
            screen.page.screenshot(path=str(DOCS_SHOT))
        screen.keys("A")
        assert "1 of 3 hunks" in screen.wait_for("Adopt these hunks?")
        screen.keys("y")
        screen.wait_for("Adopted as")
        assert screen.outside == []  # the page asked nothing of any other address
    finally:
        assert server.stop() == 0
    deployed = world / "deployed" / "SKILL.md"
    web = {
        "tree": plain_git(world / "skills", "rev-parse", "main^{tree}"),
        "deployed": deployed.read_bytes(),
    }
    # the same adoption by the CLI, from the same starting point (deploy target included)
    shutil.copy(world / "pristine" / "quiz" / "SKILL.md", deployed)
    result = skillopt(
        "skills", "adopt", "staged/demo-finished", "--hunks", "1", "--repo", str(world / "pristine")
    )
    assert result.returncode == 0, result.stderr
    cli = {
        "tree": plain_git(world / "pristine", "rev-parse", "main^{tree}"),
        "deployed": deployed.read_bytes(),
    }
    assert web == cli
    assert b"Answer exactly the question asked." in web["deployed"]
    assert b"largest ocean" not in web["deployed"]


def test_a_second_session_is_read_only_until_the_writer_leaves(world, open_screen):
    """And SIGTERM then ends the server and every session's app process."""
    server = _serve(world)
    try:
        first = open_screen(server.url)
        first.wait_for("quiz")
        second = open_screen(server.url)
        second.wait_for("Read-only")  # it says so when it opens
        _open_review(second)
        second.keys("y", "A")
        second.wait_for("Cannot adopt in this session")
        assert "Adopt these hunks?" not in second.text()
        assert SkillsRepo.open(world / "skills").log("quiz")[0].kind == "add"

        sessions = set(children(server.process.pid, every=False))
        assert len(sessions) == 2  # one app process per browser session
        first.page.context.close()  # the writer's tab closes: its app process ends
        wait_for(lambda: len([p for p in sessions if alive(p)]) == 1, "the writer's app ends")
        third = open_screen(server.url)  # the next session to open writes
        _open_review(third)
        third.keys("y", "A")
        third.wait_for("Adopt these hunks?")
        assert len(children(server.process.pid, every=False)) == 2
        everything = children(server.process.pid)  # their git processes too
    finally:
        code = server.stop(signal.SIGTERM)
    assert code == 0
    assert [pid for pid in everything if alive(pid)] == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_no_app_process_outlives_the_server(world, open_screen, sig):
    """Ctrl-C ends the sessions itself; after kill -9 each app process follows its server
    (it asked Linux for PR_SET_PDEATHSIG when it started)."""
    server = _serve(world)
    try:
        open_screen(server.url).wait_for("quiz")
        everything = children(server.process.pid)
        assert everything
    finally:
        code = server.stop(sig)
    assert code == (0 if sig == signal.SIGINT else -signal.SIGKILL)
    wait_for(lambda: not any(alive(pid) for pid in everything), "every app process ends")


def _put_back(world: Path, before: tuple[str, bytes]) -> None:
    """After an adopt cut off mid-write: the next open of the repository says what it
    undid, and main, the deploy target and the work tree are as before; nothing is lost
    (the branch still adopts)."""
    skills, deployed = world / "skills", world / "deployed" / "SKILL.md"
    assert (skills / ".git" / "skillopt" / "journal.json").exists()  # it died mid-write
    listed = skillopt("skills", "list", "--repo", str(skills))
    assert listed.returncode == 0, listed.stderr
    assert "skillopt:" in listed.stderr  # it says what it undid
    assert (plain_git(skills, "rev-parse", "main"), deployed.read_bytes()) == before
    assert not (skills / ".git" / "skillopt" / "journal.json").exists()
    assert plain_git(skills, "status", "--porcelain") == ""
    again = skillopt(
        "skills", "adopt", "staged/demo-finished", "--hunks", "1", "--repo", str(skills)
    )
    assert again.returncode == 0, again.stderr


def _before(world: Path) -> tuple[str, bytes]:
    deployed = world / "deployed" / "SKILL.md"
    return plain_git(world / "skills", "rev-parse", "main"), deployed.read_bytes()


def _confirm_adopt(screen) -> None:
    _open_review(screen)
    screen.keys("y", "A")
    screen.wait_for("Adopt these hunks?")
    screen.keys("y")


def test_a_browser_that_leaves_mid_adopt_leaves_the_repository_whole(world, open_screen):
    """The tab closes while the adopt is held after writing the deploy target and before
    main moves (the worst moment): the server ends that session's app process, and the
    write it cut short is undone at the next open."""
    before = _before(world)
    hold = world / "hold"
    hold.mkdir()
    server = _serve(world, SKILLOPT_PAUSE_AT=f"adopt:after-deploy-write={hold}")
    try:
        screen = open_screen(server.url)
        _confirm_adopt(screen)
        wait_for((hold / "paused").exists, "the adopt reaches the deploy write")
        app = int((hold / "paused").read_text())
        assert app in children(server.process.pid, every=False)  # the session's app
        assert (world / "deployed" / "SKILL.md").read_bytes() != before[1]  # half-way
        screen.page.context.close()  # the browser leaves; the write never resumes
        wait_for(lambda: not alive(app), "the session's app process ends")
        assert server.process.poll() is None  # the server serves on
    finally:
        assert server.stop() == 0
    _put_back(world, before)


def test_a_session_killed_mid_adopt_leaves_the_repository_whole(world, open_screen):
    """The app process dies (as kill -9 would) at the same moment: the page says the
    session ended, and the next open puts everything back as it was."""
    before = _before(world)
    server = _serve(world, SKILLOPT_CRASH_AT="adopt:after-deploy-write")
    try:
        screen = open_screen(server.url)
        _confirm_adopt(screen)
        screen.page.wait_for_selector("body.-closed", timeout=60_000)  # "Session ended."
    finally:
        assert server.stop() == 0
    _put_back(world, before)


def test_one_writer_per_repository_across_servers_and_the_terminal(world, open_screen):
    """The writer's lock is the repository's, not a server's: a session of a second server
    on the same repository is read-only while the first server's session writes, and so is
    a terminal `skillopt tui` (in tmux) on it."""
    first_server, second_server = _serve(world), _serve(world)
    tmux = Tmux(f"skillopt-test-writer-{os.getpid()}")
    try:
        writer = open_screen(first_server.url)
        writer.wait_for("quiz")
        assert "Read-only" not in writer.text()
        other = open_screen(second_server.url)
        other.wait_for("Read-only")
        _open_review(other)
        other.keys("y", "A")
        other.wait_for("Cannot adopt in this session")

        skills, state = world / "skills", world / "sleep-state"
        command = f"{SKILLOPT} tui --runs-dir {RUNS} --skills-repo {skills} --state-dir {state}"
        tmux.start(command, 120, 35)
        tmux.wait_for("Read-only")
    finally:
        tmux.kill()
        assert first_server.stop() == 0
        assert second_server.stop() == 0
    assert SkillsRepo.open(world / "skills").log("quiz")[0].kind == "add"  # nothing adopted


ON_TOP = """() => {
  const x = innerWidth / 2, y = innerHeight / 2;
  const top = document.elementFromPoint(x, y);
  return !!(top && top.closest('.ended'));
}"""


@pytest.mark.parametrize("how", ["quit", "crash"])
def test_an_ended_session_says_so_on_top_and_opens_again(world, open_screen, how):
    """q (or the app dying) replaces the terminal with "Session ended — Open again", drawn
    over it rather than under the last frame; "Open again" starts a new session."""
    env = {"SKILLOPT_CRASH_AT": "adopt:after-deploy-write"} if how == "crash" else {}
    server = _serve(world, **env)
    try:
        screen = open_screen(server.url)
        screen.wait_for("demo-finished")
        if how == "quit":
            screen.keys("q")
        else:
            _confirm_adopt(screen)
        screen.page.wait_for_selector("body.-closed", timeout=60_000)
        assert screen.page.evaluate(ON_TOP), "the ended notice is under the terminal"
        assert not screen.page.is_visible(".textual-terminal")
        screen.page.get_by_role("button", name="Open again").click()
        screen.wait_for("demo-finished")  # Home again, in a new session
        assert not screen.page.evaluate("document.body.classList.contains('-closed')")
    finally:
        assert server.stop() == 0
