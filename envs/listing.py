"""The rows of `skillopt envs`: each environment with its interaction, whether its data is
present at the default location, its split sizes, what it needs and the kinds of target it
runs (a chat model, a coding agent)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.config import EnvConfig
from core.environment.contract import SPLITS, EnvError
from envs import get_environment, manifest_dir_of
from envs.catalog import SPECS
from envs.split_data import split_sizes


@dataclass
class EnvRow:
    name: str
    interaction: str
    data: bool
    sizes: dict[str, int] | None
    needs: list[str]
    targets: list[str]  # "chat" and/or "agent" (a coding-agent CLI as the exec target)
    source: str
    data_dir: str | None  # where the data is read from (None: shipped with the project)
    problem: str | None = None  # why the data is not usable, when it is not

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_environments(root: Path | None = None) -> list[EnvRow]:
    rows = []
    for spec in SPECS:
        data_dir = None
        try:
            # An env that cannot run here (no bubblewrap for its jail) is listed with why.
            env = get_environment(EnvConfig(name=spec.name), root=root)
            data_dir = getattr(env, "data_dir", None) if spec.materializer else None
            sizes: dict[str, int] | None = {s: len(env.load_split(s)) for s in SPLITS}
            present, problem = True, None
        except EnvError as exc:  # MissingDataError, or data that does not match the manifest
            sizes, present, problem = split_sizes(manifest_dir_of(spec.name, root)), False, str(exc)
        rows.append(
            EnvRow(
                name=spec.name,
                interaction=spec.interaction,
                data=present,
                sizes=sizes,
                needs=list(spec.needs),
                targets=list(spec.targets),
                source=spec.source,
                data_dir=str(data_dir) if data_dir is not None else None,
                problem=problem,
            )
        )
    return rows
