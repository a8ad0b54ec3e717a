"""Split data on disk: missing data is one line naming how to materialise it; data that does
not match the manifest is refused naming the ids."""

import json

import pytest

from core.environment.contract import EnvError
from envs.split_data import MissingDataError, data_root, load_split_rows
from tests.envs.benchmarks.fixtures import write_manifest, write_split_dirs


def test_missing_data_is_one_line_saying_how_to_materialise(tmp_path):
    manifest = write_manifest(tmp_path / "m")
    with pytest.raises(MissingDataError) as info:
        load_split_rows("searchqa", manifest, tmp_path / "nothing", "train", "your copy")
    message = str(info.value)
    assert "\n" not in message
    assert "skillopt data materialize searchqa --source PATH" in message
    assert str(tmp_path / "nothing" / "train" / "items.json") in message


def test_rows_come_in_manifest_order(tmp_path):
    manifest = write_manifest(tmp_path / "m", {"train": ["b", "a"], "val": [], "test": []})
    data = write_split_dirs(tmp_path / "d", {"train": [{"id": "a", "x": 1}, {"id": "b", "x": 2}]})
    assert [r["x"] for r in load_split_rows("e", manifest, data, "train", "")] == [2, 1]


@pytest.mark.parametrize(
    ("data_ids", "expected"),
    [
        (["a"], "1 manifest id(s) missing, e.g. 'b'"),
        (["a", "b", "z"], "1 id(s) not in the manifest, e.g. 'z'"),
    ],
)
def test_data_that_differs_from_the_manifest_is_refused(tmp_path, data_ids, expected):
    manifest = write_manifest(tmp_path / "m", {"train": ["a", "b"], "val": [], "test": []})
    data = write_split_dirs(tmp_path / "d", {"train": [{"id": i} for i in data_ids]})
    with pytest.raises(EnvError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        load_split_rows("e", manifest, data, "train", "")


def test_unknown_split_and_malformed_file(tmp_path):
    manifest = write_manifest(tmp_path / "m")
    with pytest.raises(EnvError, match="unknown split 'dev'"):
        load_split_rows("e", manifest, tmp_path, "dev", "")
    (tmp_path / "d" / "train").mkdir(parents=True)
    (tmp_path / "d" / "train" / "items.json").write_text("{not json")
    with pytest.raises(EnvError, match="malformed JSON"):
        load_split_rows("e", manifest, tmp_path / "d", "train", "")
    (tmp_path / "d" / "train" / "items.json").write_text(json.dumps([{"no_id": 1}]))
    with pytest.raises(EnvError, match="no string id"):
        load_split_rows("e", manifest, tmp_path / "d", "train", "")


def test_data_root_follows_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLOPT_DATA", str(tmp_path))
    assert data_root() == tmp_path
    monkeypatch.delenv("SKILLOPT_DATA")
    assert data_root().name == "data" and ".cache" in str(data_root())
