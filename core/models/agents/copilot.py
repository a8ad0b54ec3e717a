"""GitHub Copilot CLI (`copilot -p`, JSON output), version 1.0.102 (shared AGENT-CLIS.md),
as a backend.

With `models.<role>.base_url` it runs offline with your own key (`COPILOT_OFFLINE`,
`COPILOT_PROVIDER_*`: no GitHub login, no telemetry); without one it uses GitHub's Copilot
service with the token in COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN.
`models.<role>.model` is "provider/id" or a bare id (provider type anthropic; "openai/…"
for OpenAI-compatible servers). Each call has a private COPILOT_HOME, so its session store
is never the user's. Usage comes from `--usage-output-file`; a failed call is a
`session.error` event and a non-zero exit.

Chat use: Copilot keeps its own persona (it has no flag to replace it), the role's system
text leads the prompt, no tool is offered and AGENTS.md is not read. Agent use:
every tool allowed without asking (what non-interactive mode needs), file tools held to the
workspace by Copilot's own path checks; its shell is not sandboxed, so a task that must
stay inside its workspace is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.models.agents.cli import AgentBackend
from core.models.agents.failure import split_model
from core.models.agents.login import ConfigFolder
from core.models.agents.process import ProcessResult
from core.models.agents.workspace import Placement
from core.models.types import AgentTask, AuthError, Completion, ModelError, Usage, reported_amount

TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
USAGE_FILE = "usage.json"
USAGE_EVENT = "skillopt.usage"  # the usage file's content, kept with the events


class CopilotBackend(AgentBackend):
    name, title, command = "copilot", "Copilot", "copilot -p"
    key_variable = "COPILOT_PROVIDER_API_KEY"
    session_field = ("sessionId", "result")
    system_in_prompt = True
    sandbox = False
    config_folder = ConfigFolder("COPILOT_HOME", (".copilot",))

    def chat_args(self, system_file: Path) -> list[str]:
        # An allow-list naming no tool leaves the model none (1.0.102).
        return ["--available-tools=none", "--no-custom-instructions"]

    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        tools = self.settings.allowed_tools
        allow = [f"--allow-tool={t}" for t in tools] if tools else ["--allow-all-tools"]
        return [*allow, "--disallow-temp-dir", *placement.args]

    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        env["COPILOT_AUTO_UPDATE"] = "false"
        self._provider(env)
        args = ["--output-format", "json", "--no-ask-user", "--no-auto-update", "--no-remote"]
        args += ["--disable-builtin-mcps", "--usage-output-file", str(home / USAGE_FILE)]
        # Non-interactive mode needs it; chat use offers no tool (chat_args).
        return [*args, "--allow-all-tools"] if purpose == "chat" else args

    def _provider(self, env: dict[str, str]) -> None:
        s = self.settings
        provider, model = split_model(s.model)
        if model:
            env["COPILOT_MODEL"] = model
        if s.base_url:
            env.update(
                COPILOT_OFFLINE="true",
                COPILOT_PROVIDER_TYPE=provider,
                COPILOT_PROVIDER_BASE_URL=s.base_url,
                COPILOT_PROVIDER_API_KEY=s.api_key or "not-needed",
            )
            return
        token = s.api_key or next((s.environ[v] for v in TOKEN_VARIABLES if s.environ.get(v)), None)
        if not token:
            raise AuthError(
                f"{self.setting} uses copilot with neither a base_url (your own key) nor a "
                f"GitHub token; set {self.setting}.base_url and api_key_env, or "
                "COPILOT_GITHUB_TOKEN"
            )
        env["COPILOT_GITHUB_TOKEN"] = token

    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        error = next((e.get("data") for e in events if e.get("type") == "session.error"), None)
        if isinstance(error, dict):
            return self.failed(str(error.get("message") or "error"), error.get("statusCode"))
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if final is None or final.get("exitCode") not in (0, None):
            return self.no_result("successful result", result)
        return None

    def extra_events(self, home: Path) -> list[dict[str, Any]]:
        try:
            usage = json.loads((home / USAGE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            usage = {}
        return [{"type": USAGE_EVENT, "usage": usage if isinstance(usage, dict) else {}}]

    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        """The last non-empty assistant message; tokens summed over the models used."""
        text = ""
        for event in events:
            data = event.get("data") or {}
            if event.get("type") == "assistant.message" and str(data.get("content") or "").strip():
                text = str(data["content"])
        usage = next((e["usage"] for e in events if e.get("type") == USAGE_EVENT), {})
        tokens = {"input": 0, "output": 0}
        for metrics in (usage.get("modelMetrics") or {}).values():
            counts = (metrics or {}).get("usage") or {}
            for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"):
                side = "output" if key == "outputTokens" else "input"
                tokens[side] += int(reported_amount(counts.get(key), key, "Copilot") or 0)
        return Completion(
            text=text,
            usage=Usage(input_tokens=tokens["input"], output_tokens=tokens["output"]),
            finish_reason="stop",
            latency_s=latency_s,
            model=self.settings.model or str(usage.get("currentModel") or "copilot-default"),
        )


__all__ = ["CopilotBackend"]
