"""How far a long action has come: one event type for benchmarks, client plans and applies."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """Progress of the whole action, 0..1 (None when unknown), and what it is doing.

    ``remaining``: the seconds still to go, as the action estimates them from what it
    has done so far (None until it can say); an empty ``message`` changes no text.
    """

    fraction: float | None
    message: str
    remaining: float | None = None
