"""Load and fill the optimizer's prompt files (core/optimizer/prompts/*.md).

The prompts state JSON examples full of braces, so `str.format` (which would demand every
literal brace be doubled) is the wrong tool. The renderer here replaces only
`{lower_snake_case}` placeholders, in a single pass: a value that itself contains
`{something}` (a skill often does) is inserted verbatim and never re-scanned, and JSON such
as `{"edits": []}` never looks like a placeholder because of the quotes. A placeholder with
no value is an error, so a template and its caller cannot drift apart silently.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

PROMPT_PACKAGE = "core.optimizer.prompts"
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class TemplateError(KeyError):
    """A template names a placeholder the caller did not supply (a programming error)."""


@cache
def load_prompt(name: str) -> str:
    """The text of `core/optimizer/prompts/<name>.md` (read once per process)."""
    return resources.files(PROMPT_PACKAGE).joinpath(f"{name}.md").read_text(encoding="utf-8")


def render(template: str, values: dict[str, object]) -> str:
    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise TemplateError(f"prompt placeholder {{{key}}} has no value")
        return str(values[key])

    return PLACEHOLDER.sub(fill, template)


def render_prompt(name: str, **values: object) -> str:
    return render(load_prompt(name), values)
