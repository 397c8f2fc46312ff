"""tests/log_guard.py, proven on a few tests of its own run by a pytest of their own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = """
import logging

import pytest


@pytest.fixture
def noisy_teardown():
    yield
    logging.getLogger("sambatune.ui.tasks").error("closing failed")


def test_warnings_pass():
    logging.getLogger("sambatune.remote").warning("only a warning")


def test_an_error_fails():
    logging.getLogger("sambatune.ui.tasks").error("Connect failed unexpectedly")


def test_an_error_in_teardown_fails(noisy_teardown):
    pass


@pytest.mark.expect_log_errors
def test_expected_errors_pass():
    logging.getLogger("qt").error("meant")


@pytest.mark.expect_log_errors("meant")
def test_only_the_expected_text_passes():
    logging.getLogger("qt").error("meant")
    logging.getLogger("qt").critical("not this one")


def test_paramikos_own_errors_are_not_counted():
    logging.getLogger("paramiko.transport").error("Socket exception: Connection reset by peer")
"""


def test_the_guard_fails_unexpected_errors_only(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(TESTS)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "log_guard",
            "-p",
            "no:cacheprovider",
            "-o",
            "markers=expect_log_errors",
            "-q",
            "-rA",
            "test_sample.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(Path(__file__).parent), "PATH": "/usr/bin:/bin"},
    )
    # A failure of the guard is an error in the test's teardown, after its call passed.
    failed = {
        line.split("::")[1].split()[0]
        for line in done.stdout.splitlines()
        if line.startswith("ERROR test_sample.py::")
    }
    assert failed == {
        "test_an_error_fails",
        "test_an_error_in_teardown_fails",
        "test_only_the_expected_text_passes",
    }, done.stdout
    assert "6 passed, 3 errors" in done.stdout
    assert "ERROR sambatune.ui.tasks: Connect failed unexpectedly" in done.stdout
    assert "CRITICAL qt: not this one" in done.stdout
    assert "ERROR qt: meant" not in done.stdout
