"""Codex (`codex exec`) as a backend, version 0.169.0 (shared AGENT-CLIS.md).

Chat use (`send`): one `codex exec --json` call in a read-only sandbox, approvals never
asked, session not persisted; the role's system messages replace Codex's coding persona
(`model_instructions_file`); the prompt goes in on stdin. The answer is the last
`agent_message` item, usage the `turn.completed` counts (priced by the config's price
table: the CLI reports no cost).

A `base_url` becomes our own model provider with the Responses wire API and the CLI's
retries off (ours is the only retry loop). With no base_url and a key, the same provider
points at api.openai.com; with no key, the user's `codex login` is lent to the call.
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
from core.models.agents.confinement import codex_confinement_args, refuse_bypass, toml_string
from core.models.agents.process import base_environment, record_session, run_process
from core.models.agents.workspace import Placement
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

PROVIDER = "skillopt"
KEY_VARIABLE = "SKILLOPT_CODEX_API_KEY"
OPENAI_URL = "https://api.openai.com/v1"
AUTH_FILE = "auth.json"
_LIMIT = re.compile(r"usage limit|hit your .*limit", re.I)
_AUTH = re.compile(r"\b(401|403)\b|unauthori[sz]ed|invalid api key|not logged in|login", re.I)
_BAD_REQUEST = re.compile(r"\b(400|404)\b|not found|invalid request", re.I)


class CodexBackend(AgentBackend):
    name = "codex"

    # ------------------------------------------------------------------ chat use
    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        return await run_chat(
            self,
            request,
            timeout_s=timeout_s,
            system_args=lambda f: [
                "-s",
                "read-only",
                "-c",
                f"model_instructions_file={toml_string(str(f))}",
            ],  # fmt: skip
        )

    # ------------------------------------------------------------------ agent use

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        """Codex has no per-tool list: its sandbox bounds the agent's writes to the
        workspace (`workspace-write`, approvals never asked), bypassed only if the user says
        so; a task confined to its workspace gets a profile that bounds reads too."""
        if self.settings.allowed_tools is not None:
            raise BadRequestError(
                f"{self.setting}.allowed_tools does not apply to codex (its sandbox, "
                "workspace-write, bounds what the agent may do); remove it"
            )
        refuse_bypass(task, self.settings.bypass_permissions, self.setting)
        if task.workspace_only:
            return [*codex_confinement_args(task, self.settings.binary), *placement.args]
        if self.settings.bypass_permissions:
            return ["--dangerously-bypass-approvals-and-sandbox", *placement.args]
        return ["-s", "workspace-write", *placement.args]

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
        """Run `codex exec` once in `cwd` with a private `home`. Raises the typed error
        for a failed turn."""
        s = self.settings
        argv = [str(s.binary), "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
        argv += ["-c", 'approval_policy="never"']
        if s.model:
            argv += ["-m", s.model]
        env = base_environment(home)
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        env["CODEX_HOME"] = str(codex_home)
        # Codex links its sandbox helper under CODEX_HOME only when that is outside the
        # temporary directory (a confined run needs the helper to read AGENTS.md).
        (home / "tmp").mkdir(exist_ok=True)
        env["TMPDIR"] = str(home / "tmp")
        argv += self._provider_args(env, codex_home)
        argv += [*args, *s.extra_args, "-"]
        result = await run_process(
            argv, cwd=cwd, env=env, timeout_s=timeout_s, what="codex exec", stdin=prompt
        )
        events = parse_events(result.stdout)
        thread = next((e.get("thread_id") for e in events if e.get("type") == "thread.started"), "")
        record_session("codex", str(thread or ""), cwd, purpose=purpose)
        check_events(events, result.returncode, result.stderr, s.credential or "OPENAI_API_KEY")
        return Invocation(events, result.returncode, result.duration_s, str(thread or ""))

    def completion(self, invocation: Invocation) -> Completion:
        return to_completion(invocation.events, self.settings.model, invocation.duration_s)

    def _provider_args(self, env: dict[str, str], codex_home: Path) -> list[str]:
        s = self.settings
        if s.base_url or s.api_key:
            env[KEY_VARIABLE] = s.api_key or "not-needed"
            provider = (
                f'{{name="{PROVIDER}",base_url={toml_string(s.base_url or OPENAI_URL)},'
                f'env_key="{KEY_VARIABLE}",wire_api="responses",'
                "request_max_retries=0,stream_max_retries=0}"
            )
            return [
                "-c",
                f"model_provider={PROVIDER}",
                "-c",
                f"model_providers.{PROVIDER}={provider}",
            ]
        if not lend_login(user_codex_home(s.environ) / AUTH_FILE, codex_home / AUTH_FILE):
            raise AuthError(
                f"{self.setting} uses codex with no API key and Codex is not logged in; run "
                f"`codex login`, or set {self.setting}.api_key_env to the variable holding "
                "an OpenAI key"
            )
        return []


def user_codex_home(environ: Any) -> Path:
    env = environ or os.environ
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".codex"


def failure_text(events: list[dict[str, Any]]) -> str:
    """The message of a failed turn (or of the last error event), on one line."""
    for event in reversed(events):
        if event.get("type") == "turn.failed":
            return " ".join(str((event.get("error") or {}).get("message", "")).split())
        if event.get("type") == "error":
            return " ".join(str(event.get("message", "")).split())
    return ""


def check_events(events: list[dict[str, Any]], returncode: int, stderr: str, credential: str):
    """Raise the typed error for a `codex exec` run that did not complete its turn."""
    if any(e.get("type") == "turn.completed" for e in events):
        return  # notices on the way (e.g. unknown model metadata) do not fail a turn
    text = failure_text(events)[:300]
    if not text:
        raise TransientError(
            f"codex exec gave no completed turn (exit {returncode}): {tail(stderr) or 'no output'}"
        )
    if _LIMIT.search(text):
        raise UsageLimitReached(
            f"Codex usage limit reached ({text}); the run is resumable: rerun the same "
            "command once the limit has reset"
        )
    if _AUTH.search(text):
        raise AuthError(
            f"Codex could not authenticate ({text}); check the key in {credential}, or "
            "log in with `codex login`"
        )
    if _BAD_REQUEST.search(text) and "429" not in text:
        raise BadRequestError(f"Codex: {text}; check the model name and base_url")
    # 429, "at capacity", 5xx, a stream cut short: worth another try.
    raise TransientError(f"Codex failed: {text}")


def final_message(events: list[dict[str, Any]]) -> str:
    for event in reversed(events):
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            return str(item.get("text") or "")
    return ""


def to_completion(events: list[dict[str, Any]], model: str, latency_s: float) -> Completion:
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
        model=model or "codex-default",
    )


__all__ = ["CodexBackend"]
