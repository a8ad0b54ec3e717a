"""The base of every config section model (core.config, core.train_config): an unknown
key, a wrong type or a value outside its enum is an error, never a silent default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)
