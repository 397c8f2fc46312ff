"""The type of the ``screenshot`` fixture (tests/conftest.py), for the tests that take it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # conftest imports this module: no Qt for the tests that have no GUI
    from PySide6.QtGui import QPixmap


class Grabbable(Protocol):
    """A widget, or anything else that paints itself into a picture."""

    def grab(self) -> QPixmap: ...


#: ``screenshot(widget, name)`` saves the picture as artifacts/screenshots/NAME.png.
Screenshot = Callable[[Grabbable, str], Path]
