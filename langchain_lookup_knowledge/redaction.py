"""One place that knows what a secret looks like in text, and masks it.

Credentials reach this package inside URLs (``http://user:password@host`` as a Milvus URI or an
OpenAI base URL, ``postgresql://app:password@db/records``) and as settings values (the Milvus
token, the OpenAI key). Every sink that shows text to someone (CLI errors, the tool message the
model reads, ``tool_invocation`` rows, traces, log records) passes it through :func:`redact`
first; clients get URLs with the userinfo split off by :func:`split_userinfo`.

Example:
    >>> redact("cannot reach http://admin:s3cret@milvus:19530 (timeout)")
    'cannot reach http://admin:***@milvus:19530 (timeout)'
    >>> mask_url("postgresql+psycopg://app:pw@db:5432/records")
    'postgresql+psycopg://app:***@db:5432/records'
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import unquote

MASK = "***"

# scheme://user:password@  (the password may itself hold '@' or ':'; the authority ends at the
# first '/', '?', '#' or whitespace, so the greedy password runs to the last '@' before it).
_USERINFO = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^\s/?#@:'\"]*):(?P<password>[^\s/?#'\"]*)@"
)

_KNOWN_SECRETS: set[str] = set()
_SECRETS_LONGEST_FIRST: tuple[str, ...] = ()  # replaced whole under the lock, read without it
_KNOWN_LOCK = threading.Lock()
_MIN_SECRET_CHARS = 4


def register_secret(value: str | None) -> None:
    """Remember ``value`` so :func:`redact` masks it wherever it appears (a key, a token).

    Example:
        >>> register_secret("sk-doctest-123")
        >>> redact("bad key sk-doctest-123")
        'bad key ***'
    """
    global _SECRETS_LONGEST_FIRST
    if value and len(value) >= _MIN_SECRET_CHARS:
        with _KNOWN_LOCK:
            _KNOWN_SECRETS.add(value)
            _SECRETS_LONGEST_FIRST = tuple(sorted(_KNOWN_SECRETS, key=len, reverse=True))


def _mask_userinfo(match: re.Match[str]) -> str:
    return f"{match['scheme']}{match['user']}:{MASK}@"


def redact(text: str) -> str:
    """``text`` with URL passwords and every registered secret replaced by ``***``."""
    if not text:
        return text
    # Only text holding "://" can hold a URL password (most record strings hold none).
    masked = _USERINFO.sub(_mask_userinfo, text) if "://" in text else text
    for secret in _SECRETS_LONGEST_FIRST:
        if secret in masked:
            masked = masked.replace(secret, MASK)
    return masked


def mask_url(url: str | None) -> str | None:
    """``url`` with its password masked (``None`` stays ``None``)."""
    return None if url is None else redact(url)


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its userinfo, and the (decoded) user and password it held.

    Example:
        >>> split_userinfo("http://root:Mil%40vus@127.0.0.1:19530")
        ('http://127.0.0.1:19530', 'root', 'Mil@vus')
        >>> split_userinfo("./milvus.db")
        ('./milvus.db', None, None)
    """
    match = re.match(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#]*)@", url)
    if match is None:
        return url, None, None
    user, sep, password = match["userinfo"].partition(":")
    register_secret(unquote(password) if sep else None)
    rest = url[match.end() :]
    return match["scheme"] + rest, unquote(user), (unquote(password) if sep else None)


def describe_exception(exc: BaseException, *, limit: int = 300, with_type: bool = True) -> str:
    """One line saying what went wrong, for a user, a model or a record: the exception's type
    and the first line of its message (at most ``limit`` characters of it), redacted.

    Example:
        >>> describe_exception(ConnectionError("no route to http://u:pw@db:5432\\nretry"))
        'ConnectionError: no route to http://u:***@db:5432'
        >>> describe_exception(TimeoutError()), describe_exception(OSError("disk"), with_type=False)
        ('TimeoutError', 'disk')
    """
    message = getattr(exc, "message", None)  # pymilvus errors keep their text there, unwrapped
    text = message if isinstance(message, str) and message.strip() else str(exc)
    lines = text.strip().splitlines()
    first = redact(lines[0])[:limit] if lines else ""  # masked whole: no secret cut in half
    if not first:
        return type(exc).__name__
    return f"{type(exc).__name__}: {first}" if with_type else first


def redact_value(value: Any) -> Any:
    """A JSON-like value (dict, list, str) with every string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in a record's message (attach it to a handler)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Render the message once, masked; never drops a record."""
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler
            return True
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


__all__ = [
    "MASK",
    "RedactingFilter",
    "describe_exception",
    "mask_url",
    "redact",
    "redact_value",
    "register_secret",
    "split_userinfo",
]
