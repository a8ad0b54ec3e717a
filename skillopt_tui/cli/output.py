"""What every command prints the same way."""

from __future__ import annotations

import json
from typing import Any

import typer


def emit_json(data: Any) -> None:
    """`--json` output: data on stdout, progress and errors stay on stderr."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
