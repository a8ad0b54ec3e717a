"""`n` with a skills repo open: the dialog offers its skills (first by default, or none) and
the run is started with `--skills-repo PATH --skill NAME`; with no configs under ./configs
the dialog says so and the path input has focus."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Label, Select

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.train_launcher import train_command
from skillopt_tui.app.widgets.new_run_dialog import NO_SKILL, NewRunDialog
from tests.support.tui_app import wait_until


class _RecordingLauncher:
    """Stands in for TrainLauncher.start: records the call, starts nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, config, runs_dir, skills_repo=None, skill=None):
        self.calls.append((config, skills_repo, skill))
        raise OSError("not started (test)")


def _app(tmp_path: Path, skills: Path | None) -> SkillOptApp:
    return SkillOptApp(
        tmp_path / "runs", skills, refresh_runs=False, poll_interval=0.05, config_root=tmp_path
    )


async def _dialog(pilot) -> NewRunDialog:
    await pilot.press("n")
    assert await wait_until(pilot, lambda: isinstance(pilot.app.screen, NewRunDialog))
    return pilot.app.screen


async def test_new_run_stages_into_the_chosen_skill(tmp_path, skills_repo):
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "quiz.yaml"
    config.write_text("seed: 1\n", encoding="utf-8")
    app = _app(tmp_path, skills_repo)
    start = app.launcher.start = _RecordingLauncher()
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _dialog(pilot)
        assert dialog.query_one(Select).value == "quiz"  # the first skill by default
        assert dialog.focused is dialog.query_one("#config-path")  # type to filter
        await pilot.press("enter")  # the highlighted (only) config
        assert await wait_until(pilot, lambda: start.calls, limit=250)
        assert start.calls == [(config, skills_repo, "quiz")]
        # again, choosing "none": nothing is staged
        dialog = await _dialog(pilot)
        dialog.query_one(Select).value = NO_SKILL
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: len(start.calls) == 2, limit=250)
        assert start.calls[1] == (config, None, None)


async def test_no_configs_says_so_and_focuses_the_path(tmp_path):
    app = _app(tmp_path, None)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _dialog(pilot)
        assert "No configs found" in str(dialog.query_one("#no-configs", Label).render())
        assert dialog.focused is dialog.query_one("#config-path", Input)
        assert not dialog.query(Select)  # no skills repo: no skill choice


def test_train_command_names_the_skills_repo_and_skill(tmp_path):
    cmd = train_command(Path("c.yaml"), tmp_path / "r", Path("/s"), "quiz")
    assert cmd[-6:] == ["--out", str(tmp_path / "r"), "--skills-repo", "/s", "--skill", "quiz"]
    assert "--skills-repo" not in train_command(Path("c.yaml"), tmp_path / "r", None, None)


def _many_configs(root: Path, count: int = 40) -> list[Path]:
    (root / "configs" / "bench").mkdir(parents=True)
    paths = [root / "configs" / "bench" / f"task-{i:02d}.yaml" for i in range(count)]
    paths.append(root / "configs" / "capitals.yaml")
    for path in paths:
        path.write_text("seed: 1\n", encoding="utf-8")
    return paths


def _on_screen(app, widget) -> bool:
    region = widget.region
    return region.height > 0 and region.y >= 0 and region.bottom <= app.size.height - 1


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 18)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_forty_configs_fit_and_typing_filters_them(tmp_path, skills_repo, size):
    configs = _many_configs(tmp_path)
    app = _app(tmp_path, skills_repo)
    start = app.launcher.start = _RecordingLauncher()
    async with app.run_test(size=size) as pilot:
        dialog = await _dialog(pilot)
        await pilot.pause(0.2)
        for selector in ("#config-path", "#start", "#cancel", "#config-list"):
            assert _on_screen(app, dialog.query_one(selector)), selector
        await pilot.press(*"capit")
        assert dialog.shown == [configs[-1]]
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: start.calls, limit=250)
    assert start.calls == [(configs[-1], skills_repo, "quiz")]
