"""The one shape of a coding-agent CLI backend. What every CLI shares lives here: how a
role reaches its model (settings resolved by the factory), how chat messages become one
prompt, the call itself (a private home, the argv, the process, its JSON event stream, the
session record, the failure's typed error), the role's key or the user's lent login, and
agent use (a fresh workspace with the skill placed, the run, the diff, the task's check).

An agent module (claude_code, codex, pi, opencode, copilot) subclasses `AgentBackend` and
states only what differs: its names, its flags (`launch`, `chat_args`, `tool_args`), its
event names (`session_field`, `failure`, `read_completion`), its login and failure words.
Where it puts the skill is the workspace's table of placements.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.models.agents.confinement import refuse_bypass, refuse_unconfined
from core.models.agents.failure import FailureWords, agent_failure
from core.models.agents.login import ConfigFolder, Login, lend_login
from core.models.agents.process import (
    ProcessResult,
    base_environment,
    private_home,
    record_session,
    run_process,
)
from core.models.agents.workspace import (
    Placement,
    fresh_workspace,
    place_skill,
    pristine_tree,
    resolve_placement,
    workspace_diff,
)
from core.models.anthropic_backend import split_system
from core.models.openai_backend import OPENAI_SETTINGS
from core.models.types import (
    AgentOutcome,
    AgentTask,
    AuthError,
    BadRequestError,
    Completion,
    ModelError,
    Request,
    TransientError,
)

JSON_ONLY = "Reply with one JSON object only, no prose and no code fence."
# Chat use replaces the agent's coding persona: a role asked for text gets text.
CHAT_SYSTEM = "Answer the user's message directly and completely, as text."


@dataclass(frozen=True)
class AgentSettings:
    """One role's resolved CLI settings (config keys of the same names)."""

    binary: Path
    model: str  # "" = the CLI's own default model
    base_url: str | None = None
    api_key: str | None = None  # the value (never logged); None = the CLI's own login
    credential: str = ""  # where the key came from, for messages
    max_turns: int | None = None
    extra_args: tuple[str, ...] = ()
    skill_placement: str = "auto"
    allowed_tools: tuple[str, ...] | None = None
    bypass_permissions: bool = False
    keep_workspace: bool = False
    timeout_s: float = 60.0  # the process deadline (the client waits a little longer)
    environ: Mapping[str, str] = field(default_factory=dict)  # the user's env (for logins)


def chat_prompt(request: Request) -> tuple[str, str]:
    """(system text, prompt) for one non-interactive call. One user turn is sent as is;
    a longer conversation is written out turn by turn."""
    unknown = set(request.settings) - OPENAI_SETTINGS
    if unknown:
        raise BadRequestError(f"unknown model setting(s): {', '.join(sorted(unknown))}")
    system, turns = split_system(request.messages)
    if request.settings.get("response_format"):
        system = f"{system}\n\n{JSON_ONLY}" if system else JSON_ONLY
    if not turns:
        raise BadRequestError("a coding-agent call needs at least one user message")
    if len(turns) == 1 and turns[0]["role"] == "user":
        return system, content_text(turns[0]["content"])
    lines = ["The conversation so far (answer as the assistant, to the last user turn):"]
    for turn in turns:
        lines.append(f"\n[{turn['role']}]\n{content_text(turn['content'])}")
    return system, "\n".join(lines)


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p.get("text", "")) for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if p)
    return json.dumps(content)


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """One JSON object per line; lines that are not JSON objects are skipped."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def tail(text: str, limit: int = 300) -> str:
    """The last meaningful part of a CLI's output, on one line."""
    return " ".join(text.split())[-limit:]


@dataclass(frozen=True)
class Invocation:
    """One finished CLI process: its JSON events, exit status, duration and session id."""

    events: list[dict[str, Any]]
    returncode: int
    duration_s: float
    session_id: str


SYSTEM_FILE = "system-prompt.md"  # chat use: the role's system text, in the private home


class AgentBackend(ABC):
    """One coding-agent CLI as a backend: chat use (`send`) and agent use (`run_agent`)
    over one call (`invoke`). A subclass gives the class attributes and the methods marked
    abstract; the rest is the same for every CLI."""

    name = ""  # the backend's config name (models.<role>.backend)
    title = ""  # how messages name the agent ("Claude Code")
    command = ""  # how messages name one call ("claude -p")
    key_variable = ""  # where the key is looked for by default, for messages
    session_field: tuple[str, str | None] = ("session_id", None)  # (key, event type)
    trailing_args: tuple[str, ...] = ()  # after the extra args (codex's "-": stdin)
    system_in_prompt = False  # a CLI that cannot replace its persona gets it in the prompt
    priced_by_name = False  # its cost is a price list's guess: none for a custom server
    sandbox = True  # it can keep a workspace-only task inside its workspace
    unconfined = "no sandbox was asked for: the agent could read and change anything you can"
    config_folder: ConfigFolder  # where it keeps config, login and sessions
    login: Login | None = None  # the user's own login, lent when the role has no key
    failure_words = FailureWords()

    def __init__(self, settings: AgentSettings, *, setting: str = "models.target"):
        self.settings = settings
        self.setting = setting  # config prefix, for messages

    # ---------------------------------------------------------------- what a CLI states
    @abstractmethod
    def chat_args(self, system_file: Path) -> list[str]:
        """Chat use: the flags for no tools (or read-only) and the system text's file."""

    @abstractmethod
    def tool_args(self, placement: Placement, task: AgentTask) -> list[str]:
        """Agent use: the tools and permissions, and the placement's own arguments."""

    @abstractmethod
    def launch(self, env: dict[str, str], home: Path, purpose: str) -> list[str]:
        """The arguments after the binary (before the call's own); sets up `env` and the
        private `home` (config files, the key or a lent login)."""

    @abstractmethod
    def failure(self, events: list[dict[str, Any]], result: ProcessResult) -> ModelError | None:
        """The error a finished process reports, if it failed."""

    @abstractmethod
    def read_completion(self, events: list[dict[str, Any]], latency_s: float) -> Completion:
        """The answer, its usage and its finish reason, from the events."""

    def extra_events(self, home: Path) -> list[dict[str, Any]]:
        """What the call left in its home besides its events (read before it goes)."""
        return []

    # ---------------------------------------------------------------- the same for all
    @property
    def credential(self) -> str:
        return self.settings.credential or self.key_variable

    def failed(self, text: str, status: int | None, *, limit_reported: bool = False) -> ModelError:
        login = self.login.how if self.login else ""
        return agent_failure(
            self.title, text, status, self.credential, self.failure_words,
            login=login, limit_reported=limit_reported,
        )  # fmt: skip

    def no_result(self, what: str, result: ProcessResult) -> TransientError:
        return TransientError(
            f"{self.command} gave no {what} (exit {result.returncode}): "
            f"{tail(result.stderr or result.stdout) or 'no output'}"
        )

    @classmethod
    def user_login(cls, environ: Mapping[str, str] | None) -> Path | None:
        """The user's own credentials file for this CLI (None: it has no login to lend)."""
        return cls.config_folder.user(environ) / cls.login.file if cls.login else None

    def key_or_login(self, home: Path) -> str | None:
        """The key to send: the role's own, or a placeholder for a custom server (some CLIs
        refuse to start with no credential at all; the server gets no key of the user's).
        None when the role has neither: the user's login is lent into the private `home`."""
        s = self.settings
        if s.api_key or s.base_url:
            return s.api_key or "not-needed"
        login = self.login
        assert login is not None, f"{self.name} has no login to lend"
        lent = self.config_folder.private(home) / login.file
        if not lend_login(self.config_folder.user(s.environ) / login.file, lent):
            raise AuthError(
                f"{self.setting} uses {self.name} with no API key and {self.title} is not "
                f"logged in; run {login.how}, or set {self.setting}.api_key_env to the "
                f"variable holding {login.key}"
            )
        return None

    def session_id(self, events: list[dict[str, Any]]) -> str:
        key, kind = self.session_field
        found = (e.get(key) for e in events if kind is None or e.get("type") == kind)
        return str(next((v for v in found if v), ""))

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
        """Run the CLI once in `cwd` with a private `home`, the prompt on stdin (argv is too
        small for an optimizer prompt). Raises the typed error for a failed call."""
        s = self.settings
        env = base_environment(home)
        self.config_folder.make_private(home, env)
        head = self.launch(env, home, purpose)
        result = await run_process(
            [str(s.binary), *head, *args, *s.extra_args, *self.trailing_args],
            cwd=cwd, env=env, timeout_s=timeout_s, what=self.command, stdin=prompt,
        )  # fmt: skip
        events = parse_events(result.stdout)
        session = self.session_id(events)
        record_session(self.name, session, cwd, purpose=purpose)
        error = self.failure(events, result)
        if error is not None:
            raise error
        events += self.extra_events(home)
        return Invocation(events, result.returncode, result.duration_s, session)

    def completion(self, invocation: Invocation) -> Completion:
        done = self.read_completion(invocation.events, invocation.duration_s)
        if self.priced_by_name and self.settings.base_url:
            done = replace(done, usage=replace(done.usage, cost_usd=None))
        return done

    def agent_args(self, placement: Placement, task: AgentTask) -> list[str]:
        if not self.sandbox:
            refuse_unconfined(task, self.name, self.setting)
        refuse_bypass(task, self.settings.bypass_permissions, self.setting)
        return self.tool_args(placement, task)

    def unconfined_note(self) -> str:
        """What a run outside a sandbox could reach, for the trajectory."""
        if not self.sandbox:
            return f"{self.name} has no sandbox: the agent could read and change anything you can"
        return self.unconfined

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        """Chat use: one call in an empty work folder of a private home, the role's system
        text (or ours) in a file (or leading the prompt, for a CLI that keeps its persona)."""
        system, prompt = chat_prompt(request)
        if self.system_in_prompt and system:
            prompt = f"Follow these instructions:\n{system}\n\n{prompt}"
        with private_home(self.name) as home:
            system_file = home / SYSTEM_FILE
            system_file.write_text(system or CHAT_SYSTEM, encoding="utf-8")
            workdir = home / "work"
            workdir.mkdir()
            run = await self.invoke(
                prompt,
                args=self.chat_args(system_file),
                cwd=workdir,
                home=home,
                timeout_s=min(timeout_s, self.settings.timeout_s),
                purpose="chat",
            )
        return self.completion(run)

    async def run_agent(self, task: AgentTask, skill_text: str, *, timeout_s: float):
        return await run_agent_task(self, task, skill_text, timeout_s=timeout_s)

    async def aclose(self) -> None:
        return None


async def run_agent_task(
    cli: AgentBackend, task: AgentTask, skill_text: str, *, timeout_s: float
) -> AgentOutcome:
    """Agent use: a fresh workspace with the skill placed, one agent run, the diff, then
    the task's check in the same workspace; the workspace goes unless kept."""
    s = cli.settings
    placement_kind = resolve_placement(cli.name, s.skill_placement, setting=cli.setting)
    with (
        pristine_tree(task.files, task.commit) as original,
        fresh_workspace(original.root, keep=s.keep_workspace) as workspace,
    ):
        with private_home(cli.name) as home:
            placement = place_skill(workspace, placement_kind, task.skill_name, skill_text)
            run = await cli.invoke(
                task.prompt,
                args=cli.agent_args(placement, task),
                cwd=workspace,
                home=home,
                timeout_s=min(timeout_s, s.timeout_s),
                purpose="agent",
            )
        completion = cli.completion(run)
        diff = workspace_diff(original.root, workspace, placement)
        # The check runs commands (tests, greps): off the event loop.
        checked = await asyncio.to_thread(task.check, workspace)
    return AgentOutcome(
        text=completion.text,
        events=run.events,
        diff=diff,
        exit_status=run.returncode,
        usage=completion.usage,
        latency_s=completion.latency_s,
        model=completion.model,
        session_id=run.session_id,
        check=checked,
        finish_reason=completion.finish_reason,
        workspace=str(workspace) if s.keep_workspace else None,
        unconfined="" if task.workspace_only else cli.unconfined_note(),
        left_out=original.left_out,
    )
