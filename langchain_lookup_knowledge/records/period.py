"""Durations and instants of the command line: ``7d``, ``12h``, ``90d``, ``2026-11-30``.

Example:
    >>> parse_duration("90d").days, parse_duration("36h").total_seconds()
    (90, 129600.0)
    >>> parse_instant("2026-11-30", now=datetime(2026, 12, 1, tzinfo=UTC)).isoformat()
    '2026-11-30T00:00:00+00:00'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from langchain_lookup_knowledge.errors import LookupKnowledgeError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION_DAYS = 36_500
"""The longest duration accepted (100 years): farther back than any record."""


def parse_duration(text: str) -> timedelta:
    """``N`` followed by s, m, h, d or w, at most :data:`MAX_DURATION_DAYS` days; anything else
    is a clear error."""
    match = _DURATION.match(text or "")
    if not match:
        raise LookupKnowledgeError(
            f"invalid duration {text!r}: use a number and a unit s, m, h, d or w (e.g. 7d, 12h)"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds <= 0:
        raise LookupKnowledgeError(f"invalid duration {text!r}: must be more than zero")
    if seconds > MAX_DURATION_DAYS * 86400:
        raise LookupKnowledgeError(
            f"invalid duration {text!r}: at most {MAX_DURATION_DAYS}d (100 years); "
            f"{MAX_DURATION_DAYS}d already reaches every record"
        )
    return timedelta(seconds=seconds)


def parse_instant(text: str, *, now: datetime) -> datetime:
    """A duration back from ``now`` (``7d``) or an ISO date/time (UTC unless it says)."""
    if _DURATION.match(text or ""):
        return now - parse_duration(text)
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LookupKnowledgeError(
            f"invalid time {text!r}: use a duration (7d) or an ISO date (2026-11-30)"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Period:
    """The half-open window ``[since, until)`` a report covers (UTC)."""

    since: datetime
    until: datetime

    @classmethod
    def parse(
        cls, since: str = "7d", until: str | None = None, *, now: datetime | None = None
    ) -> Period:
        """``--since`` / ``--until`` as given on the command line (durations back from now).

        Example:
            >>> p = Period.parse("7d", now=datetime(2026, 12, 1, tzinfo=UTC))
            >>> p.since.date().isoformat(), p.until.date().isoformat()
            ('2026-11-24', '2026-12-01')
        """
        now = now or datetime.now(UTC)
        end = parse_instant(until, now=now) if until else now
        start = parse_instant(since, now=now)  # a duration is always back from now
        if start >= end:
            raise LookupKnowledgeError(f"empty period: --since {since} is not before --until")
        return cls(start, end)
