"""The handoff backend's files (issues 19 and 20): prompt names carry order and kind and
stay the same across re-runs; answers are read only from regular UTF-8 files under the
size cap (a symlink, FIFO, directory or binary file is refused with a reason, never read,
and never hangs); an empty or blank answer is still waiting; a key in an answer is masked;
each answer is counted once."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from core.models import handoff
from core.models.call_label import labelled
from core.models.handoff import AnswerRejected, HandoffBackend, HandoffWaiting, pending_prompts
from core.models.handoff_files import ANSWER_MAX_BYTES, HandoffFolder
from core.models.types import Request


def request(text: str = "What is the capital of Peru?") -> Request:
    return Request(backend="handoff", model="handoff", messages=[{"role": "user", "content": text}])


def send(backend: HandoffBackend, req: Request):
    return asyncio.run(backend.send(req, timeout_s=1))


def waiting_name(backend, req) -> str:
    with pytest.raises(HandoffWaiting):
        send(backend, req)
    [prompt] = [p for p in pending_prompts(backend.folder.root) if backend.name_for(req) == p.name]
    return prompt.name


def test_prompt_files_are_named_by_order_and_kind_and_keep_their_name(tmp_path):
    backend = HandoffBackend(tmp_path, role="optimizer")
    with labelled("analyst-failure-2"), pytest.raises(HandoffWaiting):
        send(backend, request("one"))
    with pytest.raises(HandoffWaiting):
        send(backend, request("two"))
    names = sorted(p.name for p in (tmp_path / "prompts").iterdir())
    assert re.fullmatch(r"0001-analyst-failure-2-[0-9a-f]{16}\.md", names[0])
    assert re.fullmatch(r"0002-optimizer-[0-9a-f]{16}\.md", names[1])
    assert (tmp_path / "answers").is_dir()
    again = HandoffBackend(tmp_path, role="optimizer")  # a re-run: same request, same file
    assert again.name_for(request("one")) == names[0]
    assert again.name_for(request("two")) == names[1]


def test_an_answer_is_used_masked_and_counted_once(tmp_path, monkeypatch):
    key = "sk-proj-" + "Zq8wX2vB7nM4kL1pR6tY9uE3iO5aS0dF"
    mask = lambda text: text.replace(key, "[REDACTED:key]")  # noqa: E731
    monkeypatch.setattr(handoff, "_answer_masks", {"test-key": mask})  # only this mask
    backend = HandoffBackend(tmp_path, role="target")
    name = waiting_name(backend, request())
    (tmp_path / "answers" / name).write_text(f"Lima (my key is {key})\n")
    first = send(backend, request())
    assert first.text == "Lima (my key is [REDACTED:key])" and key not in first.text
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0 and not first.cached
    second = send(HandoffBackend(tmp_path, role="target"), request())
    assert second.cached and second.usage.input_tokens == 0  # the client records it once


@pytest.mark.parametrize("blank", ["", "\n", "   \n\t\n"])
def test_an_empty_or_blank_answer_is_still_waiting(tmp_path, blank):
    backend = HandoffBackend(tmp_path, role="target")
    name = waiting_name(backend, request())
    (tmp_path / "answers" / name).write_text(blank)
    with pytest.raises(HandoffWaiting) as info:
        send(backend, request())
    assert not isinstance(info.value, AnswerRejected)
    [status] = HandoffFolder(tmp_path).waiting()
    assert status.state == "waiting" and "empty" in status.reason


def _symlink(path):
    path.symlink_to("/etc/hostname")


def _fifo(path):
    os.mkfifo(path)


def _directory(path):
    path.mkdir()


def _binary(path):
    path.write_bytes(b"\x00\x01PNG\x00")


def _latin1(path):
    path.write_bytes("Bogot\xe1".encode("latin-1"))


def _huge(path):
    path.write_bytes(b"x" * (ANSWER_MAX_BYTES + 1))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_symlink, "symbolic link"),
        (_fifo, "FIFO"),
        (_directory, "directory"),
        (_binary, "binary"),
        (_latin1, "not UTF-8"),
        (_huge, "cap"),
    ],
)
def test_an_answer_that_is_not_a_plain_text_file_is_refused_with_the_reason(tmp_path, make, reason):
    backend = HandoffBackend(tmp_path, role="judge")
    name = waiting_name(backend, request())
    make(tmp_path / "answers" / name)
    with pytest.raises(AnswerRejected) as info:  # returns at once: a FIFO is never opened
        send(backend, request())
    assert reason in str(info.value)
    [status] = HandoffFolder(tmp_path).waiting()
    assert status.state == "rejected" and reason in status.reason
    assert "hostname" not in str(info.value)
