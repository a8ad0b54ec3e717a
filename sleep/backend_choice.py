"""Which backend `skillopt sleep init` suggests for nights, and why.

An API key in the environment → its backend; a coding-agent CLI on PATH → that CLI (the
person's own subscription, which is why init asks before recording it); otherwise
`handoff`, which spends nothing and writes prompt files for the person to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


def suggest_backend(
    environ: Mapping[str, str], which: Callable[[str], str | None]
) -> tuple[str, str]:
    if environ.get("OPENAI_API_KEY"):
        return "openai", "OPENAI_API_KEY is set"
    if environ.get("ANTHROPIC_API_KEY"):
        return "anthropic", "ANTHROPIC_API_KEY is set"
    for binary, backend in (("claude", "claude_code"), ("codex", "codex")):
        if which(binary):
            return backend, f"found `{binary}`: nights would use your own {binary} login"
    return (
        "handoff",
        "no API key or agent CLI found: prompts are written to files for you to answer",
    )
