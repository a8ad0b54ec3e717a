"""The MCP server: tool list, argument validation, dispatch, progress and errors.

Built on the SDK's low-level `Server` rather than its decorator API so that each tool's
schema is exactly our strict pydantic model (`additionalProperties: false`) and the same
model validates the call. Bad arguments are JSON-RPC errors (INVALID_PARAMS) carrying one
line; a tool that fails returns an error result (`isError`) carrying the one line the CLI
would print, so the agent's model reads why and what to do next. A path argument outside
the server's roots is an invalid argument too; an OSError is an error result naming only
its reason, never the argument; a line on stdin that is not JSON gets a -32700 reply.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ValidationError

from core.errors import UserError
from skillopt_tui import __version__
from skillopt_tui.mcp import arguments as a
from skillopt_tui.mcp import tools as t
from skillopt_tui.mcp.roots import OutsideRoots
from skillopt_tui.mcp.subprocess_tool import ToolFailure

SERVER_NAME = "skillopt"
INSTRUCTIONS = (
    "SkillOpt improves the user's skill files (CLAUDE.md, AGENTS.md, SKILL.md) from their "
    "own agent sessions. sleep_dry_run shows what a night would do; sleep_run runs it and "
    "stages changes; sleep_review shows staged hunks with their evidence. sleep_adopt and "
    "sleep_rollback change the files agents read: they preview first and need the code the "
    "user types back — never supply it yourself."
)

Impl = Callable[[Any, t.ServerDefaults, Callable[[str], Awaitable[None]]], Awaitable[Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    model: type[BaseModel]
    run: Impl
    description: str
    read_only: bool


TOOLS = (
    ToolSpec("sleep_status", a.SleepStatusArgs, t.sleep_status, "Recorded Sleep settings, recent nights, and handoff prompts waiting for answers.", True),
    ToolSpec("sleep_dry_run", a.SleepDryRunArgs, t.sleep_dry_run, "What tonight's night would do: sessions, tasks per skill, estimated calls and cost. Writes nothing.", True),
    ToolSpec("sleep_run", a.SleepRunArgs, t.sleep_run, "Run the night: harvest sessions, replay, judge, gate, and stage improvements for review (never adopts). Long: reports progress.", False),
    ToolSpec("sleep_review", a.SleepReviewArgs, t.sleep_review, "Staged changes as numbered hunks, with each commit's evidence (scores, tasks).", True),
    ToolSpec("sleep_adopt", a.SleepAdoptArgs, t.sleep_adopt, "Adopt staged hunks into the skill on main and deploy it. The first call previews and returns a code; the change happens only when the user types the code back and you repeat the call with confirm set to it.", False),
    ToolSpec("sleep_rollback", a.SleepRollbackArgs, t.sleep_rollback, "Revert an adoption on main and redeploy. Previews first; needs the code the user types back, like sleep_adopt.", False),
    ToolSpec("train", a.TrainArgs, t.train, "Train a skill from a run config (resumable; estimate=true only estimates). Long: reports progress.", False),
    ToolSpec("eval", a.EvalArgs, t.eval_, "Score one skill file on the val or test split of a run config.", True),
    ToolSpec("runs", a.RunsArgs, t.runs, "List training runs with their status and scores.", True),
)  # fmt: skip
BY_NAME = {spec.name: spec for spec in TOOLS}


def tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.model.model_json_schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=spec.read_only, destructive_hint=not spec.read_only
            ),
        )
        for spec in TOOLS
    ]


def validate(spec: ToolSpec, arguments: dict[str, Any] | None) -> BaseModel:
    try:
        return spec.model.model_validate(arguments or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(arguments)"
        message = "unknown argument" if first["type"] == "extra_forbidden" else first["msg"]
        raise MCPError(
            code=types.INVALID_PARAMS, message=f"{spec.name}: {where}: {message}"
        ) from None


def build_server(defaults: t.ServerDefaults | None = None) -> Server:
    defaults = defaults or t.ServerDefaults()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {params.name!r}; tools: {', '.join(BY_NAME)}",
            )
        args = validate(spec, params.arguments)
        steps = 0

        async def progress(line: str) -> None:
            nonlocal steps
            steps += 1
            await ctx.session.report_progress(steps, None, line)

        try:
            data = await spec.run(args, defaults, progress)
        except OutsideRoots as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=f"{spec.name}: {exc}") from None
        except (UserError, ToolFailure) as exc:
            return _error_result(str(exc))
        except OSError as exc:  # the reason only: the filename may be a huge argument
            return _error_result(f"{spec.name}: {exc.strerror or type(exc).__name__}")
        except Exception as exc:
            logging.getLogger(__name__).exception("tool %s failed", spec.name)
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"{spec.name}: internal error ({type(exc).__name__}); see the server log",
            ) from None
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"skillopt: error: {message}")],
        is_error=True,
    )


def _unreadable_line_reply(exc: Exception) -> SessionMessage:
    """The JSON-RPC reply to a line the transport could not read as a message: -32700 when it
    is not JSON, -32600 when it is JSON but no JSON-RPC message (the id is unknown: null)."""
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors()
    )
    error = (
        types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not JSON")
        if not_json
        else types.ErrorData(code=types.INVALID_REQUEST, message="Invalid Request")
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def _answer_unreadable_lines(read_stream, write_stream, forward) -> None:
    """Pass messages on to the server; answer what the transport could not parse (the SDK
    would only log it, leaving the client waiting)."""
    async with forward:
        async for item in read_stream:
            if isinstance(item, Exception):
                await write_stream.send(_unreadable_line_reply(item))
            else:
                await forward.send(item)


async def serve_stdio(defaults: t.ServerDefaults) -> None:
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams

    server = build_server(defaults)
    async with stdio_server() as (read_stream, write_stream):
        forward, messages = create_context_streams[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_answer_unreadable_lines, read_stream, write_stream, forward)
            await server.run(messages, write_stream, server.create_initialization_options())
