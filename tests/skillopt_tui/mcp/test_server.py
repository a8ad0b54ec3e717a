"""The MCP server driven in-process by the official `mcp` client: every tool, strict
arguments, one-line errors, progress, and adopt/rollback refused without the user's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from core.skills_repo import SkillsRepo
from skillopt_tui.mcp.server import TOOLS, build_server
from skillopt_tui.mcp.tools import ServerDefaults
from tests.support.tui_app import SKILL_V1, SKILL_V2, make_skills_repo

ROOT = Path(__file__).resolve().parents[3]
NAMES = [
    "sleep_status", "sleep_dry_run", "sleep_run", "sleep_review", "sleep_adopt",
    "sleep_rollback", "train", "eval", "runs",
]  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> SkillsRepo:
    return make_skills_repo(tmp_path / "skills", deploy_to=tmp_path / "deployed" / "quiz.md")


@pytest.fixture
def server(tmp_path: Path, repo: SkillsRepo):
    return build_server(
        ServerDefaults(
            state_dir=tmp_path / "state",
            skills_repo=repo.path,
            runs_dir=tmp_path / "runs",
            extra_roots=(tmp_path,),  # the tests name files anywhere under it
        )
    )


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def test_lists_every_tool_with_a_strict_schema(server):
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == NAMES
    for tool in tools:
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.description
    adopt = next(t for t in tools if t.name == "sleep_adopt")
    assert adopt.input_schema["required"] == ["staged"]
    assert "confirm" in adopt.input_schema["properties"]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("runs", {"bogus": 1}, "runs: bogus: unknown argument"),
        ("sleep_adopt", {}, "sleep_adopt: staged: Field required"),
        ("sleep_adopt", {"staged": "demo-finished", "hunks": ["1"]}, "sleep_adopt: hunks.0:"),
        ("sleep_adopt", {"staged": "demo-finished", "hunks": []}, "sleep_adopt: hunks:"),
        ("eval", {"config": "c.yaml", "skill": "s.md", "split": "train"}, "eval: split:"),
        ("sleep_run", {"backend": "nonsense"}, "sleep_run: backend:"),
        ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
    ],
)
async def test_bad_arguments_are_mcp_errors(server, tool, arguments, expected):
    async with Client(server) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, arguments)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


async def test_status_and_runs(server, tmp_path):
    async with Client(server) as client:
        status = data(await client.call_tool("sleep_status", {}))
        runs = data(await client.call_tool("runs", {}))
    assert status["state_dir"] == str(tmp_path / "state")
    assert status["nights"] == []
    assert runs == {"runs_dir": str(tmp_path / "runs"), "runs": []}


async def test_review_shows_hunks_and_evidence(server):
    async with Client(server) as client:
        review = data(await client.call_tool("sleep_review", {}))
    (branch,) = review["staged"]
    assert branch["branch"] == "staged/demo-finished"
    assert [h["index"] for h in branch["hunks"]] == [1, 2, 3]
    assert branch["evidence"][0]["trailers"]["Val-After"] == "0.80"


async def test_adopt_needs_the_users_code_and_the_code_goes_stale(server, repo, tmp_path):
    args = {"staged": "demo-finished", "hunks": [2]}
    async with Client(server) as client:
        preview = data(await client.call_tool("sleep_adopt", args))
        assert preview["confirmed"] is False
        assert [h["index"] for h in preview["preview"]["hunks"]] == [2]
        assert repo.read_skill("quiz") == SKILL_V1  # a preview changes nothing
        code = preview["confirmation_code"]

        wrong = await client.call_tool("sleep_adopt", {**args, "confirm": "AAAAAA"})
        assert wrong.is_error and "does not match" in wrong.content[0].text
        other = await client.call_tool("sleep_adopt", {**args, "hunks": [1], "confirm": code})
        assert other.is_error  # the code confirms hunk 2 only
        assert repo.read_skill("quiz") == SKILL_V1

        adopted = data(await client.call_tool("sleep_adopt", {**args, "confirm": code.lower()}))
        assert adopted["confirmed"] is True and adopted["hunks"] == [2]
        assert "- largest ocean: Pacific" in repo.read_skill("quiz")
        assert (tmp_path / "deployed" / "quiz.md").read_text() == repo.read_skill("quiz")

        replay = await client.call_tool("sleep_adopt", {**args, "confirm": code})
        assert replay.is_error  # main moved: the old code no longer confirms anything


async def test_rollback_needs_the_users_code(server, repo):
    async with Client(server) as client:
        first = data(await client.call_tool("sleep_adopt", {"staged": "demo-finished"}))
        data(
            await client.call_tool(
                "sleep_adopt", {"staged": "demo-finished", "confirm": first["confirmation_code"]}
            )
        )
        assert repo.read_skill("quiz") == SKILL_V2

        preview = data(await client.call_tool("sleep_rollback", {"target": "quiz"}))
        assert preview["confirmed"] is False and "Pacific" in preview["preview"]["diff"]
        assert repo.read_skill("quiz") == SKILL_V2
        refused = await client.call_tool("sleep_rollback", {"target": "quiz", "confirm": "ZZZZZZ"})
        assert refused.is_error
        done = data(
            await client.call_tool(
                "sleep_rollback", {"target": "quiz", "confirm": preview["confirmation_code"]}
            )
        )
    assert done["confirmed"] is True
    assert repo.read_skill("quiz") == SKILL_V1


async def test_engine_errors_are_one_line_results(tmp_path):
    server = build_server(ServerDefaults(state_dir=tmp_path / "state", extra_roots=(tmp_path,)))
    async with Client(server) as client:
        review = await client.call_tool("sleep_review", {})
        bad_repo = await client.call_tool("sleep_review", {"skills_repo": str(tmp_path)})
    assert review.is_error
    assert review.content[0].text.startswith("skillopt: error: no skills repository")
    assert bad_repo.is_error and "is not a skills repository" in bad_repo.content[0].text
    for result in (review, bad_repo):
        assert "\n" not in result.content[0].text


async def test_long_tools_run_skillopt_and_report_progress(server, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the child harvests this home, not the machine's
    messages: list[str] = []

    async def on_progress(progress, total, message):
        messages.append(message)

    missing = tmp_path / "missing.yaml"
    async with Client(server) as client:
        night = await client.call_tool(
            "sleep_dry_run", {"project": str(tmp_path)}, progress_callback=on_progress
        )
        run = await client.call_tool(
            "sleep_run", {"project": str(tmp_path / "nope")}, progress_callback=on_progress
        )
        estimate = await client.call_tool(
            "train",
            {"config": str(ROOT / "configs" / "demo.yaml"), "estimate": True},
            progress_callback=on_progress,
        )
        failed_train = await client.call_tool("train", {"config": str(missing)})
        failed_eval = await client.call_tool(
            "eval", {"config": str(missing), "skill": str(missing)}
        )
    plan = data(night)  # a real dry run of the fixture repo: no sessions in this home yet
    assert plan["night_id"].startswith("sleep-") and plan["sessions"] == 0
    assert run.is_error and "no such directory" in run.content[0].text
    assert any("skillopt: error:" in m for m in messages)  # stderr lines arrive as progress
    assert "estimate (upper bound)" in data(estimate)["estimate"]
    for result in (failed_train, failed_eval):
        assert result.is_error and str(missing) in result.content[0].text


def test_every_tool_has_a_spec():
    assert [spec.name for spec in TOOLS] == NAMES
