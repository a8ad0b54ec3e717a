"""Claude Code (`claude -p`) as a backend, version 2.1.328 (shared AGENT-CLIS.md).

Chat use: one print-mode call with no tools and one turn; the role's system messages
replace Claude Code's own system prompt. The result is the last `result` event of
`--output-format stream-json`: text, usage (cache tokens count as input), the CLI's own
`total_cost_usd`, stop reason and session id.

The CLI's own retries are off (CLAUDE_CODE_MAX_RETRIES=0): the client's retry policy is
the only retry loop, as for the API backends. Failures map to the same error types:
401/403 or "not logged in" → AuthError; a subscription limit → UsageLimitReached;
429 / 529 / 5xx / malformed output → TransientError; 400 / 404 → BadRequestError.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from core.models.agents.cli import AgentBackend, tail
from core.models.agents.confinement import claude_confinement_args, claude_tools
from core.models.agents.failure import FailureWords
from core.models.agents.login import ConfigFolder, Login
from core.models.agents.process import ProcessResult
from core.models.agents.workspace import Placement
from core.models.types import (
    AgentTask,
    BadRequestError,
    Completion,
    ModelError,
    TransientError,
    Usage,
    reported_amount,
)

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
_LIMIT = re.compile(r"hit your .*limit|usage limit|out of usage|spend limit", re.I)
_AUTH = re.compile(r"not logged in|/login|invalid api key|failed to authenticate", re.I)
_NO_SANDBOX = "sandbox required but unavailable"  # stderr of a run with failIfUnavailable
# Agent use without an allowed_tools list: what editing a workspace takes.
AGENT_TOOLS = ("Read", "Write", "Edit", "Bash", "Glob", "Grep", "Skill")


class ClaudeCodeBackend(AgentBackend):
    name, title, command = "claude_code", "Claude Code", "claude -p"
    key_variable = "ANTHROPIC_API_KEY"
    config_folder = ConfigFolder("CLAUDE_CONFIG_DIR", (".claude",))
    login = Login(".credentials.json", "`claude` and /login", key="an Anthropic key")
    failure_words = FailureWords(_LIMIT, _AUTH)

    def chat_args(self, system_file: Path) -> list[str]:
        return ["--system-prompt-file", str(system_file), "--tools", "", "--max-turns", "1"]

    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        """Explicit tools and permissions: the listed tools run without asking, anything
        else is denied (`dontAsk`); every check is bypassed only if the user says so. A
        task confined to its workspace also gets the settings that enforce it."""
        s = self.settings
        tools = claude_tools(task, s.allowed_tools, AGENT_TOOLS)
        mode = "bypassPermissions" if s.bypass_permissions else "dontAsk"
        args = ["--tools", ",".join(tools), "--allowedTools", ",".join(tools)]
        args += ["--permission-mode", mode]
        args += claude_confinement_args(task, tools, path=os.environ.get("PATH"))
        if s.max_turns:
            args += ["--max-turns", str(s.max_turns)]
        return [*args, *placement.args]

    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        s = self.settings
        env.update(
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_MAX_RETRIES="0",  # ours is the only retry loop
        )
        # As the user's own CLI would (and the anthropic SDK does): their gateway.
        base_url = s.base_url or s.environ.get("ANTHROPIC_BASE_URL")
        if base_url:
            env["ANTHROPIC_BASE_URL"] = base_url
        key = self.key_or_login(home)
        if key:
            env["ANTHROPIC_API_KEY"] = key
        args = ["-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"]
        return [*args, "--model", s.model] if s.model else args

    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        if _NO_SANDBOX in result.stderr:
            return BadRequestError(
                f"Claude Code could not start its sandbox ({tail(result.stderr)}); this task "
                "confines the agent to its workspace: make bubblewrap work here, or use codex"
            )
        final = final_result(events)
        if final is None:
            return self.no_result("result", result)
        if final.get("subtype") == "error_max_turns":
            return None  # an agent out of turns has finished: the task's check decides
        if not final.get("is_error") and final.get("subtype") == "success":
            return None
        text = final.get("result") or final.get("subtype") or "no result text"
        reached = final.get("api_error") == "usage_limit_reached"
        return self.failed(text, final.get("api_error_status"), limit_reported=reached)

    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        return to_completion(final_result(events) or {}, self.settings.model, latency_s)


def final_result(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e for e in reversed(events) if e.get("type") == "result"), None)


def to_completion(result: dict[str, Any], model: str, latency_s: float) -> Completion:
    usage = result.get("usage") or {}
    if not isinstance(result.get("result", ""), str):
        raise TransientError("Claude Code: malformed result (not text)")

    def tokens(key: str) -> int:
        return int(reported_amount(usage.get(key), f"usage.{key}", "Claude Code") or 0)

    cost = reported_amount(result.get("total_cost_usd"), "total_cost_usd", "Claude Code")
    reason = str(result.get("stop_reason") or "end_turn")
    if result.get("subtype") == "error_max_turns":
        reason = "max_turns"
    used = list((result.get("modelUsage") or {}).keys())
    return Completion(
        text=result.get("result") or "",
        usage=Usage(
            input_tokens=tokens("input_tokens")
            + tokens("cache_creation_input_tokens")
            + tokens("cache_read_input_tokens"),
            output_tokens=tokens("output_tokens"),
            cost_usd=cost,
        ),
        finish_reason=_FINISH.get(reason, reason),
        latency_s=latency_s,
        model=model or (used[0] if used else "claude-code-default"),
    )


__all__ = ["ClaudeCodeBackend"]
