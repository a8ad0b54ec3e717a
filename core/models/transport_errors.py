"""What to make of failures an SDK lets through from its HTTP stack.

Why this exists: the SDKs turn the usual transport failures into their own "connection
error", but not all of them, and not always helpfully. A port outside 0-65535 makes anyio
raise an ExceptionGroup holding an OverflowError, which the openai SDK does not catch; an
unknown scheme or a non-numeric port comes out as httpx's UnsupportedProtocol / InvalidURL,
sometimes wrapped as a connection error that we would retry for minutes. Those are
configuration mistakes: they become a `BadRequestError` (never retried) naming the setting
to fix. Broken connections stay transient. Programming errors (TypeError, ...) propagate
untouched so they keep their traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

from core.models.types import BadRequestError, ModelError, TransientError
from core.secrets import redact

# Class names shared by httpx, httpx2, httpcore and httpcore2: matched by name so that
# whichever HTTP stack the installed SDK uses is covered.
_URL_ERROR_NAMES = frozenset({"InvalidURL", "UnsupportedProtocol"})
_HTTP_STACK_MODULES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"})
_BUGS = (
    TypeError,
    AttributeError,
    NameError,
    KeyError,
    IndexError,
    AssertionError,
    NotImplementedError,
)


def public_url(url: str) -> str:
    """The URL without user:password@, query or trailing slash (it becomes part of cache
    keys, labels and error messages). Never raises: a URL too broken to parse is returned
    with anything before an '@' in its authority removed."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    except ValueError:
        scheme, sep, rest = url.partition("://")
        if not sep:
            return url.split("?", 1)[0]
        authority, slash, path = rest.partition("/")
        return f"{scheme}://{authority.rsplit('@', 1)[-1]}{slash}{path.split('?', 1)[0]}"


def _related(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, the exceptions it was raised from (as a traceback would show them) and the
    members of exception groups, each once."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.append(current.__cause__)
        if not current.__suppress_context__:
            stack.append(current.__context__)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for member in exc.exceptions for leaf in _leaves(member)]
    return [exc]


def _is_url_error(exc: BaseException) -> bool:
    return isinstance(exc, OverflowError) or any(
        cls.__name__ in _URL_ERROR_NAMES for cls in type(exc).__mro__
    )


def _from_http_stack(exc: BaseException) -> bool:
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _HTTP_STACK_MODULES


# Read failures once the request is out (the reply began, then broke off), by class name:
# the SDKs run on httpx or its fork httpx2. Unlike a refused connection, the provider had
# the request and may bill it.
_BROKEN_OFF_NAMES = frozenset({"RemoteProtocolError", "ReadError"})


def broke_off(exc: BaseException) -> bool:
    """`exc`, what it was raised from (the SDKs wrap the transport's errors) or a member
    of its group, is a read failure of the HTTP stack after the request went out."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if _from_http_stack(current) and type(current).__name__ in _BROKEN_OFF_NAMES:
            return True
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return False


def describe(exc: BaseException) -> str:
    """`Type: first line of the message`, secrets masked, at most 200 characters."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = _leaves(exc)[0]
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return redact(text)[:200]


def bad_url_error(exc: BaseException, *, url: str, setting: str) -> BadRequestError | None:
    """A BadRequestError naming `setting` if `exc` comes from an unusable URL, else None."""
    culprit = next((e for e in _related(exc) if _is_url_error(e)), None)
    if culprit is None:
        return None
    return BadRequestError(
        f"{setting} {public_url(url)!r} is not a usable URL ({describe(culprit)}); set it to "
        "the server's address, e.g. http://127.0.0.1:8000/v1"
    )


def connection_error(exc: BaseException, *, url: str, setting: str) -> ModelError:
    """For the SDK's own connection error, given its cause: a bad URL fails fast, anything
    else (refused, reset, DNS, TLS) is transient."""
    bad = bad_url_error(exc, url=url, setting=setting)
    if bad is not None:
        return bad
    return TransientError(f"connection failed: {describe(exc)}")


def unexpected_error(exc: Exception, *, url: str, setting: str) -> ModelError | None:
    """For an exception that escaped the SDK without becoming one of its own errors.
    None means: a programming error, re-raise it as it is."""
    bad = bad_url_error(exc, url=url, setting=setting)
    if bad is not None:
        return bad
    leaves = _leaves(exc)
    if any(isinstance(leaf, _BUGS) for leaf in leaves):
        return None
    if all(_from_http_stack(leaf) for leaf in leaves):
        return TransientError(f"connection failed: {describe(exc)}")
    return BadRequestError(
        f"unexpected failure reaching {public_url(url)} ({describe(exc)}); check {setting}"
    )


__all__ = [
    "bad_url_error",
    "broke_off",
    "connection_error",
    "describe",
    "public_url",
    "unexpected_error",
]
