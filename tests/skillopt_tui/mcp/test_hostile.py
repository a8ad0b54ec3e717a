"""Hostile MCP calls: oversized and NUL-bearing arguments, paths outside the server's roots,
a file where a folder belongs, wrong confirmation codes until lockout, and lines on stdin
that are no JSON-RPC message, against the real `skillopt mcp` process where the transport
matters. Each must be a proper JSON-RPC error or error result, short, never echoing the
argument, and never a traceback in the server's log."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from core.skills_repo import SkillsRepo
from skillopt_tui.mcp.confirmation import MAX_WRONG
from skillopt_tui.mcp.server import build_server
from skillopt_tui.mcp.tools import ServerDefaults
from sleep.state.settings import SETTINGS_FILE
from tests.support.tui_app import SKILL_V1, make_skills_repo

ROOT = Path(__file__).resolve().parents[3]
INVALID_PARAMS = -32602
HUGE = "x" * 10_000_000


@pytest.fixture
def repo(tmp_path: Path) -> SkillsRepo:
    return make_skills_repo(tmp_path / "skills", deploy_to=tmp_path / "deployed" / "quiz.md")


@pytest.fixture
def server(tmp_path: Path, repo: SkillsRepo):
    return build_server(
        ServerDefaults(
            state_dir=tmp_path / "state", skills_repo=repo.path, runs_dir=tmp_path / "runs"
        )
    )


OVERSIZED = [
    ("sleep_status", {"state_dir": HUGE}, "state_dir"),
    ("sleep_dry_run", {"state_dir": HUGE}, "state_dir"),
    ("sleep_review", {"staged": "s" * 1_000_000}, "staged"),
    ("runs", {"runs_dir": "r" * 1_000_000}, "runs_dir"),
    ("train", {"config": "c.yaml", "set": ["a.b=1"] * 100_000}, "set"),
    ("eval", {"config": "c.yaml", "skill": "s.md", "set": ["x" * 5000]}, "set.0"),
    ("sleep_adopt", {"staged": "demo-finished", "hunks": list(range(1, 100_001))}, "hunks"),
    ("sleep_adopt", {"staged": "demo-finished", "confirm": "C" * 100_000}, "confirm"),
    ("sleep_rollback", {"target": "t" * 100_000}, "target"),
    ("sleep_status", {"state_dir": "state\x00/etc"}, "state_dir"),
    ("sleep_status", {"state_dir": "state/\ud800"}, "state_dir"),
    ("train", {"config": "c.yaml", "set": ["a=\udfff"]}, "set.0"),
    ("sleep_review", {"staged": ""}, "staged"),
    ("sleep_adopt", {"staged": "demo-finished", "hunks": [-1]}, "hunks.0"),
]


@pytest.mark.parametrize(("tool", "arguments", "where"), OVERSIZED)
async def test_oversized_or_malformed_arguments_are_invalid_params(server, tool, arguments, where):
    async with Client(server) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, arguments)
    assert caught.value.error.code == INVALID_PARAMS
    message = caught.value.error.message
    assert message.startswith(f"{tool}: {where}:"), message
    assert len(message) < 200 and "\n" not in message


@pytest.mark.parametrize(
    ("tool", "argument", "extra"),
    [
        ("sleep_status", "state_dir", {}),
        ("sleep_dry_run", "state_dir", {}),
        ("sleep_dry_run", "project", {}),
        ("sleep_run", "skills_repo", {}),
        ("sleep_review", "skills_repo", {}),
        ("runs", "runs_dir", {}),
        ("train", "config", {}),
        ("train", "out", {"config": "configs/demo.yaml"}),
        ("eval", "skill", {"config": "configs/demo.yaml"}),
    ],
)
@pytest.mark.parametrize("outside", ["/etc", "/etc/passwd", "{tmp}/../..", "{tmp}/link"])
async def test_path_arguments_outside_the_roots_are_refused(
    server, tmp_path, tool, argument, extra, outside
):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "link").symlink_to("/etc")  # inside by name, outside once resolved
    value = outside.format(tmp=tmp_path / "state")
    if tool == "eval" and argument != "config":
        extra = {**extra, "config": str(ROOT / "configs" / "demo.yaml")}
    if tool == "train" and argument == "out":
        extra = {"config": str(ROOT / "configs" / "demo.yaml")}
    async with Client(server) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, {**extra, argument: value})
    assert caught.value.error.code == INVALID_PARAMS
    message = caught.value.error.message
    assert message.startswith(f"{tool}: {argument} is outside the folders this server may touch")
    assert "/etc" not in message and "--root DIR" in message


async def test_a_root_given_at_start_is_allowed(tmp_path, repo):
    other = tmp_path / "other-state"
    server = build_server(
        ServerDefaults(state_dir=tmp_path / "state", skills_repo=repo.path, extra_roots=(other,))
    )
    async with Client(server) as client:
        status = await client.call_tool("sleep_status", {"state_dir": str(other)})
    assert not status.is_error, status.content[0].text
    assert json.loads(status.content[0].text)["state_dir"] == str(other)


async def test_what_sleep_init_recorded_is_a_root(tmp_path, repo):
    state = tmp_path / "state"
    state.mkdir()
    server = build_server(ServerDefaults(state_dir=state))
    async with Client(server) as client:
        with pytest.raises(MCPError):  # not recorded yet: outside every root
            await client.call_tool("sleep_review", {"skills_repo": str(repo.path)})
        (state / SETTINGS_FILE).write_text(f"skills_repo: {repo.path}\n")  # as `sleep init`
        review = await client.call_tool("sleep_review", {"skills_repo": str(repo.path)})
    assert not review.is_error, review.content[0].text


async def test_runs_dir_that_is_a_file_says_so(server, tmp_path):
    (tmp_path / "runs").write_text("not a folder\n")
    async with Client(server) as client:
        result = await client.call_tool("runs", {"runs_dir": str(tmp_path / "runs")})
        default = await client.call_tool("runs", {})
    for got in (result, default):
        assert got.is_error
        assert got.content[0].text == (
            f"skillopt: error: runs_dir {tmp_path / 'runs'} is not a directory; "
            "give the folder of runs"
        )


async def test_a_path_too_long_for_the_os_names_only_the_reason(server, tmp_path):
    (tmp_path / "state").mkdir()
    long_name = str(tmp_path / "state" / ("n" * 300))  # within MAX_PATH, one part past 255
    async with Client(server) as client:
        result = await client.call_tool("runs", {"runs_dir": long_name})
    assert result.is_error
    assert result.content[0].text == "skillopt: error: runs: File name too long"


async def test_wrong_codes_void_the_pending_confirmation(server, repo):
    args = {"staged": "demo-finished", "hunks": [2]}
    async with Client(server) as client:
        preview = json.loads((await client.call_tool("sleep_adopt", args)).content[0].text)
        code = preview["confirmation_code"]
        wrong = "AAAAAA" if code != "AAAAAA" else "BBBBBB"
        texts = []
        for guess in ["ÄÖÜ-ß", *[wrong] * (MAX_WRONG - 1)]:  # non-ASCII is a miss, not a crash
            result = await client.call_tool("sleep_adopt", {**args, "confirm": guess})
            assert result.is_error
            texts.append(result.content[0].text)
        late = await client.call_tool("sleep_adopt", {**args, "confirm": code})
        assert late.is_error and "voided" in late.content[0].text
        assert repo.read_skill("quiz") == SKILL_V1  # the right code came too late
        assert all("does not match" in t for t in texts[:-1]) and "voided" in texts[-1]

        again = json.loads((await client.call_tool("sleep_adopt", args)).content[0].text)
        assert again["confirmation_code"] != code  # a fresh preview, a fresh code
        done = await client.call_tool(
            "sleep_adopt", {**args, "confirm": again["confirmation_code"]}
        )
    assert not done.is_error and json.loads(done.content[0].text)["confirmed"] is True


# -- the real process over stdio --------------------------------------------------------


class StdioServer:
    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "server.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skillopt_tui", "mcp", "--state-dir", str(tmp_path / "st")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log.open("w"),
            cwd=tmp_path, text=True,
        )  # fmt: skip
        self.send(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}
        )  # fmt: skip
        assert self.receive()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        """The next reply; a server that never answers fails the test instead of hanging it."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "the server sent no reply"
        return json.loads(self.process.stdout.readline())

    def close(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        return self.log.read_text()


@pytest.fixture
def stdio(tmp_path):
    server = StdioServer(tmp_path)
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait()


# Lines that are no JSON-RPC request, with the error code each must get.
UNREADABLE = [
    ("{not json", -32700),
    ('{"jsonrpc": "2.0", "id": 5, "method": ', -32700),
    ("\x00\x01garbage", -32700),
    ("[1, 2]", -32600),
    ('{"hello": "world"}', -32600),
]


def test_unreadable_lines_get_an_error_reply_and_the_server_goes_on(stdio):
    """One server gets every unreadable line in turn and serves a request after each (a
    server started per line cost a process start each, for the same transport path)."""
    for request_id, (line, code) in enumerate(UNREADABLE, start=10):
        stdio.send(line)
        reply = stdio.receive()
        assert reply["id"] is None and reply["error"]["code"] == code, line
        stdio.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
        assert stdio.receive()["id"] == request_id, line  # still serving
    assert "Traceback" not in stdio.close()


def test_a_huge_argument_over_stdio_is_short_and_leaves_no_traceback(stdio):
    stdio.send(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
         "params": {"name": "sleep_status", "arguments": {"state_dir": HUGE}}}
    )  # fmt: skip
    reply = stdio.receive()
    assert reply["id"] == 9 and reply["error"]["code"] == INVALID_PARAMS
    assert len(json.dumps(reply)) < 300
    log = stdio.close()
    assert "Traceback" not in log and "xxxxxxxxxx" not in log
