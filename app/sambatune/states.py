"""The words SambaTune uses for states, as enums, so a misspelt state is a type error.

Their values are written to JSON, SQLite, log lines and the screen, and old records
are read back as plain strings: so every enum here is also a ``str`` whose text is its
value, and it compares equal to that plain string. ``enum.StrEnum`` would do this but
starts at Python 3.11; :class:`TextState` is the same for 3.10.

This module imports nothing from SambaTune: the states that two layers share (the
safe-apply pipeline and this computer's record of it, the bottom module
:mod:`sambatune.applied_versions`) live here so neither has to import the other.
"""

from __future__ import annotations

from enum import Enum


class TextState(str, Enum):
    """A state whose value is the text written wherever it goes."""

    # (str, Enum) alone gives 'Class.NAME' for str() and, from 3.11 on, for f-strings
    # and format() too, which would change every message, log line and padded column.
    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(str.__str__(self), format_spec)


class ApplyStatus(TextState):
    """How a run of the safe-apply pipeline ended (``ApplyOutcome.status``; also the
    ``outcome`` column of the applied_configs table)."""

    APPLIED = "applied"
    REFUSED = "refused"
    ROLLED_BACK = "rolled-back"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PLANNED = "planned"  # a dry run: what would happen, nothing changed


class LiveState(TextState):
    """Which bytes the server has after a run: the new version, the old one, or (the
    connection died mid-swap and could not be re-established) unknown.

    Rows recorded before SambaTune kept this have "" instead: readers take the column
    as a plain string and fall back for values they do not know."""

    NEW = "new"
    OLD = "old"
    UNKNOWN = "unknown"
