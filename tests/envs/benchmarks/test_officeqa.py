"""`officeqa`: the tool loop over the item's own files, path escapes refused, one scripted
rollout, scoring, the missing-data error and `materialize` from the CSV and documents."""

import os

import pytest

from core.config import EnvConfig
from envs import get_environment
from envs.officeqa import tools
from envs.officeqa.environment import parse_tool_call
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


async def test_a_reply_without_an_answer_tag_has_no_answer_as_published(materialised):
    """Fails on the old code: the whole reply was taken as the answer."""
    env, _, _ = materialised
    async with scripted_client(lambda r: "170,659") as client:
        result = await env.rollout(env.load_split("val")[0], "", client.bind("target"))
    assert (result.prediction, result.hard) == ("", 0.0)
    user = result.trajectory[1]["content"]
    assert "## Source Hints\n- https://example.org/bulletin" in user  # kept by materialize


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


# ------------------------------------------------- hostile tool calls: bounded, never raised


def test_a_backtracking_grep_pattern_is_stopped_with_a_message(materialised, tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "GREP_TIMEOUT_S", 1.0)  # the test waits less
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    long_line = tmp_path / "docs"
    long_line.mkdir()
    (long_line / "long.txt").write_text("a" * 5000 + "\n")
    hostile = ItemFiles(long_line, ("long.txt",))
    for pattern in ("(a*)*b", "(a|a)*b", "(a+)+$x"):
        reply = hostile.call("grep", {"pattern": pattern})
        assert reply.startswith("refused: the pattern") and "ran past" in reply, reply
    assert "302: Total public debt" in files.call("grep", {"pattern": "public debt"})
    too_long = files.call("grep", {"pattern": "a" * 10_000})
    assert too_long.startswith("refused: a pattern is a string of at most")


@pytest.mark.parametrize(
    "args",
    [
        {"offset": float("inf")},
        {"offset": float("-inf")},
        {"offset": float("nan")},
        {"limit": float("inf")},
        {"offset": 1.5},
        {"offset": "10"},
        {"offset": True},
        {"offset": [1]},
    ],
)
def test_read_offsets_and_limits_that_are_not_whole_numbers_are_refused(materialised, args):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    reply = files.call("read", {"path": "treasury_bulletin_1944_01.txt", **args})
    assert reply.startswith("refused:") and "must be a whole number" in reply


def test_huge_and_float_whole_offsets_still_read(materialised):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    name = "treasury_bulletin_1944_01.txt"
    assert "past the end" in files.call("read", {"path": name, "offset": 10**30})
    assert files.call("read", {"path": name, "offset": 1.0, "limit": 1.0}).startswith("2: ")


@pytest.mark.parametrize(
    "reply",
    [
        "<tool>" + "[" * 100_000 + "]" * 100_000 + "</tool>",
        '<tool>{"name": "read", "path": ' + "{" * 100_000 + "</tool>",
        '<tool>{"name": "read", "offset": ' + "9" * 100_000 + "}</tool>",
        '<tool>{"name": "read", "offset": Infinity}</tool>',
    ],
    ids=["nested-100000", "unclosed-100000", "number-100000-digits", "infinity"],
)
def test_tool_calls_nested_deep_or_numbers_too_long_are_an_error_message(materialised, reply):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    call = parse_tool_call(reply)
    observation = call if isinstance(call, str) else files.call(*call)
    assert observation.startswith(("error:", "refused:")), observation
    assert len(observation) < 300


def test_oversized_arguments_are_refused_without_being_echoed(materialised):
    env, _, _ = materialised
    files = env.files_of(env.load_split("val")[0])
    huge = "x" * 1_000_000
    for tool, args in (
        ("read", {"path": huge}),
        ("grep", {"pattern": "a", "path": huge}),
        ("glob", {"pattern": huge}),
        ("read", {"path": "treasury_bulletin_1944_01.txt", "offset": huge}),
    ):
        reply = files.call(tool, args)
        assert reply.startswith("refused:") and len(reply) < 200, (tool, reply[:200])


def test_a_string_holding_brackets_is_not_counted_as_nesting():
    reply = '<tool>{"name": "grep", "pattern": "' + "[" * 50 + '"}</tool>'
    assert parse_tool_call(reply) == ("grep", {"pattern": "[" * 50})
