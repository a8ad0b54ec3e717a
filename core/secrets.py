"""Where API keys come from, and how they are kept out of everything we write.

Keys are read from the process environment or from a `.env` file the user names
(`models.env_file`). The file is parsed here and never exported into `os.environ`, so a
key read from it cannot leak into subprocesses (git hooks, exec targets). Every value we
hand out is remembered so that `redact()` can mask it in error messages, logs and events.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import UserError, unreadable

# Standard variables whose values are always treated as secrets, even if never looked up.
STANDARD_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY")
MASK = "***"
_MIN_SECRET_LEN = 4  # shorter values would mask ordinary words

_known: set[str] = set()
_known_lock = threading.Lock()


class SecretsError(UserError):
    """The .env file named in the config cannot be read or parsed."""


def remember_secret(value: str | None) -> None:
    """Register a value so `redact()` masks it from now on."""
    if value and len(value) >= _MIN_SECRET_LEN:
        with _known_lock:
            _known.add(value)


def redact(text: str) -> str:
    """`text` with every known secret value replaced by `***`."""
    with _known_lock:
        values = sorted(_known, key=len, reverse=True)
    for name in STANDARD_KEY_VARS:
        value = os.environ.get(name)
        if value and len(value) >= _MIN_SECRET_LEN and value not in values:
            values.append(value)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def redacted_json(data: Any, *, indent: int | None = 2) -> str:
    """`data` as JSON with every known secret masked: how run files are written, so a key
    that slipped into an error, a reply or a skill still never reaches the disk."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return redact(text) + ("\n" if indent is not None else "")


def parse_env_file(path: str | Path) -> dict[str, str]:
    """`KEY=value` lines (optionally `export KEY=value`, quoted values, `#` comments)."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SecretsError(
            f"models.env_file: {path} does not exist (create it or unset models.env_file)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        # Never the bytes themselves: a file of keys is the last thing to echo.
        raise SecretsError(f"models.env_file: {unreadable(path, exc)}") from None
    values: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        if "=" not in line:
            # Never echo the line: it may be a key pasted without a name.
            raise SecretsError(f"{path}:{lineno}: expected KEY=value")
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if not key.replace("_", "").isalnum():
            raise SecretsError(f"{path}:{lineno}: {key!r} is not a variable name")
        values[key] = value
    for value in values.values():
        remember_secret(value)
    return values


class Secrets:
    """Looks a variable up in the environment first, then in the optional .env file."""

    def __init__(self, env_file: str | Path | None = None, environ: dict[str, str] | None = None):
        self._environ = os.environ if environ is None else environ
        self._file_values = parse_env_file(env_file) if env_file else {}
        self.env_file = str(env_file) if env_file else None

    def get(self, name: str) -> str | None:
        value = self._environ.get(name) or self._file_values.get(name) or None
        remember_secret(value)
        return value

    def has(self, name: str) -> bool:
        return self.get(name) is not None

    def environ(self) -> Mapping[str, str]:
        """The environment this lookup reads (a coding-agent CLI's login is found by it)."""
        return self._environ

    def where(self) -> str:
        """How to tell the user where keys are looked for."""
        if self.env_file:
            return f"the environment or {self.env_file}"
        return "the environment (or a .env file named by models.env_file)"
