"""The `handoff` backend: every model call becomes a prompt file for a person (or their own
agent session) to answer, and a re-run picks the answers up.

For people with no API key who do not want a subprocess spending their subscription: a
call whose answer is not there yet writes `<dir>/prompts/NNNN-<kind>-<hash>.md` (the
messages, the shape of answer wanted, and where to put it) and raises `HandoffWaiting`,
never retried: the engine stops at its last boundary with status `waiting` (exit 3) once
every call of the phase it was in has written its prompt. Writing the reply to the file of
the same name in `<dir>/answers/` and re-running the same command continues.

The answer files are the cache of this backend: its replies are never put in the response
cache (a rejected answer fixed in its file must be read again), and usage counts each
answer once, at an estimate of its tokens (core/models/handoff_files.py remembers which).
A caller that cannot use an answer (unusable JSON after the repair re-ask) raises
`AnswerRejected`: the run waits again, the reason on the console and in the listing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from core import exit_codes
from core.models.call_label import current_label
from core.models.handoff_files import HandoffFolder, PromptInfo, PromptStatus
from core.models.response_cache import request_key
from core.models.types import Completion, ModelError, Request, Usage
from core.secrets import redact

HANDOFF_MODEL = "handoff"
# Text maskers run on every answer before it is used (and so before any file, event or
# prompt holds it): core.secrets.redact for known keys, plus pattern-based ones the faces
# register (Sleep's redactor), since a person may paste a key into an answer.
_answer_masks: dict[str, Callable[[str], str]] = {}


class HandoffWaiting(ModelError):
    """Prompt files are waiting for their answers: the run stops resumably (exit 3)."""

    exit_code = exit_codes.STOPPED


class AnswerRejected(HandoffWaiting):
    """An answer file could not be used; the person fixes it (or answers the repair
    prompt) and re-runs. Never a failure: nothing was wrong with the run."""


def add_answer_mask(name: str, mask: Callable[[str], str]) -> None:
    _answer_masks[name] = mask


def mask_answer(text: str) -> str:
    for mask in _answer_masks.values():
        text = mask(text)
    return redact(text)


def pending_prompts(folder: Path) -> list[Path]:
    """Prompt files of `folder` with no usable answer yet (missing, empty or rejected)."""
    return [s.prompt for s in HandoffFolder(folder).waiting()]


def waiting_summary(folder: Path, statuses: list[PromptStatus] | None = None) -> str:
    """One line per waiting prompt, then what to do: for the console and the exception."""
    folder = Path(folder)
    statuses = HandoffFolder(folder).waiting() if statuses is None else statuses
    lines = [
        f"waiting for {len(statuses)} handoff answer(s); the prompts are in {folder / 'prompts'}:"
    ]
    for s in statuses:
        verdict = "rejected: " if s.state == "rejected" else ""
        lines.append(f"  {s.prompt.name} ({s.info.kind or s.info.role}): {verdict}{s.reason}")
    lines.append(
        f"write each reply to {folder / 'answers'}/<same file name>, check them with "
        "`skillopt sleep handoff --dir " + str(folder) + "`, then run the same command again"
    )
    return "\n".join(lines)


MESSAGE_LINE = re.compile(r"^----- (system|user|assistant|developer|tool) -----$", re.MULTILINE)


def parse_prompt_file(text: str) -> list[dict[str, str]]:
    """The messages of a prompt file (for tools that answer prompt files themselves)."""
    parts = MESSAGE_LINE.split(text)
    return [
        {"role": role, "content": content.strip("\n")}
        for role, content in zip(parts[1::2], parts[2::2], strict=True)
    ]


def render_request(request: Request, answer_path: Path, info: PromptInfo) -> str:
    lines = [
        f"# A model call waiting for an answer: {info.kind} ({info.role})",
        "",
        f"Write the reply (only the reply text) to `{answer_path}`, then re-run the same",
        "command. Answer as the model the messages below are addressed to.",
    ]
    if info.shape:
        lines += [
            f"The reply must be one JSON object shaped like this ({info.shape}):",
            "",
            f"    {info.example}",
        ]
    elif info.expects:
        lines.append(f"The reply is {info.expects}.")
    else:
        lines.append("The reply is free text.")
    lines += ["Each message starts with a `----- role -----` line.", ""]
    for message in request.messages:
        content = message.get("content", "")
        if isinstance(content, list):  # multimodal parts: show the text ones
            content = "\n".join(p.get("text", "[non-text part]") for p in content)
        lines += [f"----- {message.get('role', 'user')} -----", str(content), ""]
    return "\n".join(lines)


def estimated_tokens(text: str) -> int:
    """What usage counts for a person's answer and its prompt: ~4 characters a token."""
    return len(text) // 4 + 1


class HandoffBackend:
    name = "handoff"

    def __init__(self, folder: str | Path, role: str = "") -> None:
        self.folder = HandoffFolder(folder)
        self.role = role

    def name_for(self, request: Request) -> str:
        """The file name of this request: the one given before, else a new one in order."""
        key = request_key(request)[:16]
        found = self.folder.find(key)
        if found:
            return found
        return self.folder.allocate(key, self.kind())

    def kind(self) -> str:
        label = current_label()
        kind = label.kind or self.role or "call"
        return f"{kind}-repair-{label.repair}" if label.repair else kind

    async def send(self, request: Request, *, timeout_s: float) -> Completion:
        name = self.name_for(request)
        prompt, answer = self.folder.prompts / name, self.folder.answers / name
        read = self.folder.read_answer(name)
        if read.text is not None:
            text = mask_answer(read.text)
            first = self.folder.first_count(name, read.text)
            asked = "".join(str(m.get("content", "")) for m in request.messages)
            usage = Usage(estimated_tokens(asked), estimated_tokens(text))
            return Completion(
                text=text,
                usage=usage if first else Usage(),
                finish_reason="stop",
                latency_s=0.0,
                model=HANDOFF_MODEL,
                cached=not first,  # read again in a later round: counted already
                answer_file=str(answer),
            )
        if not prompt.exists():
            label = current_label()
            info = PromptInfo(
                role=self.role,
                kind=self.kind(),
                shape=label.shape,
                example=label.example,
                repair_of=label.repair_of,
                expects=label.expects,
            )
            self.folder.write_prompt(name, info, render_request(request, answer, info))
        if read.problem:
            raise AnswerRejected(f"handoff: {answer} was not used: the answer file {read.problem}")
        raise HandoffWaiting(f"handoff: waiting for {answer} (the prompt is {prompt})")

    async def aclose(self) -> None:
        return None


def reject_answer(completion: Completion, reason: str) -> None:
    """The caller could not use a handoff answer: remember why (the listing shows it)."""
    if completion.answer_file:
        answer = Path(completion.answer_file)
        read = HandoffFolder(answer.parent.parent).read_answer(answer.name)
        if read.text is not None:
            HandoffFolder(answer.parent.parent).reject(answer.name, read.text, reason)


def accept_answer(completion: Completion) -> None:
    if completion.answer_file:
        answer = Path(completion.answer_file)
        HandoffFolder(answer.parent.parent).accept(answer.name)
