"""What the published-benchmark environments share: options with typed defaults, splits read
from a materialised data directory against the published manifest, and the two shapes of a
rollout result (scored, or zero because the model kept failing).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from core.environment.contract import EnvError, RolloutResult, Score, TaskItem, WorkerNeeds
from core.models.types import Completion, Message
from envs.split_data import default_data_dir, load_split_rows


class SplitDirEnvironment:
    """Base of an environment whose data is `<data_dir>/{train,val,test}/items.json`.

    Subclasses set `name`, `version`, `source_hint` (what `--source` must be, for the
    missing-data message), `OPTIONS` (option -> default; a value's type is the option's
    type) and implement `to_item`, `rollout` and `score`.

    `target_kind` "agent" (given by the registry when the catalog lists an agent target and
    the target backend is a coding-agent CLI) makes `rollout` receive an `AgentFn`; the
    version then names the kind, so chat and agent rollouts never share a cache entry."""

    name: ClassVar[str]
    version: ClassVar[str]

    def analyst_guide(self, kind: str) -> str:
        """The environment's categories for the `kind` analysts: prompts/analyst_<kind>.md
        beside the subclass's module, or "" when it has none
        (core.environment.contract.analyst_guide)."""
        module = sys.modules[type(self).__module__].__file__ or ""
        path = Path(module).parent / "prompts" / f"analyst_{kind}.md"
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    source_hint: ClassVar[str]
    OPTIONS: ClassVar[dict[str, Any]] = {}
    CHOICES: ClassVar[dict[str, tuple[Any, ...]]] = {}  # option -> allowed values
    # True: a rollout reads files under the data folder (game files, workbooks), so a Ray
    # worker must see that folder at the same path (see `worker_needs`).
    READS_DATA_ON_WORKERS: ClassVar[bool] = False

    def __init__(
        self,
        manifest_dir: Path,
        data_dir: Path | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        target_kind: str = "chat",
    ):
        self.manifest_dir = Path(manifest_dir)
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir(self.name)
        self.options = self.validate_options(options or {})
        if target_kind not in ("chat", "agent"):
            raise EnvError(f"{self.name}: unknown target kind {target_kind!r}; use chat or agent")
        self.target_kind = target_kind
        if target_kind != "chat":
            self.version = f"{type(self).version}+{target_kind}"

    @property
    def worker_needs(self) -> WorkerNeeds:
        """On a Ray worker (run.executor: ray): the data folder, when rollouts read it
        (shipped to a worker that lacks it; items name their files by paths under it).
        Packages (an environment's extra: openpyxl, the ALFWorld player) are installed on
        the workers beforehand, not shipped: Ray's pip runtime_env builds a virtualenv per
        job on every node (it needs `virtualenv` there and the network; measured: the
        spreadsheetbench worker test took 366 s with it, 114 s without)."""
        return WorkerNeeds(files=(str(self.data_dir),) if self.READS_DATA_ON_WORKERS else ())

    @classmethod
    def validate_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - set(cls.OPTIONS))
        if unknown:
            allowed = ", ".join(sorted(cls.OPTIONS)) or "none"
            raise EnvError(
                f"{cls.name}: unknown env option(s) {', '.join(unknown)}; allowed: {allowed}"
            )
        out = dict(cls.OPTIONS)
        for key, value in options.items():
            default = cls.OPTIONS[key]
            wanted = float if isinstance(default, float) else type(default)
            ok = isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool))
            if wanted is float and isinstance(value, int) and not isinstance(value, bool):
                value, ok = float(value), True
            if not ok:
                raise EnvError(
                    f"{cls.name}: env.options.{key} must be {wanted.__name__}, got {value!r}"
                )
            if key in cls.CHOICES and value not in cls.CHOICES[key]:
                allowed = ", ".join(map(str, cls.CHOICES[key]))
                raise EnvError(f"{cls.name}: env.options.{key} must be one of {allowed}")
            positive = not key.endswith("seed") and not isinstance(value, bool)
            if positive and isinstance(value, int | float) and value <= 0:
                raise EnvError(f"{cls.name}: env.options.{key} must be positive, got {value!r}")
            out[key] = value
        return out

    def load_split(self, split: str) -> list[TaskItem]:
        rows = load_split_rows(self.name, self.manifest_dir, self.data_dir, split, self.source_hint)
        return [self.to_item(row) for row in rows]

    def to_item(self, row: dict[str, Any]) -> TaskItem:
        raise NotImplementedError


def scored_result(
    item: TaskItem,
    prediction: str,
    score: Score,
    trajectory: list[Message],
    completions: list[Completion],
) -> RolloutResult:
    """A finished rollout; usage and latency summed over the rollout's model calls."""
    return RolloutResult.scored(
        item,
        prediction,
        score,
        trajectory,
        input_tokens=sum(c.usage.input_tokens for c in completions),
        output_tokens=sum(c.usage.output_tokens for c in completions),
        latency_s=sum(c.latency_s for c in completions),
        cached=bool(completions) and all(c.cached for c in completions),
    )


def model_error_result(
    item: TaskItem, trajectory: list[Message], error: Exception, explanation: str
) -> RolloutResult:
    """A rollout the model could not finish (retries exhausted): scored zero, `error` set."""
    return RolloutResult.failed(item, trajectory, str(error), explanation)
