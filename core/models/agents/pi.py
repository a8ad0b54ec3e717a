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
from pathlib import Path
from typing import Any

from core.models.agents.cli import AgentBackend
from core.models.agents.failure import KEY_VARIABLES, split_model
from core.models.agents.login import ConfigFolder, Login
from core.models.agents.process import ProcessResult
from core.models.agents.workspace import Placement
from core.models.types import AgentTask, Completion, ModelError, Usage, reported_amount

AGENT_TOOLS = ("read", "bash", "edit", "write")
_FINISH = {"stop": "stop", "length": "length", "toolUse": "stop", "aborted": "stop"}


class PiBackend(AgentBackend):
    name, title, command = "pi", "pi", "pi -p"
    session_field = ("id", "session")
    priced_by_name = True
    sandbox = False
    config_folder = ConfigFolder("PI_CODING_AGENT_DIR", (".pi", "agent"))
    login = Login("auth.json", "`pi` and /login")

    @property
    def key_variable(self) -> str:  # type: ignore[override]
        return KEY_VARIABLES.get(split_model(self.settings.model)[0], "")

    def chat_args(self, system_file: Path) -> list[str]:
        return [
            "--system-prompt", str(system_file), "--no-tools", "--no-context-files",
            "--no-skills",
        ]  # fmt: skip

    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        tools = self.settings.allowed_tools or AGENT_TOOLS
        args = ["--tools", ",".join(tools)]
        if placement.files and not placement.files[0].endswith("AGENTS.md"):
            args.append("--no-context-files")  # the skill is in a skill folder only
        return [*args, *placement.args]

    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        s = self.settings
        provider, model = split_model(s.model)
        env.update(PI_OFFLINE="1", PI_TELEMETRY="0")
        if s.base_url:
            models = {"providers": {provider: {"baseUrl": s.base_url}}}
            (self.config_folder.private(home) / "models.json").write_text(
                json.dumps(models), encoding="utf-8"
            )
        key = self.key_or_login(home)
        if key and provider in KEY_VARIABLES:
            env[KEY_VARIABLES[provider]] = key
        args = ["-p", "--mode", "json", "--no-session", "--offline", "--no-extensions"]
        args += ["--no-prompt-templates", "--no-themes", "--provider", provider]
        return [*args, "--model", model] if model else args

    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        if not any(e.get("type") == "agent_end" for e in events):
            return self.no_result("result", result)
        messages = _assistant_messages(events)
        if messages and messages[-1].get("stopReason") == "error":
            return self.failed(messages[-1].get("errorMessage") or "the model call failed", None)
        return None

    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        messages = _assistant_messages(events)
        tokens = {"input": 0, "output": 0}
        cost = 0.0
        for message in messages:
            usage = message.get("usage") or {}
            for key in ("input", "cacheRead", "cacheWrite"):
                tokens["input"] += int(reported_amount(usage.get(key), f"usage.{key}", "pi") or 0)
            output = reported_amount(usage.get("output"), "usage.output", "pi")
            tokens["output"] += int(output or 0)
            total = (usage.get("cost") or {}).get("total")
            cost += float(reported_amount(total, "usage.cost.total", "pi") or 0.0)
        last = messages[-1] if messages else {}
        return Completion(
            text=_text(last),
            usage=Usage(
                input_tokens=tokens["input"], output_tokens=tokens["output"], cost_usd=cost
            ),
            finish_reason=_FINISH.get(str(last.get("stopReason")), "stop"),
            latency_s=latency_s,
            model=self.settings.model or str(last.get("model") or "pi-default"),
        )


def _assistant_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        message = event.get("message")
        ended = event.get("type") == "message_end" and isinstance(message, dict)
        if ended and message.get("role") == "assistant":
            out.append(message)
    return out


def _text(message: dict[str, Any]) -> str:
    parts = message.get("content") or []
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


__all__ = ["PiBackend"]
