"""A test fails when something it ran logged an error nobody expected.

Errors the app catches are logged before they are shown (``sambatune.ui.tasks``, the
GUI's exception hooks), so a task that died of a bug while the test went on looking at
something else would otherwise pass unnoticed. Every record at ERROR or above that
reaches the root logger during a test (setup and teardown included: this fixture is
set up before the others and torn down after them) fails it.

A test that provokes errors on purpose says so::

    @pytest.mark.expect_log_errors             # any error records
    @pytest.mark.expect_log_errors("boom")     # only records whose text holds "boom"

paramiko's own records are not counted: it logs at ERROR from its transport thread
what SambaTune expects and turns into its own errors (a connection reset in a fault
test, a jump host refusing a forward, a port that speaks no SSH), and that thread may
log it after the test that caused it has ended.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

NOT_COUNTED = ("paramiko",)


class ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] not in NOT_COUNTED:
            self.records.append(record)


def _text(record: logging.LogRecord) -> str:
    text = f"{record.levelname} {record.name}: {record.getMessage()}"
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        text += f"\n    {type(error).__name__}: {error}"
    return text


@pytest.fixture(autouse=True)
def log_guard(request: pytest.FixtureRequest) -> Iterator[ErrorRecords]:
    collector = ErrorRecords()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        yield collector
    finally:
        root.removeHandler(collector)
    marker = request.node.get_closest_marker("expect_log_errors")
    if marker is None:
        unexpected = collector.records
    else:
        allowed = marker.args
        unexpected = [
            r for r in collector.records if allowed and not any(part in _text(r) for part in allowed)
        ]
    if unexpected:
        pytest.fail(
            f"{len(unexpected)} unexpected error(s) logged (mark the test with "
            "@pytest.mark.expect_log_errors if they are meant):\n" + "\n".join(_text(r) for r in unexpected),
            pytrace=False,
        )
