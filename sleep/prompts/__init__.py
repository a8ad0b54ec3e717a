"""Load and fill the Sleep cycle's prompts (sleep/prompts/*.md) with the engine's renderer."""

from __future__ import annotations

from functools import cache
from importlib import resources

from core.optimizer.prompt_templates import render


@cache
def load(name: str) -> str:
    return resources.files("sleep.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")


def render_sleep_prompt(name: str, **values: object) -> str:
    return render(load(name), values)
