"""`skillopt init` / `skillopt skills ...` against real git repos in temp dirs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from core.errors import UserError
from core.skills_repo import DeployTargetChanged, SkillsRepoError
from skillopt_tui.cli import skills_cmds
from skillopt_tui.cli.skills_cmds import SkillsUsageError
from tests.support.skills_git import BASE_TEXT, edit_lines, plain_git

SKILLOPT = Path(sys.executable).parent / "skillopt"
NEW = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    # Only this command group: the test does not depend on other groups being importable.
    app = typer.Typer()
    app.callback()(lambda: None)
    skills_cmds.register(app)
    return app


def invoke(app: typer.Typer, *args: str, ok: bool = True, env: dict | None = None):
    result = CliRunner().invoke(app, list(args), env=env)
    if ok:
        assert result.exit_code == 0, (result.output, result.exception)
    return result


@pytest.fixture
def repo_path(tmp_path: Path, app: typer.Typer) -> Path:
    path = tmp_path / "skills"
    (tmp_path / "skill.md").write_text(BASE_TEXT)
    invoke(app, "init", str(path), "--author", "Test Bot <bot@example.com>")
    invoke(
        app,
        "skills",
        "add",
        "reviewer",
        "--from",
        str(tmp_path / "skill.md"),
        "--deploy-to",
        str(tmp_path / "live" / "SKILL.md"),
        "--repo",
        str(path),
    )
    (tmp_path / "new.md").write_text(NEW)
    invoke(
        app,
        "skills",
        "stage",
        "reviewer",
        "--from",
        str(tmp_path / "new.md"),
        "--message",
        "sharper ends",
        "--run-id",
        "hand-1",
        "--repo",
        str(path),
    )
    return path


def test_list_and_diff_json(app, repo_path: Path, tmp_path: Path):
    listed = json.loads(invoke(app, "skills", "list", "--json", "--repo", str(repo_path)).stdout)
    assert listed["skills"] == [
        {
            "name": "reviewer",
            "path": "reviewer/SKILL.md",
            "deploy_to": str(tmp_path / "live/SKILL.md"),
        }
    ]
    assert [(b["name"], b["commits"]) for b in listed["staged"]] == [("staged/hand-1", 1)]
    diff = json.loads(
        invoke(app, "skills", "diff", "staged/hand-1", "--json", "--repo", str(repo_path)).stdout
    )
    assert [(h["index"], h["file"], h["added"], h["removed"]) for h in diff["hunks"]] == [
        (1, "reviewer/SKILL.md", 1, 1),
        (2, "reviewer/SKILL.md", 1, 1),
    ]
    assert diff["hunks"][0]["header"].startswith("@@ -1,4 +1,4 @@")
    assert "+line 12, sharper" in diff["hunks"][1]["lines"]
    assert diff["evidence"][0]["trailers"]["Step"] == "1"
    text = invoke(app, "skills", "diff", "hand-1", "--repo", str(repo_path)).stdout
    assert "[1] reviewer/SKILL.md @@ -1,4 +1,4 @@" in text and "sharper ends" in text


def test_adopt_hunks_log_rollback_via_env_repo(app, repo_path: Path, tmp_path: Path):
    env = {"SKILLOPT_SKILLS_REPO": str(repo_path)}
    out = invoke(app, "skills", "adopt", "hand-1", "--hunks", "2", env=env).stdout
    assert f"deployed to {tmp_path / 'live/SKILL.md'}" in out
    assert (tmp_path / "live/SKILL.md").read_text() == edit_lines(
        BASE_TEXT, {12: "line 12, sharper\n"}
    )
    log = json.loads(invoke(app, "skills", "log", "reviewer", "--json", env=env).stdout)
    assert [e["kind"] for e in log] == ["adopt", "add"]
    assert log[0]["trailers"]["Hunks"] == "2"
    result = json.loads(invoke(app, "skills", "adopt", "hand-1", "--all", "--json", env=env).stdout)
    assert result["archived_as"] == "adopted/hand-1"
    assert (tmp_path / "live/SKILL.md").read_text() == NEW
    invoke(app, "skills", "rollback", env=env)
    invoke(app, "skills", "rollback", "reviewer", env=env)
    assert (tmp_path / "live/SKILL.md").read_text() == BASE_TEXT
    assert plain_git(repo_path, "status", "--porcelain") == ""


def test_reject(app, repo_path: Path):
    out = invoke(app, "skills", "reject", "staged/hand-1", "--repo", str(repo_path)).stdout
    assert out.strip() == "rejected/hand-1"
    assert "staged/" not in invoke(app, "skills", "list", "--repo", str(repo_path)).stdout


def test_user_errors_are_raised_not_printed_as_tracebacks(app, repo_path: Path, tmp_path: Path):
    bad = invoke(
        app, "skills", "adopt", "hand-1", "--hunks", "1,x", "--repo", str(repo_path), ok=False
    )
    assert isinstance(bad.exception, UserError)
    assert "bad --hunks" in str(bad.exception)
    both = invoke(
        app,
        "skills",
        "adopt",
        "hand-1",
        "--hunks",
        "1",
        "--all",
        "--repo",
        str(repo_path),
        ok=False,
    )
    assert "either --hunks or --all" in str(both.exception)
    missing = invoke(app, "skills", "list", "--repo", str(tmp_path / "nowhere"), ok=False)
    assert isinstance(missing.exception, SkillsRepoError) and "skillopt init" in str(
        missing.exception
    )
    (tmp_path / "live/SKILL.md").write_text("hand edit\n")
    edited = invoke(app, "skills", "adopt", "hand-1", "--all", "--repo", str(repo_path), ok=False)
    assert isinstance(edited.exception, DeployTargetChanged)
    assert "+hand edit" in edited.stderr  # the difference is shown
    invoke(app, "skills", "adopt", "hand-1", "--all", "--force", "--repo", str(repo_path))
    assert (tmp_path / "live/SKILL.md").read_text() == NEW


def test_installed_command_prints_one_line_error_and_exits_2(repo_path: Path):
    done = subprocess.run(
        [str(SKILLOPT), "skills", "adopt", "no-such-run", "--all", "--repo", str(repo_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "skillopt: error: no staged branch 'no-such-run' (staged: staged/hand-1)"
    ]


def test_adopt_lines_matches_the_api(app, repo_path: Path, tmp_path: Path):
    text = invoke(app, "skills", "diff", "hand-1", "--numbers", "--repo", str(repo_path)).stdout
    assert "  1 -line 12" in text and "  2 +line 12, sharper" in text
    out = invoke(
        app, "skills", "adopt", "hand-1", "--lines", "2:2", "--repo", str(repo_path)
    ).stdout
    # only the "+" line of hunk 2: the old line 12 stays, the sharper one is added after it
    want = BASE_TEXT + "line 12, sharper\n"
    assert (tmp_path / "live/SKILL.md").read_text() == want and "deployed to" in out
    log = json.loads(
        invoke(app, "skills", "log", "reviewer", "--json", "--repo", str(repo_path)).stdout
    )
    assert (log[0]["trailers"]["Hunks"], log[0]["trailers"]["Lines"]) == ("2", "2:2")
    bad = invoke(
        app, "skills", "adopt", "hand-1", "--lines", "2", "--repo", str(repo_path), ok=False
    )
    assert isinstance(bad.exception, UserError) and "bad --lines" in str(bad.exception)
    both = invoke(
        app,
        "skills",
        "adopt",
        "hand-1",
        "--lines",
        "1:1",
        "--all",
        "--repo",
        str(repo_path),
        ok=False,
    )
    assert "either --lines or --all" in str(both.exception)


def test_rollback_one_hunk_from_the_cli(app, repo_path: Path, tmp_path: Path):
    env = {"SKILLOPT_SKILLS_REPO": str(repo_path)}
    invoke(app, "skills", "adopt", "hand-1", "--all", env=env)
    invoke(app, "skills", "rollback", "reviewer", "--hunks", "1", env=env)
    assert (tmp_path / "live/SKILL.md").read_text() == edit_lines(
        BASE_TEXT, {12: "line 12, sharper\n"}
    )
    bad = invoke(app, "skills", "rollback", "reviewer", "--hunks", "9", env=env, ok=False)
    assert isinstance(bad.exception, UserError) and "no hunk 9" in str(bad.exception)


@pytest.mark.parametrize("selection", [[], ["--hunks", ""], ["--hunks", ","], ["--hunks", " "]])
def test_adopt_without_a_real_selection_is_a_usage_error_and_adopts_nothing(
    app, repo_path: Path, tmp_path: Path, selection: list[str]
):
    before = plain_git(repo_path, "rev-parse", "main")
    bad = invoke(app, "skills", "adopt", "hand-1", *selection, "--repo", str(repo_path), ok=False)
    assert isinstance(bad.exception, SkillsUsageError), bad.output
    assert "--all" in str(bad.exception)
    assert plain_git(repo_path, "rev-parse", "main") == before
    assert (tmp_path / "live/SKILL.md").read_text() == BASE_TEXT


def test_huge_hunk_range_is_bounded_by_the_hunks_that_exist(app, repo_path: Path):
    before = plain_git(repo_path, "rev-parse", "main")
    for spec in ("1-100000000", "1-1000000000000", "3-99999999999"):
        bad = invoke(
            app, "skills", "adopt", "hand-1", "--hunks", spec, "--repo", str(repo_path), ok=False
        )
        assert isinstance(bad.exception, UserError), (spec, bad.output)
        assert "it has hunks 1-2" in str(bad.exception), spec
    assert plain_git(repo_path, "rev-parse", "main") == before


def test_add_and_rollback_say_what_they_did_not_only_a_hash(app, tmp_path: Path):
    path = tmp_path / "skills"
    (tmp_path / "skill.md").write_text(BASE_TEXT)
    (tmp_path / "new.md").write_text(NEW)
    invoke(app, "init", str(path), "--author", "Test Bot <bot@example.com>")
    live = tmp_path / "live" / "SKILL.md"
    added = invoke(
        app,
        "skills",
        "add",
        "reviewer",
        "--from",
        str(tmp_path / "skill.md"),
        "--deploy-to",
        str(live),
        "--repo",
        str(path),
    ).stdout.splitlines()
    assert len(added[0]) == 40  # the commit, first, as before
    assert added[1:] == [
        f"added reviewer as reviewer/SKILL.md on main of {path}",
        f"deployed to {live} (adopt and rollback write it there)",
    ]
    env = {"SKILLOPT_SKILLS_REPO": str(path)}
    invoke(
        app,
        "skills",
        "stage",
        "reviewer",
        "--from",
        str(tmp_path / "new.md"),
        "--message",
        "sharper",
        "--run-id",
        "hand-2",
        env=env,
    )
    adopted = invoke(app, "skills", "adopt", "hand-2", "--all", env=env).stdout
    sha = adopted.splitlines()[0]
    rolled = invoke(app, "skills", "rollback", "reviewer", env=env).stdout.splitlines()
    assert rolled[1:] == [
        f"rolled back adoption {sha[:12]} of reviewer on main",
        f"redeployed to {live}",
    ]
    assert live.read_text() == BASE_TEXT
