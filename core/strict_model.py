"""The base of every config section model (core.config, core.train_config): an unknown
key, a wrong type or a value outside its enum is an error, never a silent default.

Each field's docstring (the string under it) is its help text: pydantic keeps it as the
field's description, and the documentation's configuration reference is generated from
it (docs_tools/reference.py), so a key is documented exactly once, next to its default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, validate_assignment=True, use_attribute_docstrings=True
    )
