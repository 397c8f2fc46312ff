"""A cancel flag shared between whoever runs a long job and whoever may stop it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from sambatune.errors import Cancelled

Item = TypeVar("Item")


def _run_callback(callback: Callable[[], None]) -> None:
    """A callback stops something. One whose target is gone already (a closed channel or
    socket) has nothing left to stop; any other failure may have left work running, so
    it is logged with its traceback, and the other callbacks still run."""
    try:
        callback()
    except (OSError, EOFError):
        pass
    except Exception:
        # Imported here: logging costs a command-line verb 4 ms at start-up, and this
        # is the module's only message.
        import logging

        logging.getLogger(__name__).warning(
            "A cancel callback failed; what it was to stop may still run.", exc_info=True
        )


class CancelToken:
    """Set once, seen everywhere. Long jobs call :meth:`raise_if_cancelled` between steps.

    Callbacks registered with :meth:`on_cancel` run once, in the thread that cancels;
    transports use them to close a channel or kill a process so a blocked read returns.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run_callback(callback)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when cancelled (at once if already). Returns an unregister function."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def unregister() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return unregister
        _run_callback(callback)
        return lambda: None

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if cancelled meanwhile."""
        return self._event.wait(seconds)


def checked(items: Iterable[Item], cancel: CancelToken | None, every: int = 4096) -> Iterator[Item]:
    """Yield ``items``, raising :class:`Cancelled` (checked every ``every`` items) once cancelled.

    For long pure-Python loops a caller may want to stop, such as an editor's check of
    a large file that the next keystroke makes useless.
    """
    if cancel is None:
        yield from items
        return
    for count, item in enumerate(items):
        if not count % every:
            cancel.raise_if_cancelled()
        yield item
