"""What every command prints the same way."""

from __future__ import annotations

import json
from typing import Any

import typer

from core.clean_text import clean_text


def emit_json(data: Any) -> None:
    """`--json` output: data on stdout, progress and errors stay on stderr; a lone
    surrogate from a transcript prints as U+FFFD rather than failing the command."""
    typer.echo(clean_text(json.dumps(data, indent=2, ensure_ascii=False)))
