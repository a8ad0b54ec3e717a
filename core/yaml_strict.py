"""YAML that refuses duplicate keys. PyYAML keeps the last of two equal keys and drops the
first without a word: a config with two `train:` sections would silently lose one."""

from __future__ import annotations

from typing import Any

import yaml


class DuplicateKey(yaml.MarkedYAMLError):
    """Two equal keys in one mapping; `problem` names the key and both lines."""


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader reports it below
                continue
            if first is not None:
                raise DuplicateKey(
                    problem=f"duplicate key {key!r} at lines {first} and {line}",
                    problem_mark=key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def safe_load_unique(text: str) -> Any:
    """`yaml.safe_load`, but a mapping with a repeated key raises DuplicateKey."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
