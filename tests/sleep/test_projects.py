"""The projects a `sleep run` visits and the names their nights are filed under."""

from __future__ import annotations

from pathlib import Path

from sleep.night.projects import exit_status, night_label, projects_to_run
from sleep.state.settings import SleepSettings, load_settings, save_settings


def test_the_flag_wins_then_the_recorded_list_then_the_current_directory(tmp_path):
    recorded = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert projects_to_run(recorded, tmp_path / "c", tmp_path) == [tmp_path / "c"]
    assert projects_to_run(recorded, None, tmp_path) == [tmp_path / "a", tmp_path / "b"]
    assert projects_to_run([], None, tmp_path) == [tmp_path]


def test_projects_with_the_same_folder_name_get_distinct_stable_labels():
    one, two, other = Path("/w/one/app"), Path("/w/two/app"), Path("/w/ünïcode Proj")
    recorded = [str(one), str(two), str(other)]
    labels = [night_label(p, recorded) for p in (one, two, other)]
    assert labels[0] != labels[1] and labels[0].startswith("app-") and labels[1].startswith("app-")
    assert labels[2] == "ünïcode-proj"
    assert night_label(one, recorded) == labels[0]  # the same list, the same label
    assert night_label(Path("/w/one/app"), [str(one)]) == "app"


def test_one_exit_code_for_several_nights():
    assert exit_status(["finished", "finished"]) == 0
    assert exit_status(["finished", "waiting"]) == 3
    assert exit_status(["stopped", "failed"]) == 1


def test_a_settings_file_of_one_project_becomes_a_list_and_adding_keeps_order(tmp_path):
    (tmp_path / "sleep.yaml").write_text("project: /w/old\nskills_repo: /w/skills\n")
    settings = load_settings(tmp_path)
    assert settings.projects == ["/w/old"] and settings.project == "/w/old"
    added = settings.with_project("/w/new").with_project("/w/old")
    save_settings(tmp_path, added)
    assert load_settings(tmp_path).projects == ["/w/old", "/w/new"]
    assert SleepSettings(project=None).projects == []


async def test_a_night_of_a_non_ascii_project_stages_on_a_branch_of_its_name(tmp_path):
    """Git and the file system take the letters: the skill, the night folder and the staged
    branch all keep `ünïcode-proj` (scripted TEST DOUBLE, tests/sleep/night_double.py)."""
    import datetime as dt

    from core.skills_repo import SkillsRepo
    from sleep.night.held_tasks import Harvested
    from sleep.night.instruction_files import find_instruction_files
    from sleep.night.run import Night
    from tests.sleep.test_night import SKILL_TEXT, night_config, sessions

    project = tmp_path / "ünïcode-proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    [found] = find_instruction_files(project, tmp_path / "nohome")
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill(found.name, SKILL_TEXT, deploy_to=str(found.path))
    night = Night(
        state_dir=tmp_path / "state", repo=repo, config=night_config(tmp_path),
        harvest=lambda _freeze: Harvested(sessions(project)), project=project, today=dt.date(2026, 11, 30),
        label=night_label(project, [str(project)]), min_val_tasks=2,  # parts_for: 2 val
    )  # fmt: skip
    result = await night.run()
    assert result.status == "finished", result.message
    staged = result.skills["ünïcode-proj"]["staged"]
    assert staged == "staged/sleep-2026-11-30-ünïcode-proj-ünïcode-proj"
    assert [b.name for b in repo.staged_branches()] == [staged]
    assert (tmp_path / "state" / "nights" / "sleep-2026-11-30-ünïcode-proj").is_dir()
