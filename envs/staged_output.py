"""The data directory a materialiser writes, built aside and swapped in whole.

Materialising reads thousands of rows and copies side files; a bad row found halfway must
not leave `train/` from the new source beside `val/` from the old one. So the new data is
built in a hidden sibling folder of `--out` and, only when every split and file is in
place, exchanged with the old folder in one rename (Linux `renameat2(RENAME_EXCHANGE)`;
elsewhere two renames, undone if the second fails). Any failure removes the sibling and
the parent folders this run created: the old data stays exactly as it was.

`--out` must be absent, empty, or a data directory we wrote (only split and side-file
folders): swapping out a folder that holds anything else would delete the user's files.
An `--out` that is a symlink to a folder has that folder replaced; the link stays.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from core.environment.contract import SPLITS, EnvError

# What a materialiser writes at the top of a data directory.
DATA_ENTRIES = frozenset({*SPLITS, "images", "docs", "spreadsheet"})
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def check_out(out: Path, source: Path | None) -> Path:
    """`out` made absolute, or an EnvError when it cannot safely be replaced."""
    out = Path(os.path.abspath(out))
    if out.is_symlink():  # e.g. linked to a bigger disk: replace its folder, keep the link
        if not out.is_dir():
            raise EnvError(f"--out {out} is a symlink to no folder; fix or remove the link")
        out = Path(os.path.realpath(out))
    if out.exists() and not out.is_dir():
        raise EnvError(f"--out {out} is not a folder; give a folder (it is created if absent)")
    if out.exists():
        try:
            stray = sorted(p.name for p in out.iterdir() if p.name not in DATA_ENTRIES)
        except OSError as exc:
            raise EnvError(
                f"--out {out} cannot be read ({exc.strerror}); pick another folder"
            ) from None
        if stray:
            raise EnvError(
                f"--out {out} holds files that are not materialised data (e.g. {stray[0]!r}); "
                "pick an empty or new folder"
            )
        if not os.access(out, os.W_OK):
            raise EnvError(f"--out {out} is read-only; pick a folder you can write")
    if source is not None:
        real_source, real_out = Path(os.path.realpath(source)), Path(os.path.realpath(out))
        for inner, outer in ((real_out, real_source), (real_source, real_out)):
            if inner == outer or inner.is_relative_to(outer):
                raise EnvError(f"--out {out} and --source {source} overlap; keep them apart")
    return out


@contextlib.contextmanager
def staged_output(out: Path, source: Path | None = None) -> Iterator[Path]:
    """Yield an empty folder to build the data in; on success it becomes `out`."""
    out = check_out(out, source)
    created = _missing_ancestors(out.parent)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    except OSError as exc:
        _remove_empty(created)
        raise EnvError(
            f"cannot write under {out.parent} ({exc.strerror or exc}); pick a folder you can write"
        ) from None
    try:
        yield stage
        _swap_in(stage, out)
    except OSError as exc:
        raise EnvError(
            f"writing {out} failed ({exc.strerror or exc}); the old data was left as it was"
        ) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # the new data on failure, the old on success
        if not out.exists():
            _remove_empty(created)


def _swap_in(stage: Path, out: Path) -> None:
    """Make `stage` be `out`; the old data ends in `stage` (exchange) or is removed."""
    if not out.exists():
        os.rename(stage, out)
        return
    if _exchange(stage, out):
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    try:
        os.rename(out, old / "data")
        try:
            os.rename(stage, out)
        except OSError:
            os.rename(old / "data", out)
            raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2; False where the call is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library this process runs on
    except OSError:
        return False
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), ctypes.c_uint(_RENAME_EXCHANGE)
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # no exchange here
        return False
    raise OSError(code, os.strerror(code), str(b))


def _missing_ancestors(folder: Path) -> list[Path]:
    """The folders from `folder` upwards that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
