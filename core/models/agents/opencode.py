"""OpenCode (`opencode run --format json`), version 1.18.33 (shared AGENT-CLIS.md), as a
backend.

Everything OpenCode is told comes from one config file in a private home
(`$XDG_CONFIG_HOME/opencode/opencode.json`): the provider's base URL and key, no
autoupdate or sharing, and the agent the call runs as. Its session database is written in
that private home too, never in the user's. `models.<role>.model` is "provider/id" or a bare
id (Anthropic). The JSON events' `step_finish` parts carry each step's tokens and cost; a
failed call is an `error` event (with the HTTP status) and exit status 1.

Chat use: an agent of ours whose prompt is the role's system text, with every tool off.
Agent use: OpenCode's `build` agent, edits and commands allowed without asking, anything
outside the workspace denied for its file tools; its shell is not sandboxed, so a task that
must stay inside its workspace is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from core.models.agents.cli import (
    AgentBackend,
    AgentSettings,
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

CHAT_AGENT = "skillopt-chat"
AGENT = "build"
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
AUTH_FILE = "auth.json"
_FINISH = {"stop": "stop", "length": "length", "tool-calls": "stop"}


class OpenCodeBackend(AgentBackend):
    name = "opencode"

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        # The system text goes into the chat agent's config (see invoke), not an argument.
        return await run_chat(self, request, timeout_s=timeout_s, system_args=lambda f: [])

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        refuse_unconfined(task, "opencode", self.setting)
        refuse_bypass(task, self.settings.bypass_permissions, self.setting)
        return [*placement.args]

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
        agent = CHAT_AGENT if purpose == "chat" else AGENT
        argv = [str(s.binary), "run", "--format", "json", "--agent", agent]
        if model:
            argv += ["-m", f"{provider}/{model}"]
        env = base_environment(home)
        env.update(
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_STATE_HOME=str(home / ".local" / "state"),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
        )
        env.pop("OPENCODE_DB", None)
        config = self._config(env, provider, home / "system-prompt.md", purpose)
        folder = home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
        result = await run_process(
            [*argv, *args, *s.extra_args], cwd=cwd, env=env, timeout_s=timeout_s,
            what="opencode run", stdin=prompt,
        )  # fmt: skip
        events = parse_events(result.stdout)
        session = next((e.get("sessionID") for e in events if e.get("sessionID")), "")
        record_session("opencode", str(session or ""), cwd, purpose=purpose)
        error = next((e.get("error") for e in events if e.get("type") == "error"), None)
        credential = s.credential or KEY_VARIABLES.get(provider, "")
        if isinstance(error, dict):
            data = error.get("data") or {}
            status = data.get("statusCode") if isinstance(data.get("statusCode"), int) else None
            text = data.get("message") or error.get("name") or "error"
            raise agent_failure("OpenCode", str(text), status, credential)
        if not any(e.get("type") == "step_finish" for e in events):
            raise TransientError(
                f"opencode run gave no finished step (exit {result.returncode}): "
                f"{tail(result.stderr or result.stdout) or 'no output'}"
            )
        return Invocation(events, result.returncode, result.duration_s, str(session or ""))

    def _config(self, env: dict[str, str], provider: str, system: Path, purpose: str) -> dict:
        s = self.settings
        options: dict[str, Any] = {}
        if s.base_url:
            url = s.base_url.rstrip("/")
            # Its Anthropic provider wants the /v1 that the Anthropic SDK adds by itself.
            if provider == "anthropic" and not url.endswith("/v1"):
                url += "/v1"
            options["baseURL"] = url
        if s.api_key or s.base_url:
            options["apiKey"] = s.api_key or "not-needed"
        else:
            data = Path(env["XDG_DATA_HOME"]) / "opencode"
            if not lend_login(user_data_dir(s.environ) / AUTH_FILE, data / AUTH_FILE):
                raise AuthError(
                    f"{self.setting} uses opencode with no API key and OpenCode is not logged "
                    f"in; run `opencode auth login`, or set {self.setting}.api_key_env to the "
                    "variable holding the provider's key"
                )
        config: dict[str, Any] = {
            "autoupdate": False,
            "share": "disabled",
            "provider": {provider: {"options": options}},
        }
        if purpose == "chat":
            config["agent"] = {
                CHAT_AGENT: {
                    "mode": "primary",
                    "prompt": f"{{file:{system}}}",
                    "tools": {"*": False},
                }
            }
        else:
            allowed = {"edit": "allow", "bash": "allow", "webfetch": "deny"}
            config["permission"] = {**allowed, "external_directory": "deny"}
        return config

    def completion(self, invocation: Invocation) -> Completion:
        return to_completion(invocation.events, self.settings, invocation.duration_s)


def user_data_dir(environ: Any) -> Path:
    """Where the user's own OpenCode keeps its login (auth.json) and database."""
    env = environ or os.environ
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).expanduser() / "opencode"
    return Path(env.get("HOME") or Path.home()) / ".local" / "share" / "opencode"


def to_completion(events: list[dict[str, Any]], s: AgentSettings, latency_s: float) -> Completion:
    """The text of the last step that said something, and the tokens of every step."""
    tokens = {"input": 0, "output": 0}
    cost = 0.0
    reason = "stop"
    texts: dict[str, list[str]] = {}
    order: list[str] = []
    for event in events:
        part = event.get("part") or {}
        if event.get("type") == "text" and isinstance(part.get("text"), str):
            message = str(part.get("messageID", ""))
            if message not in texts:
                order.append(message)
            texts.setdefault(message, []).append(part["text"])
        if event.get("type") == "step_finish":
            used = part.get("tokens") or {}
            cache = used.get("cache") or {}
            for value, name in ((used.get("input"), "input"), (cache.get("read"), "cache.read"),
                                (cache.get("write"), "cache.write")):  # fmt: skip
                tokens["input"] += int(reported_amount(value, f"tokens.{name}", "OpenCode") or 0)
            output = reported_amount(used.get("output"), "tokens.output", "OpenCode")
            tokens["output"] += int(output or 0)
            cost += float(reported_amount(part.get("cost"), "cost", "OpenCode") or 0.0)
            reason = _FINISH.get(str(part.get("reason")), "stop")
    text = "".join(texts[order[-1]]) if order else ""
    return Completion(
        text=text,
        usage=Usage(
            input_tokens=tokens["input"],
            output_tokens=tokens["output"],
            cost_usd=None if s.base_url else cost,  # OpenCode prices by model name
        ),
        finish_reason=reason,
        latency_s=latency_s,
        model=s.model or "opencode-default",
    )


__all__ = ["OpenCodeBackend"]
