"""Seeded, disjoint train/val/test items from `reasoning_gym`'s procedural generators.

`reasoning_gym` is an optional extra (core.install_hint says how to add it); this
module imports it only when items are built, so naming the environment (or listing it in
`skillopt envs`) never needs it.

A generator makes item `i` from `Random(seed + i)`, so two generators seeded `s` and `s + 1`
share almost every item. The splits therefore come from one generator per dataset, read in
index order: the first unique questions go to train, the next to val, then test. Questions
are unique across all three splits (a small generator space repeats itself, and a test
question seen in train, e.g. as a worked example in the skill, would inflate the score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.environment.contract import SPLITS, EnvError
from core.install_hint import install_extra

EXTRA = "reasoning-gym"
INSTALL_HINT = install_extra(EXTRA)
# How many generator indices may be read per wanted item before we call the space too small.
MAX_DRAWS_PER_ITEM = 20


class MissingExtraError(EnvError):
    """The `reasoning_gym` library is not installed."""


def import_library() -> Any:
    try:
        import reasoning_gym
    except ImportError:
        raise MissingExtraError(
            f"reasoning_gym: the reasoning-gym generators are not installed: run `{INSTALL_HINT}`"
        ) from None
    return reasoning_gym


def library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reasoning_gym")
    except PackageNotFoundError:
        return "absent"


@dataclass(frozen=True)
class GeneratedItem:
    dataset: str
    index: int  # the generator index: `create_dataset(dataset, seed=..., **config)[index]`
    entry: dict[str, Any]  # the generator's own item: question, answer, metadata


def create_generator(name: str, config: Mapping[str, Any], seed: int, size: int) -> Any:
    """One dataset of the library with the user's generator settings; a one-line error
    naming what is allowed when the name or a setting is wrong."""
    library = import_library()
    from reasoning_gym.factory import DATASETS

    if name not in DATASETS:
        raise EnvError(
            f"reasoning_gym: unknown dataset {name!r}; reasoning-gym {library_version()} has: "
            + ", ".join(sorted(DATASETS))
        )
    if "seed" in config or "size" in config:
        raise EnvError(
            f"reasoning_gym: set the seed and sizes with env.options.seed and "
            f"env.options.{{train,val,test}}_size, not in dataset_config.{name}"
        )
    try:
        return library.create_dataset(name, seed=seed, size=size, **dict(config))
    except (TypeError, ValueError, AssertionError) as exc:
        raise EnvError(
            f"reasoning_gym: env.options.dataset_config.{name} is invalid: {exc}"
        ) from None


def share(total: int, parts: int) -> list[int]:
    """`total` split into `parts` counts as evenly as possible, the first ones larger."""
    base, rest = divmod(total, parts)
    return [base + (1 if i < rest else 0) for i in range(parts)]


def unique_entries(name: str, generator: Any, wanted: int) -> list[GeneratedItem]:
    """The first `wanted` items of `generator` with distinct questions, in index order."""
    seen: set[str] = set()
    out: list[GeneratedItem] = []
    limit = wanted * MAX_DRAWS_PER_ITEM
    index = 0
    while len(out) < wanted:
        if index >= limit:
            raise EnvError(
                f"reasoning_gym: dataset {name} gave only {len(out)} distinct questions in "
                f"{limit} draws, {wanted} wanted: lower the split sizes or widen "
                f"env.options.dataset_config.{name}"
            )
        entry = generator[index]
        if entry["question"] not in seen:
            seen.add(entry["question"])
            out.append(GeneratedItem(name, index, entry))
        index += 1
    return out


def build_splits(
    datasets: Sequence[str],
    configs: Mapping[str, Mapping[str, Any]],
    sizes: Mapping[str, int],
    seed: int,
) -> tuple[dict[str, list[GeneratedItem]], dict[str, Any]]:
    """(split -> items, dataset -> generator). Each split's size is shared evenly over the
    datasets and the split interleaves them, so any prefix keeps the mix (a
    `val_limit`/`test_limit` keeps a seeded sample, which keeps it on average)."""
    counts = {split: share(sizes[split], len(datasets)) for split in SPLITS}
    splits: dict[str, list[list[GeneratedItem]]] = {split: [] for split in SPLITS}
    generators = {}
    for position, name in enumerate(datasets):
        wanted = sum(counts[split][position] for split in SPLITS)
        generator = create_generator(name, configs.get(name, {}), seed, wanted * MAX_DRAWS_PER_ITEM)
        generators[name] = generator
        stream = iter(unique_entries(name, generator, wanted))
        for split in SPLITS:
            splits[split].append([next(stream) for _ in range(counts[split][position])])
    return {split: interleave(groups) for split, groups in splits.items()}, generators


def interleave(groups: list[list[GeneratedItem]]) -> list[GeneratedItem]:
    out = []
    for row in range(max((len(g) for g in groups), default=0)):
        out.extend(g[row] for g in groups if row < len(g))
    return out
