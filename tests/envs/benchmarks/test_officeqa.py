"""`officeqa`: the tool loop over the item's own files, path escapes refused, one scripted
rollout, scoring, the missing-data error and `materialize` from the CSV and documents."""

import os

import pytest

from core.config import EnvConfig
from envs import get_environment
from envs.officeqa.materialize import materialize
from envs.officeqa.tools import ItemFiles
from envs.split_data import MissingDataError
from tests.envs.benchmarks.fixtures import officeqa_source, scripted_client, write_manifest


@pytest.fixture
def materialised(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    report = materialize(officeqa_source(tmp_path / "src"), tmp_path / "out", manifest)
    env = get_environment(
        EnvConfig(name="officeqa", manifest_dir=str(manifest), data_dir=str(tmp_path / "out"))
    )
    return env, report, tmp_path


def test_materialize_copies_only_the_cited_documents(materialised):
    env, report, tmp_path = materialised
    assert report.counts == {"train": 2, "val": 1, "test": 1} and report.files == 1
    assert sorted(os.listdir(tmp_path / "out" / "docs")) == ["treasury_bulletin_1944_01.txt"]
    item = env.load_split("val")[0]
    assert item.answer == "170,659" and item.task_type == "easy"


def test_tools_glob_read_grep(materialised):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    assert files.glob("*.txt") == "treasury_bulletin_1944_01.txt"
    page = files.read("treasury_bulletin_1944_01.txt", offset=0, limit=2)
    assert page.startswith("1: TREASURY BULLETIN") and "read with offset 2" in page
    assert "302: Total public debt" in files.grep("public debt")


@pytest.mark.parametrize(
    "path",
    [
        "../treasury_bulletin_1944_01.txt",
        "docs/../treasury_bulletin_1944_01.txt",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "treasury_bulletin_1944_02.txt",  # another item's document, even in the same folder
        "sub/treasury_bulletin_1944_01.txt",
        "C:\\x.txt",
    ],
)
def test_path_escapes_are_refused(materialised, path):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    for tool, args in (("read", {"path": path}), ("grep", {"pattern": ".", "path": path})):
        assert files.call(tool, args).startswith("refused:")


def test_a_symlinked_document_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").symlink_to(tmp_path / "secret.txt")
    files = ItemFiles(tmp_path / "docs", ("a.txt",))
    assert files.call("read", {"path": "a.txt"}) == "refused: 'a.txt' is not a regular file"


async def test_one_tool_loop_rollout_through_the_scripted_double(materialised):
    env, _, _ = materialised
    replies = iter(
        [
            '<tool>{"name": "glob", "pattern": "*"}</tool>',
            '<tool>{"name": "grep", "pattern": "Total public debt"}</tool>',
            '<tool>{"name": "read", "path": "../../etc/passwd"}</tool>',
            "<answer>$170,659 million</answer>",
        ]
    )
    async with scripted_client(lambda r: next(replies)) as client:
        result = await env.rollout(env.load_split("val")[0], "", client.bind("target"))
    observations = [
        m["content"] for m in result.trajectory if m["content"].startswith("Tool result")
    ]
    assert "treasury_bulletin_1944_01.txt" in observations[0]
    assert "170,659 million dollars" in observations[1]
    assert "refused" in observations[2]
    assert (result.hard, result.prediction) == (1.0, "$170,659 million")


async def test_the_tool_budget_ends_the_episode(materialised):
    env, _, tmp = materialised
    env = get_environment(
        EnvConfig(
            name="officeqa",
            manifest_dir=str(tmp / "manifest"),
            data_dir=str(tmp / "out"),
            options={"max_tool_turns": 2},
        )
    )
    calls = []

    def responder(request):
        calls.append(1)
        return '<tool>{"name": "glob"}</tool>'

    async with scripted_client(responder) as client:
        result = await env.rollout(env.load_split("val")[0], "", client.bind("target"))
    assert len(calls) == 3 and result.hard == 0.0 and result.prediction == ""


def test_missing_data_error(tmp_path):
    env = get_environment(EnvConfig(name="officeqa", data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="skillopt data materialize officeqa"):
        env.load_split("train")


def test_bad_tool_calls_are_observations_not_crashes(materialised):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    assert files.call("rm", {}).startswith("error: unknown tool")
    assert files.call("read", {"nope": 1}).startswith("error: bad arguments")
    assert files.call("grep", {"pattern": "("}).startswith("refused: bad pattern")
