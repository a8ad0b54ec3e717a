"""The projects a `sleep run` visits and the names their nights are filed under."""

from __future__ import annotations

from pathlib import Path

from sleep.projects import exit_status, night_label, projects_to_run
from sleep.settings import SleepSettings, load_settings, save_settings


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
