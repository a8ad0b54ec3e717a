"""pi (`pi -p --mode json`), version 0.73.1 (shared AGENT-CLIS.md), as a backend.

pi takes its provider's base URL only from `models.json` in its agent folder (it ignores
ANTHROPIC_BASE_URL), so each call gets a private agent folder (`PI_CODING_AGENT_DIR`) with
that file, the key in the provider's usual variable, and `--no-session`: nothing of ours
lands in the user's session store. `models.<role>.model` is "provider/id" or a bare id
(Anthropic). The event stream's `message_end` records carry each assistant turn's usage and
cost; a failed call is still a message, with `stopReason: "error"` and exit status 0.

Chat use: no tools, no context files or skills, the role's system text as pi's system
prompt. Agent use: pi's four tools (read, bash, edit, write), the skill in AGENTS.md (or a
skill folder pi reads), unconfined: pi has no sandbox, so a task that must stay inside its
workspace is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
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
from core.models.agents.confinement import refuse_bypass, refuse_unconfined
from core.models.agents.failure import agent_failure, split_model
from core.models.agents.process import base_environment, record_session, run_process
from core.models.agents.workspace import Placement
from core.models.types import (
    AgentTask,
    AuthError,
    Completion,
    Request,
    TransientError,
    Usage,
    reported_amount,
)

AGENT_TOOLS = ("read", "bash", "edit", "write")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_FINISH = {"stop": "stop", "length": "length", "toolUse": "stop", "aborted": "stop"}
AUTH_FILE = "auth.json"


class PiBackend(AgentBackend):
    name = "pi"

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        return await run_chat(
            self,
            request,
            timeout_s=timeout_s,
            system_args=lambda f: [
                "--system-prompt",
                str(f),
                "--no-tools",
                "--no-context-files",
                "--no-skills",
            ],  # fmt: skip
        )

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        refuse_unconfined(task, "pi", self.setting)
        refuse_bypass(task, self.settings.bypass_permissions, self.setting)
        tools = self.settings.allowed_tools or AGENT_TOOLS
        args = ["--tools", ",".join(tools)]
        if placement.files and not placement.files[0].endswith("AGENTS.md"):
            args.append("--no-context-files")  # the skill is in a skill folder only
        return [*args, *placement.args]

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
        s = self.settings
        provider, model = split_model(s.model)
        argv = [str(s.binary), "-p", "--mode", "json", "--no-session", "--offline"]
        argv += ["--no-extensions", "--no-prompt-templates", "--no-themes", "--provider", provider]
        if model:
            argv += ["--model", model]
        env = base_environment(home)
        agent_dir = home / ".pi" / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        env.update(PI_CODING_AGENT_DIR=str(agent_dir), PI_OFFLINE="1", PI_TELEMETRY="0")
        self._provider(env, agent_dir, provider)
        result = await run_process(
            [*argv, *args, *s.extra_args], cwd=cwd, env=env, timeout_s=timeout_s,
            what="pi -p", stdin=prompt,
        )  # fmt: skip
        events = parse_events(result.stdout)
        session = next((e.get("id") for e in events if e.get("type") == "session"), "")
        record_session("pi", str(session or ""), cwd, purpose=purpose)
        if not any(e.get("type") == "agent_end" for e in events):
            raise TransientError(
                f"pi -p gave no result (exit {result.returncode}): "
                f"{tail(result.stderr or result.stdout) or 'no output'}"
            )
        failed = _failed_turn(events)
        if failed is not None:
            raise agent_failure("pi", failed, None, s.credential or KEY_VARIABLES.get(provider, ""))
        return Invocation(events, result.returncode, result.duration_s, str(session or ""))

    def _provider(self, env: dict[str, str], agent_dir: Path, provider: str) -> None:
        s = self.settings
        if s.base_url:
            models = {"providers": {provider: {"baseUrl": s.base_url}}}
            (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
        variable = KEY_VARIABLES.get(provider)
        if s.api_key or s.base_url:
            if variable:
                env[variable] = s.api_key or "not-needed"
            return
        if not lend_login(user_pi_dir(s.environ) / AUTH_FILE, agent_dir / AUTH_FILE):
            raise AuthError(
                f"{self.setting} uses pi with no API key and pi is not logged in; run `pi` "
                f"and /login, or set {self.setting}.api_key_env to the variable holding a key"
            )

    def completion(self, invocation: Invocation) -> Completion:
        done = to_completion(invocation.events, self.settings.model, invocation.duration_s)
        if self.settings.base_url:  # pi prices by model name: not what a custom server costs
            done = replace(done, usage=replace(done.usage, cost_usd=None))
        return done


def user_pi_dir(environ: Any) -> Path:
    env = environ or os.environ
    if env.get("PI_CODING_AGENT_DIR"):
        return Path(env["PI_CODING_AGENT_DIR"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".pi" / "agent"


def _assistant_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        message = event.get("message")
        ended = event.get("type") == "message_end" and isinstance(message, dict)
        if ended and message.get("role") == "assistant":
            out.append(message)
    return out


def _failed_turn(events: list[dict[str, Any]]) -> str | None:
    """The error message of the last assistant turn, if it failed."""
    messages = _assistant_messages(events)
    if messages and messages[-1].get("stopReason") == "error":
        return str(messages[-1].get("errorMessage") or "the model call failed")
    return None


def _text(message: dict[str, Any]) -> str:
    parts = message.get("content") or []
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def to_completion(events: list[dict[str, Any]], model: str, latency_s: float) -> Completion:
    messages = _assistant_messages(events)
    tokens = {"input": 0, "output": 0}
    cost = 0.0
    for message in messages:
        usage = message.get("usage") or {}
        for key in ("input", "cacheRead", "cacheWrite"):
            tokens["input"] += int(reported_amount(usage.get(key), f"usage.{key}", "pi") or 0)
        tokens["output"] += int(reported_amount(usage.get("output"), "usage.output", "pi") or 0)
        total = (usage.get("cost") or {}).get("total")
        cost += float(reported_amount(total, "usage.cost.total", "pi") or 0.0)
    last = messages[-1] if messages else {}
    return Completion(
        text=_text(last),
        usage=Usage(input_tokens=tokens["input"], output_tokens=tokens["output"], cost_usd=cost),
        finish_reason=_FINISH.get(str(last.get("stopReason")), "stop"),
        latency_s=latency_s,
        model=model or str(last.get("model") or "pi-default"),
    )


__all__ = ["PiBackend"]
