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

from core.models.agents.cli import (
    AgentBackend,
    Invocation,
    chat_prompt,
    parse_events,
    tail,
)
from core.models.agents.confinement import refuse_bypass, refuse_unconfined
from core.models.agents.failure import agent_failure, split_model
from core.models.agents.process import (
    base_environment,
    private_home,
    record_session,
    run_process,
)
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

TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
USAGE_FILE = "usage.json"


class CopilotBackend(AgentBackend):
    name = "copilot"

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        system, prompt = chat_prompt(request)
        if system:
            prompt = f"Follow these instructions:\n{system}\n\n{prompt}"
        with private_home(self.name) as home:
            workdir = home / "work"
            workdir.mkdir()
            run = await self.invoke(
                prompt,
                # An allow-list naming no tool leaves the model none (1.0.102).
                args=["--available-tools=none", "--no-custom-instructions"],
                cwd=workdir,
                home=home,
                timeout_s=min(timeout_s, self.settings.timeout_s),
                purpose="chat",
            )
        return self.completion(run)

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        refuse_unconfined(task, "copilot", self.setting)
        refuse_bypass(task, self.settings.bypass_permissions, self.setting)
        tools = self.settings.allowed_tools
        allow = [f"--allow-tool={t}" for t in tools] if tools else ["--allow-all-tools"]
        return [*allow, "--disallow-temp-dir", *placement.args]

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
        usage_file = home / USAGE_FILE
        argv = [str(s.binary), "--output-format", "json", "--no-ask-user", "--no-auto-update"]
        argv += ["--no-remote", "--disable-builtin-mcps", "--usage-output-file", str(usage_file)]
        if purpose == "chat":
            argv.append("--allow-all-tools")  # non-interactive mode needs it; none offered
        env = base_environment(home)
        env.update(COPILOT_HOME=str(home / ".copilot"), COPILOT_AUTO_UPDATE="false")
        self._provider(env)
        result = await run_process(
            [*argv, *args, *s.extra_args], cwd=cwd, env=env, timeout_s=timeout_s,
            what="copilot -p", stdin=prompt,
        )  # fmt: skip
        events = parse_events(result.stdout)
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        session = str((final or {}).get("sessionId") or "")
        record_session("copilot", session, cwd, purpose=purpose)
        error = next((e.get("data") for e in events if e.get("type") == "session.error"), None)
        credential = s.credential or "COPILOT_PROVIDER_API_KEY"
        if isinstance(error, dict):
            status = error.get("statusCode") if isinstance(error.get("statusCode"), int) else None
            raise agent_failure("Copilot", str(error.get("message") or "error"), status, credential)
        if final is None or final.get("exitCode") not in (0, None):
            raise TransientError(
                f"copilot -p gave no successful result (exit {result.returncode}): "
                f"{tail(result.stderr or result.stdout) or 'no output'}"
            )
        usage = _read_usage(usage_file)
        return Invocation([*events, {"type": "skillopt.usage", "usage": usage}],
                          result.returncode, result.duration_s, session)  # fmt: skip

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

    def completion(self, invocation: Invocation) -> Completion:
        return to_completion(invocation.events, self.settings.model, invocation.duration_s)


def _read_usage(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def to_completion(events: list[dict[str, Any]], model: str, latency_s: float) -> Completion:
    """The last non-empty assistant message; tokens summed over the models used."""
    text = ""
    for event in events:
        data = event.get("data") or {}
        if event.get("type") == "assistant.message" and str(data.get("content") or "").strip():
            text = str(data["content"])
    usage = next((e["usage"] for e in events if e.get("type") == "skillopt.usage"), {})
    tokens = {"input": 0, "output": 0}
    for metrics in (usage.get("modelMetrics") or {}).values():
        counts = (metrics or {}).get("usage") or {}
        for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens"):
            tokens["input"] += int(reported_amount(counts.get(key), key, "Copilot") or 0)
        tokens["output"] += int(
            reported_amount(counts.get("outputTokens"), "outputTokens", "Copilot") or 0
        )
    return Completion(
        text=text,
        usage=Usage(input_tokens=tokens["input"], output_tokens=tokens["output"]),
        finish_reason="stop",
        latency_s=latency_s,
        model=model or str(usage.get("currentModel") or "copilot-default"),
    )


__all__ = ["CopilotBackend"]
