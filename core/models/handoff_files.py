"""The handoff folder on disk: prompt files named by order and kind, answer files read
safely, and what is still waiting.

    <dir>/prompts/0003-analyst-failure-2-<hash>.md   a call waiting for its answer
    <dir>/answers/0003-analyst-failure-2-<hash>.md   the person's reply (same name)
    <dir>/rejected.json                              answers the caller could not use, why
    <dir>/counted.json                               answers already counted in usage

A prompt's name is given once, when it is first written: the order number is one more
than the highest in the folder and the hash is the request's, so a re-run (which makes
the same requests) finds the same file, and the answer keeps matching its prompt.

An answer is read only from a regular file (no symlink, FIFO, device or directory), at
most ANSWER_MAX_BYTES, as UTF-8 text without NUL bytes; an empty or blank file is no
answer yet. Anything else is a rejection with a reason the person can act on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from core.atomic import write_json, write_text

ANSWER_MAX_BYTES = 1_000_000
HEADER = re.compile(r"^<!-- skillopt-handoff (\{.*\}) -->$", re.MULTILINE)
NAME = re.compile(r"^(\d{4,})-([a-z0-9-]+)-([0-9a-f]{16})\.md$")
_KIND_CHARS = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class PromptInfo:
    """What a prompt file says about itself (its header)."""

    role: str = ""
    kind: str = ""
    shape: str = ""  # json_reply Shape name; empty: free text
    example: str = ""
    repair_of: str = ""  # the prompt whose rejected answer this one repairs
    expects: str = ""  # what a free-text answer is, when more than the reply itself


@dataclass(frozen=True)
class PromptStatus:
    """One prompt of the folder and the state of its answer."""

    prompt: Path
    answer: Path
    info: PromptInfo
    state: str  # waiting | rejected | answered
    reason: str = ""  # why it waits or was rejected

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.prompt.name,
            "prompt": str(self.prompt),
            "answer": str(self.answer),
            **asdict(self.info),
            "state": self.state,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class AnswerRead:
    text: str | None  # the answer, or None: not there yet / not usable
    problem: str = ""  # why it is not usable ("" = not written yet, or blank)
    blank: bool = False  # the file is there but empty or whitespace only: still waiting


def slug(kind: str) -> str:
    return _KIND_CHARS.sub("-", kind.lower()).strip("-") or "call"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class HandoffFolder:
    def __init__(self, folder: str | Path) -> None:
        self.root = Path(folder)
        self.prompts = self.root / "prompts"
        self.answers = self.root / "answers"

    def ensure(self) -> None:
        """prompts/ and answers/ exist from the start, so the person knows where to write."""
        self.prompts.mkdir(parents=True, exist_ok=True)
        self.answers.mkdir(parents=True, exist_ok=True)

    # -- names ---------------------------------------------------------------------------
    def find(self, key: str) -> str | None:
        """The file name already given to the request with this hash, if any."""
        if not self.prompts.is_dir():
            return None
        for path in self.prompts.glob(f"*-{key}.md"):
            return path.name
        return None

    def allocate(self, key: str, kind: str) -> str:
        numbers = [int(m.group(1)) for m in map(NAME.match, self._names()) if m]
        return f"{max(numbers, default=0) + 1:04d}-{slug(kind)}-{key}.md"

    def _names(self) -> list[str]:
        return sorted(p.name for p in self.prompts.glob("*.md")) if self.prompts.is_dir() else []

    def write_prompt(self, name: str, info: PromptInfo, body: str) -> Path:
        self.ensure()
        path = self.prompts / name
        header = f"<!-- skillopt-handoff {json.dumps(asdict(info), ensure_ascii=False)} -->\n"
        write_text(path, header + body)
        return path

    # -- answers -------------------------------------------------------------------------
    def read_answer(self, name: str) -> AnswerRead:
        return read_answer(self.answers / name)

    def reject(self, name: str, text: str, reason: str) -> None:
        """The caller could not use this answer: remembered (by content) so the listing
        shows the prompt as waiting, with the reason, until the file changes."""
        records = self._read("rejected.json")
        records[name] = {"sha256": digest(text), "reason": reason}
        write_json(self.root / "rejected.json", records)

    def accept(self, name: str) -> None:
        """The answer was used: forget an earlier rejection, and drop the repair prompts
        written for it that nobody answered (they are not needed any more)."""
        records = self._read("rejected.json")
        if records.pop(name, None) is None:
            return  # never rejected: no repair prompt was written for it
        for status in self.statuses():
            if status.info.repair_of == name and status.state != "answered":
                with contextlib.suppress(OSError):
                    status.prompt.unlink()
                records.pop(status.prompt.name, None)
        write_json(self.root / "rejected.json", records)

    def is_new_answer(self, name: str, text: str) -> bool:
        """True while no run has used this answer (this content) yet."""
        return self._read("counted.json").get(name) != digest(text)

    def first_count(self, name: str, text: str) -> bool:
        """True the first time this answer (this content) is used: usage counts it once."""
        counted = self._read("counted.json")
        if counted.get(name) == digest(text):
            return False
        counted[name] = digest(text)
        write_json(self.root / "counted.json", counted)
        return True

    def _read(self, file: str) -> dict[str, Any]:
        try:
            data = json.loads((self.root / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    # -- listing -------------------------------------------------------------------------
    def statuses(self) -> list[PromptStatus]:
        """Every prompt in order, with the state of its answer."""
        rejected = self._read("rejected.json")
        out = []
        for name in self._names():
            prompt, answer = self.prompts / name, self.answers / name
            info = prompt_info(prompt)
            read = read_answer(answer)
            if read.text is None:
                state = "rejected" if read.problem else "waiting"
                reason = _reason(read)
            elif (r := rejected.get(name)) and r.get("sha256") == digest(read.text):
                state, reason = "rejected", str(r.get("reason", ""))
            else:
                state, reason = "answered", ""
            out.append(PromptStatus(prompt, answer, info, state, reason))
        # A rejected answer whose repair prompt was answered is done with: the repair's
        # answer is the one used.
        repaired = {
            s.info.repair_of: s.prompt.name
            for s in out
            if s.info.repair_of and s.state == "answered"
        }
        return [
            replace(s, state="answered", reason=f"repaired by {repaired[s.prompt.name]}")
            if s.state == "rejected" and s.prompt.name in repaired
            else s
            for s in out
        ]

    def waiting(self) -> list[PromptStatus]:
        return [s for s in self.statuses() if s.state != "answered"]


def prompt_info(prompt: Path) -> PromptInfo:
    try:
        with prompt.open(encoding="utf-8", errors="replace") as fh:
            first = fh.readline().rstrip("\n")
    except OSError:
        return PromptInfo()
    match = HEADER.match(first)
    if not match:
        return PromptInfo()
    try:
        data = json.loads(match.group(1))
    except ValueError:
        return PromptInfo()
    fields = PromptInfo.__dataclass_fields__
    return PromptInfo(**{k: str(v) for k, v in data.items() if k in fields})


def _reason(read: AnswerRead) -> str:
    if read.problem:
        return f"the answer file {read.problem}"
    return "the answer file is empty" if read.blank else "no answer yet"


def read_answer(path: Path) -> AnswerRead:
    """The answer in `path`, read only if it is a regular file of UTF-8 text within the
    size cap. Never follows a symlink and never blocks on a FIFO."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return AnswerRead(None)
    except OSError as exc:
        return AnswerRead(None, f"cannot be read ({exc.strerror})")
    problem = _not_regular(st.st_mode)
    if problem:
        return AnswerRead(None, f"is {problem}; write the reply into a plain text file")
    if st.st_size > ANSWER_MAX_BYTES:
        return AnswerRead(None, f"is {st.st_size} bytes, over the {ANSWER_MAX_BYTES}-byte cap")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return AnswerRead(None, f"cannot be read ({exc.strerror})")
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the lstat
            return AnswerRead(None, "is not a regular file; write the reply into a plain text file")
        data = fh.read(ANSWER_MAX_BYTES + 1)
    if len(data) > ANSWER_MAX_BYTES:
        return AnswerRead(None, f"is over the {ANSWER_MAX_BYTES}-byte cap")
    if b"\0" in data:
        return AnswerRead(None, "is binary (it holds NUL bytes); the reply must be text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return AnswerRead(None, "is not UTF-8 text; save the reply as UTF-8")
    if not text.strip():
        return AnswerRead(None, blank=True)
    return AnswerRead(text.strip("\n"))


def _not_regular(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (answers are read from regular files only)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return ""
