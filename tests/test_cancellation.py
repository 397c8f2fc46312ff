"""The cancel flag: callbacks run once, each of them, and a failing one is not hidden."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from sambatune.cancellation import CancelToken


def _failing(error: Exception, ran: list[str], name: str) -> Callable[[], None]:
    def callback() -> None:
        ran.append(name)
        raise error

    return callback


def test_every_callback_runs_and_a_failing_one_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    token = CancelToken()
    ran: list[str] = []
    token.on_cancel(_failing(OSError("the channel is closed already"), ran, "gone"))
    token.on_cancel(_failing(RuntimeError("a bug"), ran, "bug"))
    token.on_cancel(lambda: ran.append("last"))
    with caplog.at_level(logging.WARNING, logger="sambatune.cancellation"):
        token.cancel()
        token.cancel()  # once only
    assert ran == ["gone", "bug", "last"]
    [record] = caplog.records
    assert record.exc_info is not None and "a bug" in str(record.exc_info[1])
    assert "may still run" in record.getMessage()


def test_a_callback_given_after_the_cancel_runs_at_once(caplog: pytest.LogCaptureFixture) -> None:
    token = CancelToken()
    token.cancel()
    ran: list[str] = []
    with caplog.at_level(logging.WARNING, logger="sambatune.cancellation"):
        unregister = token.on_cancel(_failing(ValueError("late"), ran, "late"))
    unregister()
    assert ran == ["late"]
    assert [str(record.exc_info[1]) for record in caplog.records if record.exc_info] == ["late"]


def test_an_unregistered_callback_does_not_run() -> None:
    token = CancelToken()
    ran: list[str] = []
    unregister = token.on_cancel(lambda: ran.append("no"))
    unregister()
    token.cancel()
    assert ran == [] and token.cancelled
