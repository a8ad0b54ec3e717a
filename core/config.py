"""Typed run configuration: YAML files with `_base_` inheritance plus `--set` overrides.

Every default lives in `configs/_base_/default.yaml` *and* in the models below; the YAML
is what users read, the models are what the engine trusts. Unknown keys, wrong types and
unknown enum values are errors that name the key, the file that set it and what is allowed:
a typo in a config must never silently fall back to a default.
"""

from __future__ import annotations

import copy
import difflib
import re
import typing
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core.errors import UserError
from core.net_address import shown, split_url
from core.ray_address import parse_ray_address
from core.strict_model import StrictModel as _Strict
from core.train_config import GateConfig as GateConfig
from core.train_config import MetaSkillConfig as MetaSkillConfig
from core.train_config import OptimizerMethodConfig as OptimizerMethodConfig
from core.train_config import ScheduleConfig as ScheduleConfig
from core.train_config import SlowUpdateConfig as SlowUpdateConfig
from core.train_config import TrainConfig
from core.yaml_strict import DuplicateKey, safe_load_unique

BASE_KEY = "_base_"
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

BackendName = Literal[
    "auto", "openai", "azure", "anthropic", "local", "scripted", "handoff",
    "claude_code", "codex", "pi", "opencode", "copilot",
]  # fmt: skip
# Coding-agent CLIs (`claude -p`, `codex exec`, `pi -p`, `opencode run`, `copilot -p`)
# driven as backends: each call is a process.
AGENT_BACKENDS = ("claude_code", "codex", "pi", "opencode", "copilot")
# Where the skill goes for an agent run: `auto` = where the agent reads a deployed skill
# (Claude Code: .claude/skills/<name>/SKILL.md; the others: AGENTS.md).
SkillPlacement = Literal[
    "auto", "claude_skill", "claude_md", "append_system_prompt", "agents_md", "codex_skill",
    "agents_skill", "pi_skill", "opencode_skill", "copilot_skill",
]  # fmt: skip
Role = Literal["target", "optimizer", "judge", "miner"]
ROLES: tuple[Role, ...] = ("target", "optimizer", "judge", "miner")


class ConfigError(UserError):
    """A configuration problem: names the key, the file that set it and what is allowed."""


class RoleConfig(_Strict):
    """One model role. `backend: auto` means: an API backend if its key is set, else local."""

    backend: BackendName = "auto"
    """Who answers this role's calls. auto = openai if OPENAI_API_KEY is set, else anthropic
    if ANTHROPIC_API_KEY is set, else the embedded demonstration model; handoff = prompt
    files a person or agent answers; claude_code, codex, pi, opencode, copilot = the coding
    agent's CLI."""
    model: str | None = None
    """Model name sent to the backend; null = the backend's default model."""
    base_url: str | None = None
    """An OpenAI-compatible (or Anthropic) server to call instead of the official endpoint
    (vLLM, Ollama, llama.cpp: http://127.0.0.1:8000/v1). The only way to change an
    endpoint."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    api_version: str | None = None
    """Azure OpenAI only: the API version."""
    temperature: float | None = 0.0
    """Sampling temperature; null = not sent (reasoning models accept only their default)."""
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None
    """Sent to the backends that take it (openai, azure); an error elsewhere. null = not
    sent."""
    max_tokens: int = Field(default=512, ge=1)
    """Completion tokens a call may use (the optimizer's is a floor: the llm strategy sizes
    each call from its prompt)."""
    top_p: float | None = None
    """Nucleus sampling; null = not sent."""
    seed: int | None = None
    """Sampling seed sent to backends that take one; null = not sent."""
    stop: list[str] | None = None
    """Stop sequences; null = none."""
    concurrency: int = Field(default=4, ge=1)
    """Calls in flight at once; null = 4 for API backends, 2 for the coding-agent CLIs (each
    call is a process). Roles on one server (the embedded model, or one base_url and model)
    also share its slots: the embedded server's local.parallel, else the largest of their
    concurrencies."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Unstreamed: the deadline of a whole call. Streamed: the longest wait for the stream to
    start or for its next chunk."""
    stream: Literal["auto", "always", "never"] = "auto"
    """auto = stream calls allowed 2048+ output tokens (openai, azure, anthropic backends);
    always = an error on other backends; never."""
    max_retries: int = Field(default=4, ge=0)
    """Retries of a failed call (429, 5xx, timeouts, dropped streams), with backoff."""
    cache: bool = True
    """Use the response cache for this role's calls."""
    structured: Literal["auto", "schema", "json", "off"] = "auto"
    """What is sent of a reply's JSON schema (optimizer, judge and miner replies): auto =
    the schema where the backend is known to honour it, else nothing; schema; json (JSON
    mode); off."""
    binary: str | None = None
    """Coding-agent CLIs only: path or name of the binary; null = PATH, then .tools/agents/."""
    max_turns: int | None = Field(default=None, ge=1)
    """Coding-agent CLIs, agent use: most turns per item (chat use is one turn)."""
    extra_args: list[str] = []
    """Coding-agent CLIs only: appended to the CLI's arguments as given."""
    skill_placement: SkillPlacement = "auto"
    """Where an agent run finds the skill: auto = where the agent reads a deployed skill
    (Claude Code: .claude/skills/<name>/SKILL.md; the others: AGENTS.md)."""
    allowed_tools: list[str] | None = None
    """Agent use: the tools the agent may use without asking; null = the backend's list for
    editing a workspace."""
    bypass_permissions: bool = False
    """Agent use: bypass every permission check of the CLI (only when set here)."""
    keep_workspace: bool = False
    """Keep each item's temporary workspace for debugging."""

    @model_validator(mode="before")
    @classmethod
    def _backend_concurrency(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("concurrency") is None:
            agent = data.get("backend") in AGENT_BACKENDS
            data = {**data, "concurrency": 2 if agent else 4}
        return data

    @field_validator("api_key_env")
    @classmethod
    def _check_api_key_env(cls, name: str | None) -> str | None:
        """A key pasted here instead of a variable's name would be written to config.yaml
        and shown in messages: refuse it, and never repeat the value."""
        if name is None or _VARIABLE_NAME.fullmatch(name):
            return name
        raise ValueError(
            "must be the name of an environment variable (a variable name such as "
            "OPENAI_API_KEY), not the key itself; put the key in that variable"
        )

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, url: str | None) -> str | None:
        """Catch a bad server address here, with a clear message, rather than as a
        transport error mid-run; and keep credentials out of it, since the resolved config
        is written to every run directory."""
        if url is None:
            return url
        try:
            parts, _ = split_url(url)
        except ValueError as exc:
            raise ValueError(f"{shown(url)} is not a usable URL ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{shown(url)} is not an http(s) URL like http://127.0.0.1:8000/v1")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError(
                "must not carry credentials, a query string or a fragment; put the key in an "
                "environment variable and name it with api_key_env"
            )
        return url


class Price(_Strict):
    """A model's list price, USD per million tokens."""

    input_per_mtok: float = Field(ge=0)
    """USD per million input tokens."""
    output_per_mtok: float = Field(ge=0)
    """USD per million output tokens."""


# List prices of the default models (core.models.factory.DEFAULT_MODELS), USD per million
# tokens, checked 2026-12-01 (mirrored in configs/_base_/default.yaml). A config's own
# `models.prices` entries add to these or replace them.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4.1-mini": Price(input_per_mtok=0.40, output_per_mtok=1.60),
    "claude-sonnet-4-5": Price(input_per_mtok=3.00, output_per_mtok=15.00),
}


class LocalModelConfig(_Strict):
    """The embedded llama.cpp server (EMBEDDED.md)."""

    parallel: int = Field(default=4, ge=1)
    """Requests the embedded server answers at once (its slots)."""
    ctx_per_slot: int = Field(default=4096, ge=256)
    """Context window of each slot, in tokens."""
    threads: int | None = Field(default=None, ge=1)
    """CPU threads; null = the cores idle when the server starts (at least 1; all of them
    on a quiet machine). On cores busy with other work, fewer is faster: the
    threads wait for each other at every token (2 cores at load 7.6: 128 tokens in 113.5 s
    with 2 threads, 5.1 s with 1). These threads write the reply, a token at a time."""
    batch_threads: int | None = Field(default=None, ge=1)
    """CPU threads that read a prompt (llama.cpp's batch threads); null = the cores idle
    when the server starts, as `threads`. Kept
    apart from `threads` because reading a prompt is one large job per 512 tokens, not a
    wait at every token: with `threads: 1`, a 1,058-token prompt was read at 105 tokens/s
    with 2 batch threads against 57 with 1 (2 quiet cores; 44 against 38 beside 3 busy
    processes). The optimizer's long prompts (bench/critical_path.py: 4,300 tokens for a
    step's analysts, 4,700 for the slow update) are most of a small-model run's critical
    path."""


# Where a role's defaults differ from RoleConfig's. The target's are the published
# method's (16,384 completion tokens, no temperature sent: docs/how-it-works/fidelity.md), so a long
# reasoning answer is not cut at a cap of ours. The optimizer and miner write analyses
# and JSON edit lists: longer outputs, slower calls. Applied whether or not the user's
# file mentions the role, so a partial `optimizer:` section keeps these defaults.
ROLE_DEFAULTS: dict[str, dict[str, Any]] = {
    "target": {"max_tokens": 16_384, "temperature": None},
    # No reply schema, as published sends none (structured_optimizer: the schema again).
    "optimizer": {"max_tokens": 2048, "timeout_s": 120.0, "structured": "off"},
    "miner": {"max_tokens": 2048},
}


class ModelsConfig(_Strict):
    """The model roles (target, optimizer, judge, miner), the embedded model and prices."""

    target: RoleConfig = RoleConfig(**ROLE_DEFAULTS["target"])
    """The model that runs tasks with the skill in its prompt."""
    optimizer: RoleConfig = RoleConfig(**ROLE_DEFAULTS["optimizer"])
    """The model that reflects on scored trajectories and proposes edits."""
    judge: RoleConfig = RoleConfig()
    """The model that grades replies against a rubric (Sleep, rubric-scored environments)."""
    miner: RoleConfig = RoleConfig(**ROLE_DEFAULTS["miner"])
    """The model that mines tasks from agent transcripts (Sleep)."""
    local: LocalModelConfig = LocalModelConfig()
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    """Price table keyed by model name: {input_per_mtok, output_per_mtok}, USD per million
    tokens. Entries add to or replace the shipped prices of the default models."""
    env_file: str | None = None
    """Optional .env file holding API keys (values are never copied anywhere)."""
    handoff_dir: str | None = None
    """Folder of prompt/answer files for roles with `backend: handoff`."""

    @model_validator(mode="before")
    @classmethod
    def _role_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for role, defaults in ROLE_DEFAULTS.items():
                if isinstance(data.get(role), dict):
                    data = {**data, role: {**defaults, **data[role]}}
        return data

    def role(self, name: Role) -> RoleConfig:
        return getattr(self, name)


class BudgetConfig(_Strict):
    """Caps on what a run may spend; a capped run stops cleanly at a step boundary (exit 3)
    and resumes when re-run with a higher cap."""

    max_tokens: int | None = Field(default=None, ge=0)
    """Most input + output tokens; null = no cap."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """Most USD, priced by models.prices; null = no cap."""
    max_calls: int | None = Field(default=None, ge=0)
    """Most model calls sent (agent runs included; cache hits are free); null = no cap."""


class CacheConfig(_Strict):
    """The response cache: a paid call is never repeated by a resume or a rerun."""

    path: str | None = None
    """The SQLite file; null = `<runs_dir>/.cache/responses.sqlite`."""
    enabled: bool = True
    """Use the response cache at all."""


class EnvConfig(_Strict):
    """The task environment (`skillopt envs` lists them)."""

    name: str = "capitals"
    """The environment's name."""
    manifest_dir: str | None = None
    """The split manifests; null = manifests/<name>."""
    data_dir: str | None = None
    """The materialised data; null = the environment's own default."""
    options: dict[str, Any] = {}
    """Environment-specific options, validated by the environment."""


class RayConfig(_Strict):
    """The Ray cluster of `run.executor: ray`."""

    address: str | None = None
    """The Ray cluster the run's work goes to: null starts a local Ray for the run (stopped
    when it ends); 'auto' joins the cluster this machine is part of; ray://host:10001
    connects through the Ray client; host:6379 joins a head's GCS."""

    @field_validator("address")
    @classmethod
    def _check_address(cls, address: str | None) -> str | None:
        if address is not None:
            parse_ray_address(address)
        return address


def switch_word(value: Any) -> Any:
    """YAML reads a bare `off` / `on` as a boolean: the word it was, for a setting whose
    words include them (run.batch, sleep.batch)."""
    return {False: "off", True: "on"}.get(value, value) if isinstance(value, bool) else value


class RunConfig(_Strict):
    """Naming and seeding of the run."""

    name: str | None = None
    """Run id = run directory name under runs_dir; null = <env>-<timestamp>."""
    seed: int = 0
    """The run seed: shuffles, seeded samples and the response-cache key."""
    runs_dir: str = "runs"
    """Parent folder of run directories."""
    executor: Literal["local", "ray"] = "local"
    """Where rollouts run: local = in this process (models.target.concurrency slots); ray =
    as Ray tasks on run.ray.address (needs the `ray` extra). The run directory, caches,
    ledger and budget stay with this process either way."""
    ray: RayConfig = RayConfig()
    """The Ray cluster, when run.executor is ray."""
    batch: Literal["auto", "on", "off"] = "off"
    """The provider batch APIs for the calls that can wait (the baseline val, the initial
    skill's test, the final tests), at half the price: auto = when the target is OpenAI's or
    Anthropic's own API; on = also a base_url server that speaks the batch API; off = every
    call interactive. Off by default: a batch may take up to 24 hours, which would stretch
    a run that takes minutes today."""
    batch_poll_s: float = Field(default=30.0, gt=0)
    """Seconds between the first looks at a pending batch (then doubling, up to 10 min)."""

    _batch_word = field_validator("batch", mode="before")(lambda value: switch_word(value))


class Config(_Strict):
    """A whole run configuration (configs/_base_/default.yaml holds every default)."""

    run: RunConfig = RunConfig()
    env: EnvConfig = EnvConfig()
    models: ModelsConfig = ModelsConfig()
    budget: BudgetConfig = BudgetConfig()
    cache: CacheConfig = CacheConfig()
    train: TrainConfig = TrainConfig()

    def to_public_dict(self) -> dict[str, Any]:
        """The resolved config as written to a run directory. It holds no secrets by
        construction (keys are referenced by variable name only)."""
        return self.model_dump(mode="json")


# --------------------------------------------------------------------------- loading


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the config as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = safe_load_unique(text)
    except DuplicateKey as exc:
        raise ConfigError(f"{path}: {exc.problem}; keep one of them") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}:{where.strip() or ''} malformed YAML: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config must be a mapping, got {type(data).__name__}")
    return data


def _merge(
    base: dict[str, Any], over: dict[str, Any], origin: dict[str, str], source: str, prefix=""
) -> dict[str, Any]:
    """Deep-merge `over` into a copy of `base`, recording which file set each leaf. An
    empty mapping merges nothing: `train: {}` (a section whose keys were all commented
    out) keeps the inherited section rather than wiping it."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, origin, source, dotted + ".")
        else:
            out[key] = copy.deepcopy(value)
            origin[dotted] = source
            if isinstance(value, dict):
                for leaf in _leaves(value, dotted + "."):
                    origin[leaf] = source
    return out


def _leaves(d: dict[str, Any], prefix: str) -> list[str]:
    keys = []
    for k, v in d.items():
        keys.append(prefix + str(k))
        if isinstance(v, dict):
            keys.extend(_leaves(v, prefix + str(k) + "."))
    return keys


def _load_tree(path: Path, origin: dict[str, str], seen: tuple[Path, ...]) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        chain = " -> ".join(str(p) for p in (*seen, path))
        raise ConfigError(f"{path}: _base_ inheritance loops: {chain}")
    data = _read_yaml(path)
    bases = data.pop(BASE_KEY, [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not all(isinstance(b, str) for b in bases):
        raise ConfigError(f"{path}: _base_ must be a file name or a list of file names")
    merged: dict[str, Any] = {}
    for base in bases:
        base_path = (path.parent / base).resolve()
        merged = _merge(merged, _load_tree(base_path, origin, (*seen, path)), {}, "")
    # Re-record origins: bases first, then this file wins.
    return _merge(merged, data, origin, str(path))


def parse_override(text: str) -> tuple[str, Any]:
    """`section.key=value`, the value parsed as a YAML scalar (so `8` is an int)."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {text!r}: expected section.key=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key, value


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {part!r} is not a section")
        node = child
    node[parts[-1]] = value


def _describe_error(err: dict[str, Any], origin: dict[str, str]) -> str:
    loc = [str(p) for p in err.get("loc", ()) if not str(p).startswith("function-")]
    dotted = ".".join(loc)
    source = _find_origin(dotted, origin)
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        msg = f"unknown key {dotted!r}"
        parent = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        allowed = _allowed_keys(parent)
        hint = _did_you_mean(dotted, allowed)
        if hint:
            msg += f"; did you mean {hint}?"
        if allowed:
            msg += f" (allowed: {', '.join(allowed)})"
    elif kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        msg = f"{dotted}: {err.get('input')!r} is not allowed (allowed: {expected})"
    elif kind == "value_error":
        # Our own validators: their message says it all, and the input may hold a secret.
        msg = f"{dotted}: {err.get('msg', 'invalid value').removeprefix('Value error, ')}"
    else:
        msg = f"{dotted}: {err.get('msg', 'invalid value')} (got {err.get('input')!r})"
    if source.startswith("--set ") and msg.startswith(dotted):
        return f"--set {msg}"  # the override already names the key
    return f"{source}: {msg}" if source else msg


def _find_origin(dotted: str, origin: dict[str, str]) -> str:
    key = dotted
    while key:
        if key in origin:
            return origin[key]
        key = key.rsplit(".", 1)[0] if "." in key else ""
    return ""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The section model a field holds (also through `X | None`)."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _all_keys(model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """Every dotted key of the config, sections first-level first."""
    out = []
    for name, field in (model or Config).model_fields.items():
        out.append(prefix + name)
        inner = _model_of(field.annotation)
        if inner is not None:
            out.extend(_all_keys(inner, f"{prefix}{name}."))
    return out


def _did_you_mean(dotted: str, siblings: list[str]) -> str:
    """The key meant, for an unknown one: the same name at another level of the config
    (`models.optimizer.handoff_dir` -> `models.handoff_dir`), else a near spelling among
    its siblings. Empty when nothing is close."""
    parent, _, name = dotted.rpartition(".")
    elsewhere = [k for k in _all_keys() if k.rpartition(".")[2] == name and k != dotted]
    if elsewhere:
        return " or ".join(repr(k) for k in elsewhere[:3])
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.75)
    return repr(f"{parent}.{close[0]}" if parent else close[0]) if close else ""


def _allowed_keys(dotted_parent: str) -> list[str]:
    model: type[BaseModel] = Config
    for part in [p for p in dotted_parent.split(".") if p]:
        field = model.model_fields.get(part)
        ann = field.annotation if field else None
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
        else:
            return []
    return sorted(model.model_fields)


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """Load a config file (with its bases) and apply `--set` overrides, or raise
    ConfigError with a one-line message."""
    origin: dict[str, str] = {}
    tree = _load_tree(Path(path), origin, ()) if path is not None else {}
    for text in overrides or []:
        key, value = parse_override(text)
        _set_dotted(tree, key, value)
        origin[key] = f"--set {key}"
    return config_from_dict(tree, origin)


def config_from_dict(tree: dict[str, Any], origin: dict[str, str] | None = None) -> Config:
    try:
        return Config.model_validate(tree)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = len(exc.errors()) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise ConfigError(_describe_error(first, origin or {}) + suffix) from None
