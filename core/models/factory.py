"""Build a `ModelClient` from the config: resolve each role's backend, credentials,
model name and sampling settings.

Resolution of `backend: auto` (in order): a `base_url` set → the OpenAI-compatible
backend; `OPENAI_API_KEY` set → openai; `ANTHROPIC_API_KEY` set → anthropic; otherwise the
embedded local demonstration model, with a notice saying so.

Default model names when `model` is null: openai → `gpt-4.1-mini`, anthropic →
`claude-sonnet-4-5`; the embedded model is always `smollm2`. Azure and custom `base_url`
servers need an explicit `model` (the deployment / served model name).

A custom `base_url` (openai or anthropic backend) only receives the key named by
`api_key_env`, never `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` implicitly: a third-party
server must not get the user's key by accident.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from core.config import AGENT_BACKENDS, ROLES, Config, RoleConfig
from core.models import structured
from core.models.agents.claude_code import ClaudeCodeBackend
from core.models.agents.cli import AgentSettings
from core.models.agents.codex import CodexBackend
from core.models.agents.copilot import CopilotBackend
from core.models.agents.opencode import OpenCodeBackend
from core.models.agents.pi import PiBackend
from core.models.agents.process import find_binary
from core.models.anthropic_backend import AnthropicBackend
from core.models.client import ModelClient, NoticeCallback, RoleRuntime, UsageCallback
from core.models.handoff import HANDOFF_MODEL, HandoffBackend
from core.models.ledger import UsageLedger
from core.models.local_server import CACHE_IDENTITY, LOCAL_MODEL_NAME, LocalBackend
from core.models.openai_backend import OpenAIBackend
from core.models.response_cache import ResponseCache
from core.models.retry import RetryPolicy, Sleep
from core.models.scripted import SCRIPTED_MODEL, ScriptedBackend, ScriptedResponder
from core.models.streaming import STREAMING_KINDS
from core.models.transport_errors import public_url
from core.models.types import AuthError, BadRequestError, ModelError
from core.secrets import Secrets

DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}
EMBEDDED_NOTICE = (
    "using the embedded SmolLM2-135M demonstration model; real optimization wants an API "
    "model (set OPENAI_API_KEY or ANTHROPIC_API_KEY, or point models.<role>.base_url at an "
    "OpenAI-compatible server)"
)
# Backends whose API takes `reasoning_effort` (the OpenAI chat-completions parameter).
REASONING_EFFORT_BACKENDS = ("openai", "azure")
_ZERO_PRICE = {"input_per_mtok": 0.0, "output_per_mtok": 0.0}
# Seconds the client waits beyond a coding-agent call's timeout_s, so the process deadline
# (which kills the agent's process group and says so) fires before the client's own.
AGENT_KILL_SLACK_S = 5.0
HANDOFF_CONCURRENCY = 10_000
EMBEDDED_SERVER = "embedded"  # the pool key of the embedded server's slots


def default_cache_path(config: Config) -> Path:
    return Path(config.cache.path or Path(config.run.runs_dir) / ".cache" / "responses.sqlite")


def build_model_client(
    config: Config,
    *,
    scripted: Mapping[str, ScriptedResponder] | None = None,
    cache_path: str | Path | None = None,
    on_usage: UsageCallback | None = None,
    on_notice: NoticeCallback | None = None,
    environ: Mapping[str, str] | None = None,
    retry_sleep: Sleep | None = None,
) -> ModelClient:
    """`scripted[role]` makes that role use the scripted TEST DOUBLE whatever its config
    says. `environ` replaces os.environ for key lookup and `retry_sleep` the retry policy's
    sleep (both for tests). Configuration problems of a role surface on its first call."""
    secrets = Secrets(config.models.env_file, dict(environ) if environ is not None else None)
    scripted = {**named_responders(config), **(scripted or {})}
    roles = {
        role: _resolve_role(role, config, secrets, scripted.get(role), retry_sleep)
        for role in ROLES
    }
    notices = [EMBEDDED_NOTICE] if any(rt.kind == "local" for rt in roles.values()) else []
    if notices:
        notices += subscription_notices(config, environ)

    prices: dict[str, object] = {
        LOCAL_MODEL_NAME: _ZERO_PRICE,
        SCRIPTED_MODEL: _ZERO_PRICE,
        HANDOFF_MODEL: _ZERO_PRICE,
    }
    # A scripted TEST DOUBLE costs nothing whatever its model is called.
    prices.update({rt.model: _ZERO_PRICE for rt in roles.values() if rt.kind == "scripted"})
    prices.update(config.models.prices)
    ledger = UsageLedger(
        prices,
        cap_tokens=config.budget.max_tokens,
        cap_cost_usd=config.budget.max_cost_usd,
        cap_calls=config.budget.max_calls,
    )
    cache = None
    if config.cache.enabled:
        cache = ResponseCache(cache_path if cache_path is not None else default_cache_path(config))
    return ModelClient(
        roles,
        ledger=ledger,
        cache=cache,
        notices=notices,
        on_usage=on_usage,
        on_notice=on_notice,
    )


def named_responders(config: Config) -> dict[str, ScriptedResponder]:
    """Scripted roles whose `model` is `package.module:factory`: the factory builds the
    responder (a TEST DOUBLE hook, so subprocess tests can run `skillopt train`
    deterministically). Roles naming the same factory share one responder."""
    built: dict[str, ScriptedResponder] = {}
    out: dict[str, ScriptedResponder] = {}
    for role in ROLES:
        rc = config.models.role(role)
        if rc.backend != "scripted" or not rc.model or ":" not in rc.model:
            continue
        if rc.model not in built:
            module_name, _, attr = rc.model.partition(":")
            try:
                built[rc.model] = getattr(importlib.import_module(module_name), attr)()
            except (ImportError, AttributeError) as exc:
                raise BadRequestError(
                    f"models.{role}.model {rc.model!r}: cannot load the scripted responder ({exc})"
                ) from None
        out[role] = built[rc.model]
    return out


def subscription_notices(config: Config, environ: Mapping[str, str] | None) -> list[str]:
    """`auto` never spends a subscription: a logged-in coding-agent CLI is only named, with
    the setting that would use it, for the roles that fell back to the embedded model."""
    env = dict(environ) if environ is not None else None
    auto_roles = [r for r in ROLES if config.models.role(r).backend == "auto"]
    if not auto_roles:
        return []
    found = []
    logins = (
        ("claude_code", "claude", ClaudeCodeBackend.user_login(env)),
        ("codex", "codex", CodexBackend.user_login(env)),
    )
    for backend, program, login in logins:
        try:
            find_binary(program, None, setting="")
        except ModelError:
            continue
        if login is not None and login.is_file():
            found.append(
                f"a logged-in `{program}` was found but is not used: set "
                f"models.<role>.backend: {backend} to spend its subscription"
            )
    return found


def resolve_backend_name(rc: RoleConfig, secrets: Secrets) -> str:
    if rc.backend != "auto":
        return rc.backend
    if rc.base_url:
        return "openai"
    if secrets.has("OPENAI_API_KEY"):
        return "openai"
    if secrets.has("ANTHROPIC_API_KEY"):
        return "anthropic"
    return "local"


def _resolve_role(
    role: str,
    config: Config,
    secrets: Secrets,
    responder: ScriptedResponder | None,
    retry_sleep: Sleep | None,
) -> RoleRuntime:
    rc = config.models.role(role)  # type: ignore[arg-type]
    kind = "scripted" if responder is not None else resolve_backend_name(rc, secrets)
    settings: dict[str, object] = {"max_tokens": rc.max_tokens}
    for key in ("temperature", "top_p", "seed", "stop", "reasoning_effort"):
        value = getattr(rc, key)
        if value is not None:
            settings[key] = list(value) if isinstance(value, list) else value
    retry = RetryPolicy(max_retries=rc.max_retries)
    if retry_sleep is not None:
        retry.sleep = retry_sleep
    rt = RoleRuntime(
        role=role,
        kind=kind,
        model=rc.model or "",
        backend=None,
        settings=settings,
        timeout_s=rc.timeout_s,
        stream=rc.stream if kind in STREAMING_KINDS else "never",
        retry=retry,
        cache=rc.cache,
        concurrency=rc.concurrency,
    )
    where = f"models.{role}"
    try:
        if rc.reasoning_effort is not None and kind not in REASONING_EFFORT_BACKENDS:
            raise BadRequestError(
                f"{where}.reasoning_effort is set but the {kind} backend does not take it; "
                f"remove it or use one of: {', '.join(REASONING_EFFORT_BACKENDS)}"
            )
        structured_refusal = structured.refusal(rc.structured, kind)
        if structured_refusal is not None:
            raise BadRequestError(f"{where}.structured {structured_refusal}")
        if rc.stream == "always" and kind not in STREAMING_KINDS:
            raise BadRequestError(
                f"{where}.stream is always but the {kind} backend does not stream; set it "
                f"to auto or never, or use one of: {', '.join(sorted(STREAMING_KINDS))}"
            )
        if kind == "scripted":
            _scripted(rt, rc, responder, where)
        elif kind == "local":
            _local(rt, config)
        elif kind == "handoff":
            _handoff(rt, config, where)
        elif kind == "anthropic":
            _anthropic(rt, rc, secrets, where)
        elif kind == "azure":
            _azure(rt, rc, secrets, where)
        elif kind in AGENT_BACKENDS:
            _agent_cli(rt, rc, secrets, where)
        else:
            _openai(rt, rc, secrets, where)
    except ModelError as exc:
        rt.error = exc
    if not rt.label:
        rt.label = f"{rt.kind}:{rt.model or '?'}"
    rt.structured = structured.sent_mode(rc.structured, kind, custom_server=bool(rc.base_url))
    return rt


def _scripted(rt: RoleRuntime, rc: RoleConfig, responder: ScriptedResponder | None, where: str):
    rt.model = rc.model or SCRIPTED_MODEL
    rt.endpoint = "scripted"
    # The test double's answers come from code that changes between runs: never cache them.
    rt.cache = False
    if responder is None:
        raise BadRequestError(
            f"{where}.backend is scripted (a test double) but no scripted responder was given"
        )
    rt.backend = ScriptedBackend(responder)


def _local(rt: RoleRuntime, config: Config) -> None:
    rt.model = LOCAL_MODEL_NAME
    rt.endpoint = CACHE_IDENTITY
    rt.label = f"local:{LOCAL_MODEL_NAME}"
    # No stop sequence, as published sends none: its harnesses ask the target to reason step
    # by step before the tagged answer, which a newline stop cut at the first line (the
    # `newline_stop` overlay keeps that for one-line Q/A prompts such as the demo's).
    # Greedy unless a config sets one: with the published `temperature: null` llama.cpp
    # would sample at its own 0.8, and the demo's measured lift assumes greedy answers.
    rt.settings.setdefault("temperature", 0.0)
    rt.accepts_images = False  # SmolLM2-135M reads text only
    # One server per process: every role on it takes from its slots (core/models/slots.py).
    rt.server, rt.server_slots = EMBEDDED_SERVER, config.models.local.parallel
    rt.backend = LocalBackend(config.models.local)


def _handoff(rt: RoleRuntime, config: Config, where: str) -> None:
    rt.model = HANDOFF_MODEL
    rt.endpoint = "handoff"
    rt.label = "handoff (prompt files)"
    # A missing answer is not worth retrying: the engine stops, the person answers.
    rt.retry = RetryPolicy(max_retries=0, sleep=rt.retry.sleep)
    # The answer files are this backend's cache: a rejected answer fixed in its file must
    # be read again, never replayed from responses.sqlite.
    rt.cache = False
    # Nothing to rate-limit: every call of a phase writes its prompt before the run waits.
    rt.concurrency = HANDOFF_CONCURRENCY
    if not config.models.handoff_dir:
        raise BadRequestError(f"{where}.backend is handoff but models.handoff_dir is not set")
    rt.backend = HandoffBackend(Path(config.models.handoff_dir).expanduser(), role=rt.role)


def _openai(rt: RoleRuntime, rc: RoleConfig, secrets: Secrets, where: str) -> None:
    if rc.base_url:
        rt.model = rc.model or ""
        rt.endpoint = public_url(rc.base_url)
        rt.label = f"openai:{rt.model or '?'}@{_host(rt.endpoint)}"
        rt.server = f"{rt.model}@{rt.endpoint}"  # a self-hosted server's slots are shared
        if not rc.model:
            raise BadRequestError(f"{where}.model must name the model served at {rt.endpoint}")
        key, credential = _custom_server_key(rc, secrets, where)
        rt.backend = OpenAIBackend(
            api_key=key,
            credential=credential,
            base_url=rc.base_url,
            base_url_setting=f"{where}.base_url",
        )
        return
    rt.model = rc.model or DEFAULT_MODELS["openai"]
    rt.endpoint = "api.openai.com"
    var = rc.api_key_env or "OPENAI_API_KEY"
    key = _required_key(secrets, var, where, "openai")
    rt.backend = OpenAIBackend(api_key=key, credential=var, base_url_setting=f"{where}.base_url")


def _required_key(secrets: Secrets, var: str, where: str, backend: str) -> str:
    key = secrets.get(var)
    if key is None:
        raise AuthError(
            f"{where} uses the {backend} backend but {var} is not set in {secrets.where()}"
        )
    return key


def _azure(rt: RoleRuntime, rc: RoleConfig, secrets: Secrets, where: str) -> None:
    rt.model = rc.model or ""
    if not rc.base_url:
        raise BadRequestError(
            f"{where}.base_url must be the Azure OpenAI endpoint (https://<resource>.openai.azure.com)"
        )
    rt.endpoint = public_url(rc.base_url)
    if not rc.model:
        raise BadRequestError(f"{where}.model must name the Azure OpenAI deployment")
    if not rc.api_version:
        raise BadRequestError(f"{where}.api_version must be set for Azure OpenAI (e.g. 2024-10-21)")
    var = rc.api_key_env or "AZURE_OPENAI_API_KEY"
    key = _required_key(secrets, var, where, "azure")
    rt.backend = OpenAIBackend(
        name="azure",
        api_key=key,
        credential=var,
        base_url=rc.base_url,
        azure_api_version=rc.api_version,
        base_url_setting=f"{where}.base_url",
    )


def _anthropic(rt: RoleRuntime, rc: RoleConfig, secrets: Secrets, where: str) -> None:
    rt.model = rc.model or DEFAULT_MODELS["anthropic"]
    rt.accepts_images = False  # the backend does not translate OpenAI image parts yet
    setting = f"{where}.base_url"
    if rc.base_url:
        rt.endpoint = public_url(rc.base_url)
        key, credential = _custom_server_key(rc, secrets, where)
        rt.backend = AnthropicBackend(
            api_key=key, credential=credential, base_url=rc.base_url, base_url_setting=setting
        )
        return
    rt.endpoint = "api.anthropic.com"
    var = rc.api_key_env or "ANTHROPIC_API_KEY"
    key = _required_key(secrets, var, where, "anthropic")
    rt.backend = AnthropicBackend(api_key=key, credential=var, base_url_setting=setting)


# backend → (program, the key variable used when none is configured, its class)
AGENT_CLIS = {
    "claude_code": ("claude", "ANTHROPIC_API_KEY", ClaudeCodeBackend),
    "codex": ("codex", "OPENAI_API_KEY", CodexBackend),
    "pi": ("pi", "ANTHROPIC_API_KEY", PiBackend),
    "opencode": ("opencode", "ANTHROPIC_API_KEY", OpenCodeBackend),
    "copilot": ("copilot", "", CopilotBackend),
}


def _agent_cli(rt: RoleRuntime, rc: RoleConfig, secrets: Secrets, where: str) -> None:
    """A coding-agent CLI: the binary, the key (or the CLI's own login) and the server."""
    program, default_key, backend_class = AGENT_CLIS[rt.kind]
    rt.model = rc.model or ""
    rt.label = f"{rt.kind}:{rt.model or 'default'}"
    rt.endpoint = public_url(rc.base_url) if rc.base_url else rt.kind
    rt.timeout_s = rc.timeout_s + AGENT_KILL_SLACK_S
    binary = find_binary(program, rc.binary, setting=f"{where}.binary")
    if rc.base_url:
        key, credential = _custom_server_key(rc, secrets, where)
    elif rc.api_key_env:
        key, credential = _required_key(secrets, rc.api_key_env, where, rt.kind), rc.api_key_env
    else:
        credential = default_key
        key = secrets.get(credential) if credential else None  # None: the CLI's own login
    settings = AgentSettings(
        binary=binary,
        model=rt.model,
        base_url=rc.base_url,
        api_key=key,
        credential=credential,
        max_turns=rc.max_turns,
        extra_args=tuple(rc.extra_args),
        skill_placement=rc.skill_placement,
        allowed_tools=tuple(rc.allowed_tools) if rc.allowed_tools is not None else None,
        bypass_permissions=rc.bypass_permissions,
        keep_workspace=rc.keep_workspace,
        timeout_s=rc.timeout_s,
        environ=secrets.environ(),
    )
    # What changes an agent's outcome beyond model and settings (rollout cache key).
    rt.identity = {
        "skill_placement": rc.skill_placement,
        "allowed_tools": rc.allowed_tools,
        "bypass_permissions": rc.bypass_permissions,
        "max_turns": rc.max_turns,
        "extra_args": rc.extra_args,
    }
    rt.backend = backend_class(settings, setting=where)


def _custom_server_key(rc: RoleConfig, secrets: Secrets, where: str) -> tuple[str | None, str]:
    """(key, where it came from) for a server at a custom base_url: only the variable
    `api_key_env` names, or no key at all."""
    if not rc.api_key_env:
        return None, f"{where}.api_key_env (unset, so no key was sent)"
    key = secrets.get(rc.api_key_env)
    if key is None:
        raise AuthError(
            f"{where}.api_key_env names {rc.api_key_env}, which is not set in {secrets.where()}"
        )
    return key, rc.api_key_env


def _host(endpoint: str) -> str:
    """host[:port] of a public URL, for labels."""
    return endpoint.partition("://")[2].split("/", 1)[0] or endpoint
