"""Codex (`codex exec`) as a backend, version 0.169.0 (shared AGENT-CLIS.md).

Chat use: one `codex exec --json` call in a read-only sandbox, approvals never asked,
session not persisted; the role's system messages replace Codex's coding persona
(`model_instructions_file`). The answer is the last `agent_message` item, usage the
`turn.completed` counts (priced by the config's price table: the CLI reports no cost).

A `base_url` becomes our own model provider with the Responses wire API and the CLI's
retries off (ours is the only retry loop). With no base_url and a key, the same provider
points at api.openai.com; with no key, the user's `codex login` is lent to the call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.models.agents.cli import AgentBackend
from core.models.agents.confinement import codex_confinement_args, toml_string
from core.models.agents.failure import FailureWords
from core.models.agents.login import ConfigFolder, Login
from core.models.agents.process import ProcessResult
from core.models.agents.workspace import Placement
from core.models.types import (
    AgentTask,
    BadRequestError,
    Completion,
    ModelError,
    Usage,
    reported_amount,
)

PROVIDER = "skillopt"
KEY_VARIABLE = "SKILLOPT_CODEX_API_KEY"
OPENAI_URL = "https://api.openai.com/v1"
_LIMIT = re.compile(r"usage limit|hit your .*limit", re.I)
_AUTH = re.compile(r"\b(401|403)\b|unauthori[sz]ed|invalid api key|not logged in|login", re.I)


class CodexBackend(AgentBackend):
    name, title, command = "codex", "Codex", "codex exec"
    key_variable = "OPENAI_API_KEY"
    session_field = ("thread_id", "thread.started")
    trailing_args = ("-",)  # the prompt: stdin
    unconfined = "codex's sandbox bounded its writes to the workspace, not its reads"
    config_folder = ConfigFolder("CODEX_HOME", (".codex",))
    login = Login("auth.json", "`codex login`", key="an OpenAI key")
    failure_words = FailureWords(_LIMIT, _AUTH)

    def chat_args(self, system_file: Path) -> list[str]:
        return ["-s", "read-only", "-c", f"model_instructions_file={toml_string(str(system_file))}"]

    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        """Codex has no per-tool list: its sandbox bounds the agent's writes to the
        workspace (`workspace-write`, approvals never asked), bypassed only if the user says
        so; a task confined to its workspace gets a profile that bounds reads too."""
        if self.settings.allowed_tools is not None:
            raise BadRequestError(
                f"{self.setting}.allowed_tools does not apply to codex (its sandbox, "
                "workspace-write, bounds what the agent may do); remove it"
            )
        if task.workspace_only:
            return [*codex_confinement_args(task, self.settings.binary), *placement.args]
        if self.settings.bypass_permissions:
            return ["--dangerously-bypass-approvals-and-sandbox", *placement.args]
        return ["-s", "workspace-write", *placement.args]

    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        # Codex links its sandbox helper under CODEX_HOME only when that is outside the
        # temporary directory (a confined run needs the helper to read AGENTS.md): the
        # private home's TMPDIR (base_environment) is a folder of its own.
        s = self.settings
        args = ["exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        args += ["-c", 'approval_policy="never"']
        if s.model:
            args += ["-m", s.model]
        key = self.key_or_login(home)
        if key is None:
            return args  # the lent login
        env[KEY_VARIABLE] = key
        provider = (
            f'{{name="{PROVIDER}",base_url={toml_string(s.base_url or OPENAI_URL)},'
            f'env_key="{KEY_VARIABLE}",wire_api="responses",'
            "request_max_retries=0,stream_max_retries=0}"
        )
        return [
            *args,
            "-c",
            f"model_provider={PROVIDER}",
            "-c",
            f"model_providers.{PROVIDER}={provider}",
        ]

    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        if any(e.get("type") == "turn.completed" for e in events):
            return None  # notices on the way (e.g. unknown model metadata) do not fail a turn
        text = failure_text(events)
        # 429, "at capacity", 5xx, a stream cut short: worth another try (TransientError).
        return self.failed(text, None) if text else self.no_result("completed turn", result)

    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        usage: dict[str, Any] = {}
        for event in events:
            if event.get("type") == "turn.completed":
                usage = event.get("usage") or {}

        def tokens(key: str) -> int:
            return int(reported_amount(usage.get(key), f"usage.{key}", "Codex") or 0)

        return Completion(
            text=final_message(events),
            usage=Usage(input_tokens=tokens("input_tokens"), output_tokens=tokens("output_tokens")),
            finish_reason="stop",
            latency_s=latency_s,
            model=self.settings.model or "codex-default",
        )


def failure_text(events: list[dict[str, Any]]) -> str:
    """The message of a failed turn (or of the last error event), on one line."""
    for event in reversed(events):
        if event.get("type") == "turn.failed":
            return " ".join(str((event.get("error") or {}).get("message", "")).split())
        if event.get("type") == "error":
            return " ".join(str(event.get("message", "")).split())
    return ""


def final_message(events: list[dict[str, Any]]) -> str:
    for event in reversed(events):
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            return str(item.get("text") or "")
    return ""


__all__ = ["CodexBackend"]
