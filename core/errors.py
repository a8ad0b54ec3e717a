"""The root of every error a user can act on.

Faces print `str(error)` as one line and exit with `exit_code`; anything else is a bug and
keeps its traceback. Messages say what is wrong and what to do next.
"""

from core.exit_codes import BAD_INPUT


class UserError(Exception):
    exit_code = BAD_INPUT


def unreadable(path: object, exc: BaseException) -> str:
    """'<path> is ...' for a file a user named that cannot be read as text, as one line:
    a directory, not UTF-8, or an OS error (what a UnicodeDecodeError or an
    IsADirectoryError would otherwise turn into, as a traceback)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory, not a file"
    if isinstance(exc, OSError):
        return f"{path} cannot be read ({exc.strerror or exc})"
    return f"{path} cannot be read ({type(exc).__name__})"
