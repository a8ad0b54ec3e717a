"""Issue 9, crashes on bad input: each is one line on stderr, exit 2, nothing left behind."""

from __future__ import annotations

import yaml

from core.skills_repo import SkillsRepo
from tests.skillopt_tui.cli.test_train_cmds import one_line_error, skillopt
from tests.support.skills_git import plain_git
from tests.support.train_scenario import scenario_config

NOT_UTF8 = b"\xff\xfe caf\xe9 \x80\n"


def _write(tmp_path, tree, name="bad.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(tree))
    return str(path)


def _train(tmp_path, config: str, *extra: str):
    out = tmp_path / "runs" / "bad"
    result = skillopt(tmp_path, "train", "--config", config, "--out", str(out), *extra)
    return result, out


def test_files_that_are_not_utf8_or_are_directories(tmp_path):
    cases = []
    tree = scenario_config(tmp_path)
    (tmp_path / "data" / "capitals.jsonl").write_bytes(NOT_UTF8)
    cases.append((_write(tmp_path, tree, "data.yaml"), "capitals.jsonl", "UTF-8"))

    tree = scenario_config(tmp_path / "m")
    (tmp_path / "m" / "manifests" / "train.json").write_bytes(NOT_UTF8)
    cases.append((_write(tmp_path, tree, "manifest.yaml"), "train.json", "UTF-8"))

    tree = scenario_config(tmp_path / "d")
    val = tmp_path / "d" / "manifests" / "val.json"
    val.unlink()
    val.mkdir()
    cases.append((_write(tmp_path, tree, "dir.yaml"), "val.json", "directory"))

    tree = scenario_config(tmp_path / "e")
    (tmp_path / "e" / "keys.env").write_bytes(b"OPENAI_API_KEY=sk-\xff\xfe\n")
    tree["models"]["env_file"] = str(tmp_path / "e" / "keys.env")
    cases.append((_write(tmp_path, tree, "env.yaml"), "keys.env", "UTF-8"))
    for config, names, says in cases:
        result, out = _train(tmp_path, config)
        assert result.returncode == 2, (config, result.stderr)
        line = one_line_error(result)
        assert names in line and says in line, line
        assert not out.exists(), config


def test_a_skill_on_main_that_is_not_utf8(tmp_path):
    repo = SkillsRepo.init(tmp_path / "skills", identity=("T", "t@example.com"))
    repo.add_skill("capitals", "Answer with the city.\n")
    (repo.path / "capitals" / "SKILL.md").write_bytes(NOT_UTF8)
    plain_git(repo.path, "commit", "-qam", "binary by hand")
    config = _write(tmp_path, scenario_config(tmp_path, initial_skill=None))
    result, out = _train(tmp_path, config, "--skills-repo", str(repo.path), "--skill", "capitals")
    assert result.returncode == 2, result.stderr
    line = one_line_error(result)
    assert "capitals" in line and "UTF-8" in line
    assert not out.exists()


def test_a_broken_skills_yaml_is_one_line(tmp_path):
    repo = SkillsRepo.init(tmp_path / "skills", identity=("T", "t@example.com"))
    (repo.path / "skills.yaml").write_text("version: 1\nskills:\n  - name: [unclosed\n")
    plain_git(repo.path, "commit", "-qam", "broken by hand")
    result = skillopt(tmp_path, "skills", "list", "--repo", str(repo.path))
    assert result.returncode == 2, result.stderr
    assert "skills.yaml" in one_line_error(result)


def test_usage_errors_are_one_line(tmp_path):
    for args in (("train",), ("skills", "adopt"), ("skills", "nosuch"), ("train", "--bogus")):
        result = skillopt(tmp_path, *args)
        assert result.returncode == 2, (args, result.stderr)
        line = one_line_error(result)
        assert "--help" in line, line


def test_an_unset_api_key_env_is_one_line_and_leaves_no_run(tmp_path):
    tree = scenario_config(tmp_path)
    tree["models"]["target"] = {
        "backend": "openai",
        "model": "gpt-4.1-mini",
        "api_key_env": "SKILLOPT_TEST_UNSET_KEY",
    }
    result, out = _train(tmp_path, _write(tmp_path, tree))
    assert result.returncode == 2, result.stderr
    assert "SKILLOPT_TEST_UNSET_KEY is not set" in one_line_error(result)
    assert not out.exists()
