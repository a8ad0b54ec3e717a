"""Claude Code (`claude -p`) as a backend, version 2.1.328 (shared AGENT-CLIS.md).

Chat use (`send`): one print-mode call with no tools and one turn; the role's system
messages replace Claude Code's own system prompt; the prompt goes in on stdin (argv is
too small for an optimizer prompt). The result is the last `result` event of
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

from core.models.agents.cli import (
    AgentBackend,
    Invocation,
    lend_login,
    parse_events,
    run_chat,
    tail,
)
from core.models.agents.confinement import (
    claude_confinement_args,
    claude_tools,
    refuse_bypass,
)
from core.models.agents.process import (
    base_environment,
    record_session,
    run_process,
)
from core.models.agents.workspace import Placement
from core.models.retry import RETRYABLE_STATUSES
from core.models.types import (
    AgentTask,
    AuthError,
    BadRequestError,
    Completion,
    Request,
    TransientError,
    Usage,
    UsageLimitReached,
    reported_amount,
)

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
_LIMIT_TEXT = re.compile(r"hit your .*limit|usage limit|out of usage|spend limit", re.I)
_LOGIN_TEXT = re.compile(r"not logged in|/login|invalid api key|failed to authenticate", re.I)
CREDENTIALS = ".credentials.json"
_NO_SANDBOX = "sandbox required but unavailable"  # stderr of a run with failIfUnavailable
# Agent use without an allowed_tools list: what editing a workspace takes.
AGENT_TOOLS = ("Read", "Write", "Edit", "Bash", "Glob", "Grep", "Skill")


class ClaudeCodeBackend(AgentBackend):
    name = "claude_code"

    # ------------------------------------------------------------------ chat use
    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        return await run_chat(
            self,
            request,
            timeout_s=timeout_s,
            system_args=lambda f: [
                "--system-prompt-file",
                str(f),
                "--tools",
                "",
                "--max-turns",
                "1",
            ],
        )

    # ------------------------------------------------------------------ agent use

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        """Explicit tools and permissions: the listed tools run without asking, anything
        else is denied (`dontAsk`); every check is bypassed only if the user says so. A
        task confined to its workspace also gets the settings that enforce it."""
        s = self.settings
        refuse_bypass(task, s.bypass_permissions, self.setting)
        tools = claude_tools(task, s.allowed_tools, AGENT_TOOLS)
        mode = "bypassPermissions" if s.bypass_permissions else "dontAsk"
        args = ["--tools", ",".join(tools), "--allowedTools", ",".join(tools)]
        args += ["--permission-mode", mode]
        args += claude_confinement_args(task, tools, path=os.environ.get("PATH"))
        if s.max_turns:
            args += ["--max-turns", str(s.max_turns)]
        return [*args, *placement.args]

    # ------------------------------------------------------------------ one process
    async def invoke(
        self,
        prompt: str,
        *,
        args: list[str],
        cwd: Path,
        home: Path,
        timeout_s: float,
        purpose: str,
    ) -> Invocation:
        """Run `claude -p` once in `cwd` with a private `home`. Raises the typed error for
        a failed call."""
        argv = [str(self.settings.binary), "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--no-session-persistence"]
        if self.settings.model:
            argv += ["--model", self.settings.model]
        argv += [*args, *self.settings.extra_args]
        env = self.environment(home)
        result = await run_process(
            argv, cwd=cwd, env=env, timeout_s=timeout_s, what="claude -p", stdin=prompt
        )
        if _NO_SANDBOX in result.stderr:
            raise BadRequestError(
                f"Claude Code could not start its sandbox ({tail(result.stderr)}); this task "
                "confines the agent to its workspace: make bubblewrap work here, or use codex"
            )
        events = parse_events(result.stdout)
        session = next((e.get("session_id") for e in events if e.get("session_id")), "")
        record_session("claude_code", str(session or ""), cwd, purpose=purpose)
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if final is None:
            raise TransientError(
                f"claude -p gave no result (exit {result.returncode}): "
                f"{tail(result.stderr or result.stdout) or 'no output'}"
            )
        check_result(final, self.settings.credential or "ANTHROPIC_API_KEY")
        return Invocation(events, result.returncode, result.duration_s, str(session or ""))

    def completion(self, invocation: Invocation) -> Completion:
        return to_completion(
            final_result(invocation.events), self.settings.model, invocation.duration_s
        )

    def environment(self, home: Path) -> dict[str, str]:
        s = self.settings
        env = base_environment(home)
        config_dir = home / ".claude"
        config_dir.mkdir(parents=True, exist_ok=True)
        env.update(
            CLAUDE_CONFIG_DIR=str(config_dir),
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_MAX_RETRIES="0",  # ours is the only retry loop
        )
        if s.base_url:
            env["ANTHROPIC_BASE_URL"] = s.base_url
        elif s.environ.get("ANTHROPIC_BASE_URL"):
            # As the user's own CLI would (and the anthropic SDK does): their gateway.
            env["ANTHROPIC_BASE_URL"] = s.environ["ANTHROPIC_BASE_URL"]
        if s.api_key:
            env["ANTHROPIC_API_KEY"] = s.api_key
        elif s.base_url:
            # A custom server gets no key of the user's, only this placeholder (the CLI
            # refuses to start with no credential at all).
            env["ANTHROPIC_API_KEY"] = "not-needed"
        elif not lend_login(user_config_dir(s.environ) / CREDENTIALS, config_dir / CREDENTIALS):
            raise AuthError(
                f"{self.setting} uses claude_code with no API key and Claude Code is not "
                "logged in; run `claude` once and /login, or set "
                f"{self.setting}.api_key_env to the variable holding an Anthropic key"
            )
        return env


def user_config_dir(environ: Any) -> Path:
    """Where the user's own Claude Code keeps its login."""
    env = environ or os.environ
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".claude"


def final_result(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in reversed(events) if e.get("type") == "result")


def check_result(result: dict[str, Any], credential: str) -> None:
    """Raise the typed error for a result event that reports a failure."""
    if result.get("subtype") == "error_max_turns":
        return  # an agent out of turns has finished: the task's check decides
    if not result.get("is_error") and result.get("subtype") == "success":
        return
    text = " ".join(str(result.get("result") or result.get("subtype") or "").split())[:300]
    status = result.get("api_error_status")
    if result.get("api_error") == "usage_limit_reached" or (
        status == 429 and _LIMIT_TEXT.search(text)
    ):
        raise UsageLimitReached(
            f"Claude Code usage limit reached ({text}); the run is resumable: rerun the "
            "same command once the limit has reset"
        )
    if status in (401, 403) or (status is None and _LOGIN_TEXT.search(text)):
        raise AuthError(
            f"Claude Code could not authenticate ({text}); check the key in {credential}, "
            "or log in with `claude` and /login"
        )
    if status in RETRYABLE_STATUSES or (isinstance(status, int) and status >= 500):
        raise TransientError(f"Claude Code: HTTP {status}: {text}")
    if status in (400, 404):
        raise BadRequestError(
            f"Claude Code: HTTP {status}: {text}; check the model name and base_url"
        )
    # Malformed or truncated answers, and anything unrecognised: worth another try.
    raise TransientError(f"Claude Code failed: {text or 'no result text'}")


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
