"""The `handoff` backend: every model call becomes a prompt file for a person (or their own
agent session) to answer, and a re-run picks the answers up.

For people with no API key who do not want a subprocess spending their subscription: a
call whose answer is not there yet writes `<dir>/prompts/<key>.md` (the messages, and where
to put the answer) and fails as a transient error with no retries, so the engine stops
resumably after writing every prompt of the phase it was in. Writing the reply to
`<dir>/answers/<key>.md` and re-running the same command continues: the key is a hash of
the full request, so the same call finds its answer, exactly as the response cache would.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.atomic import write_text
from core.models.response_cache import request_key
from core.models.types import Completion, Request, TransientError, Usage

HANDOFF_MODEL = "handoff"


class HandoffPending(TransientError):
    """A prompt file is waiting for its answer."""


def pending_prompts(folder: Path) -> list[Path]:
    """Prompt files of `folder` whose answer file does not exist yet."""
    prompts = sorted((Path(folder) / "prompts").glob("*.md"))
    return [p for p in prompts if not (Path(folder) / "answers" / p.name).exists()]


MESSAGE_LINE = re.compile(r"^----- (system|user|assistant|developer|tool) -----$", re.MULTILINE)


def parse_prompt_file(text: str) -> list[dict[str, str]]:
    """The messages of a prompt file (for tools that answer prompt files themselves)."""
    parts = MESSAGE_LINE.split(text)
    return [
        {"role": role, "content": content.strip("\n")}
        for role, content in zip(parts[1::2], parts[2::2], strict=True)
    ]


def render_request(request: Request, answer_path: Path) -> str:
    lines = [
        "# A model call waiting for an answer",
        "",
        f"Write the reply (only the reply text) to `{answer_path}`, then re-run the same",
        "command. Answer as the model the messages below are addressed to; where they ask",
        "for JSON, answer with that JSON only. Each message starts with a `----- role -----` line.",
        "",
    ]
    for message in request.messages:
        content = message.get("content", "")
        if isinstance(content, list):  # multimodal parts: show the text ones
            content = "\n".join(p.get("text", "[non-text part]") for p in content)
        lines += [f"----- {message.get('role', 'user')} -----", str(content), ""]
    return "\n".join(lines)


class HandoffBackend:
    name = "handoff"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def paths(self, request: Request) -> tuple[Path, Path]:
        key = request_key(request)[:20]
        return self.folder / "prompts" / f"{key}.md", self.folder / "answers" / f"{key}.md"

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        prompt, answer = self.paths(request)
        if answer.exists():
            text = answer.read_text(encoding="utf-8").strip("\n")
            return Completion(
                text=text, usage=Usage(), finish_reason="stop", latency_s=0.0, model=HANDOFF_MODEL
            )
        if not prompt.exists():
            write_text(prompt, render_request(request, answer))
        raise HandoffPending(f"handoff: waiting for {answer} (the prompt is {prompt})")

    async def aclose(self) -> None:
        return None
