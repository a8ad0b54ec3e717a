"""Read a JSON Lines transcript as a stream of records, tolerating everything a live,
crashed or hand-edited file can hold.

Why a byte stream and not `open(path, encoding="utf-8")`: a text-mode file raises
UnicodeDecodeError in the middle of iteration, which no `try` around `json.loads` catches,
and one bad byte would lose the rest of the file. Here each line is decoded on its own
(invalid bytes become U+FFFD), a line that is not a JSON object is counted and skipped, a
final segment without `\\n` is *pending* (a writer is still appending it: it is not read
and the offset stops before it), and a line longer than `max_line_bytes` is skipped while
streaming, without ever holding it: memory grows with the longest kept line, never with
the file.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import msgspec

from core.clean_text import clean_strings
from core.clean_text import clean_text as clean_text  # the harvesters import it from here

MAX_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 1024 * 1024
# How many bytes at the start of the file, and just before the offset, the cursor digests.
PROBE_BYTES = 4096
_DECODE = msgspec.json.Decoder().decode
# A JSON escape of a surrogate half (`\ud83d`): the only way a lone one gets into a value.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class CompressedUnsupported(Exception):
    """A `.zst` file and no zstd library to read it."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class NotRegularFile(OSError):
    """A transcript path that names a FIFO, a device, a socket or a directory (itself or
    through a symlink): reading it would block forever (a FIFO with no writer) or never
    end (`/dev/zero`), so it is skipped with this reason."""


def _not_regular(path: Path, mode: int) -> NotRegularFile:
    kind = next((name for test, name in _KINDS if test(mode)), "of another kind")
    through = "a symlink to " if path.is_symlink() else ""
    return NotRegularFile(errno.EINVAL, f"not a regular file ({through}{kind})")


def open_transcript(path: Path) -> BinaryIO:
    """A buffered binary stream of the file's (decompressed) bytes; NotRegularFile unless
    the path is a regular file. Opened non-blocking and checked on the open descriptor,
    so a FIFO put there after any earlier check cannot block the open either."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        # A regular file reads the same with or without O_NONBLOCK; clear it anyway.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    # A buffer of _CHUNK, not the default 8 KiB: readline() copies a line longer than the
    # buffer piece by piece, and tool results are often longer (2.5x slower on the bench).
    raw = os.fdopen(fd, "rb", buffering=_CHUNK)  # the caller closes the returned stream
    if path.name.endswith(".zst"):
        try:
            import zstandard
        except ImportError:  # pragma: no cover - zstandard is a dependency
            raw.close()
            raise CompressedUnsupported(
                "zstd-compressed and the zstandard package is missing"
            ) from None
        reader = zstandard.ZstdDecompressor().stream_reader(
            raw, closefd=True, read_across_frames=True
        )
        return io.BufferedReader(reader, buffer_size=_CHUNK)  # type: ignore[arg-type]
    return raw


@dataclass
class LineProblems:
    """Lines skipped in one read, by kind, with the byte offset of the first of each."""

    not_json: int = 0
    too_long: int = 0
    first_offset: dict[str, int] = field(default_factory=dict)

    def note(self, kind: str, offset: int) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.first_offset.setdefault(kind, offset)

    def describe(self) -> str | None:
        parts = []
        if self.not_json:
            parts.append(
                f"{self.not_json} line(s) not a JSON object skipped "
                f"(first at byte {self.first_offset['not_json']})"
            )
        if self.too_long:
            parts.append(
                f"{self.too_long} line(s) over {MAX_LINE_BYTES // (1024 * 1024)} MiB skipped "
                f"(first at byte {self.first_offset['too_long']})"
            )
        return "; ".join(parts) or None


class JsonlReader:
    """Records from `start` on. After iterating, `offset` is the end of the last complete
    line (where the next read of this file resumes), `head` the file's first bytes and
    `tail` the bytes just before `offset` (PROBE_BYTES of each, for the cursor). A reader
    that starts past 0 is given the head and tail up to `start` (see cursors.probe)."""

    def __init__(
        self,
        stream: BinaryIO,
        start: int = 0,
        *,
        head: bytes = b"",
        tail: bytes = b"",
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._stream = stream
        self.offset = start
        self.head, self.tail = head, tail
        self.max_line_bytes = max_line_bytes
        self.problems = LineProblems()
        if stream.tell() != start:
            self._skip_to(start)

    def _skip_to(self, start: int) -> None:
        try:
            self._stream.seek(start)
        except (OSError, io.UnsupportedOperation):  # a decompressing stream: read past it
            left = start - self._stream.tell()
            while left > 0:
                got = self._stream.read(min(left, _CHUNK))
                if not got:
                    break
                left -= len(got)

    def _commit(self, first: bytes, last_bytes: bytes, size: int) -> None:
        """A complete line of `size` bytes, starting with `first` and ending with
        `last_bytes` (the whole line when it was kept), now counts as read."""
        if len(self.head) < PROBE_BYTES:
            self.head += first[: PROBE_BYTES - len(self.head)]
        if len(last_bytes) >= PROBE_BYTES:
            self.tail = last_bytes[-PROBE_BYTES:]
        else:
            self.tail = (self.tail + last_bytes)[-PROBE_BYTES:]
        self.offset += size

    def lines(self) -> Iterator[tuple[int, bytes | None]]:
        """(start offset, line bytes) for each complete line; bytes None for a line that
        was too long to keep."""
        read = self._stream.readline
        while True:
            start = self.offset
            line = read(_CHUNK)
            if not line:
                return
            if line[-1:] == b"\n":
                self._commit(line, line, len(line))
                yield start, line
                continue
            first, size, parts, kept = line, len(line), [line], True
            recent = line[-PROBE_BYTES:]
            while line[-1:] != b"\n":
                line = read(_CHUNK)
                if not line:
                    return  # pending: the writer has not finished this line
                size += len(line)
                recent = (recent + line)[-PROBE_BYTES:]
                if kept and size > self.max_line_bytes:
                    kept, parts = False, []
                elif kept:
                    parts.append(line)
            whole = b"".join(parts) if kept else None
            self._commit(first, whole if whole is not None else recent, size)
            yield start, whole

    def records(self) -> Iterator[dict]:
        for start, line in self.lines():
            if line is None:
                self.problems.note("too_long", start)
                continue
            if not line.strip():
                continue
            value = _loads(line)
            if isinstance(value, dict):
                yield value
            else:
                self.problems.note("not_json", start)


def _loads(line: bytes) -> object:
    """The line's value as `json.loads` reads it (None if not JSON). msgspec parses it
    first, 2.6x faster on the bench's lines; it reads every line it accepts to the same
    value (integers of any size too) and refuses the ones `json` reads differently or
    only after a fallback: invalid UTF-8 and encoded surrogates, a lone `\\ud83d`
    escape, a BOM, NaN, 1e400. Those, and a nesting deep enough to hit the recursion
    limit, go through `json` as before (tests/sleep/test_jsonl.py)."""
    try:
        return _DECODE(line)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        pass
    try:
        value = json.loads(line)
    except UnicodeDecodeError:
        return _loads_replacing(line)
    except (ValueError, RecursionError):
        return None
    # a lone `\ud83d` escape reads as U+FFFD; only a line with such an escape is walked
    return _cleaned(value) if SURROGATE_ESCAPE.search(line) else value


def _loads_replacing(line: bytes) -> object:
    try:
        return _cleaned(json.loads(line.decode("utf-8", errors="replace")))
    except (ValueError, RecursionError):
        return None


def _cleaned(value: object) -> object:
    try:
        return clean_strings(value)
    except RecursionError:  # nested as deep as json reads: not a record of any agent
        return None
