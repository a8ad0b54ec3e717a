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
from pathlib import Path
from typing import Any

from core.models.agents.cli import SYSTEM_FILE, AgentBackend
from core.models.agents.failure import KEY_VARIABLES, split_model
from core.models.agents.login import ConfigFolder, Login
from core.models.agents.process import ProcessResult
from core.models.agents.workspace import Placement
from core.models.types import AgentTask, Completion, ModelError, Usage, reported_amount

CHAT_AGENT = "skillopt-chat"
AGENT = "build"
_FINISH = {"stop": "stop", "length": "length", "tool-calls": "stop"}


class OpenCodeBackend(AgentBackend):
    name, title, command = "opencode", "OpenCode", "opencode run"
    session_field = ("sessionID", None)
    priced_by_name = True
    sandbox = False
    # Its login (auth.json) and session database: $XDG_DATA_HOME/opencode.
    config_folder = ConfigFolder("XDG_DATA_HOME", (".local", "share", "opencode"), ("opencode",))
    login = Login("auth.json", "`opencode auth login`", key="the provider's key")

    @property
    def key_variable(self) -> str:  # type: ignore[override]
        return KEY_VARIABLES.get(split_model(self.settings.model)[0], "")

    def chat_args(self, system_file: Path) -> list[str]:
        return []  # the system text is the chat agent's prompt, in the config (launch)

    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        return [*placement.args]

    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        provider, model = split_model(self.settings.model)
        env.update(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1")
        config = self._config(home, provider, purpose)
        folder = home / ".config" / "opencode"  # XDG_CONFIG_HOME (base_environment)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
        agent = CHAT_AGENT if purpose == "chat" else AGENT
        args = ["run", "--format", "json", "--agent", agent]
        return [*args, "-m", f"{provider}/{model}"] if model else args

    def _config(self, home: Path, provider: str, purpose: str) -> dict[str, Any]:
        s = self.settings
        options: dict[str, Any] = {}
        if s.base_url:
            url = s.base_url.rstrip("/")
            # Its Anthropic provider wants the /v1 that the Anthropic SDK adds by itself.
            if provider == "anthropic" and not url.endswith("/v1"):
                url += "/v1"
            options["baseURL"] = url
        key = self.key_or_login(home)
        if key:
            options["apiKey"] = key
        config: dict[str, Any] = {
            "autoupdate": False,
            "share": "disabled",
            "provider": {provider: {"options": options}},
        }
        if purpose == "chat":
            prompt = f"{{file:{home / SYSTEM_FILE}}}"
            config["agent"] = {
                CHAT_AGENT: {"mode": "primary", "prompt": prompt, "tools": {"*": False}}
            }
        else:
            allowed = {"edit": "allow", "bash": "allow", "webfetch": "deny"}
            config["permission"] = {**allowed, "external_directory": "deny"}
        return config

    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        error = next((e.get("error") for e in events if e.get("type") == "error"), None)
        if isinstance(error, dict):
            data = error.get("data") or {}
            text = data.get("message") or error.get("name") or "error"
            return self.failed(str(text), data.get("statusCode"))
        if not any(e.get("type") == "step_finish" for e in events):
            return self.no_result("finished step", result)
        return None

    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        """The text of the last step that said something, and the tokens of every step."""
        tokens = {"input": 0, "output": 0}
        cost = 0.0
        reason = "stop"
        texts: dict[str, list[str]] = {}
        for event in events:
            part = event.get("part") or {}
            if event.get("type") == "text" and isinstance(part.get("text"), str):
                texts.setdefault(str(part.get("messageID", "")), []).append(part["text"])
            if event.get("type") == "step_finish":
                used = part.get("tokens") or {}
                cache = used.get("cache") or {}
                for value, name in ((used.get("input"), "input"), (cache.get("read"), "cache.read"),
                                    (cache.get("write"), "cache.write")):  # fmt: skip
                    amount = reported_amount(value, f"tokens.{name}", "OpenCode")
                    tokens["input"] += int(amount or 0)
                output = reported_amount(used.get("output"), "tokens.output", "OpenCode")
                tokens["output"] += int(output or 0)
                cost += float(reported_amount(part.get("cost"), "cost", "OpenCode") or 0.0)
                reason = _FINISH.get(str(part.get("reason")), "stop")
        return Completion(
            text="".join(list(texts.values())[-1]) if texts else "",
            usage=Usage(
                input_tokens=tokens["input"], output_tokens=tokens["output"], cost_usd=cost
            ),
            finish_reason=reason,
            latency_s=latency_s,
            model=self.settings.model or "opencode-default",
        )


__all__ = ["OpenCodeBackend"]
