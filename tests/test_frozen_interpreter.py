"""The bundled program runs ``-u -c CODE`` itself, as local agents need (see test_bundle)."""

from __future__ import annotations

import sys

import pytest

from sambatune.frozen_interpreter import run_python_command_line


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "argv", list(sys.argv))


def test_runs_code_with_its_arguments_when_frozen(frozen: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_python_command_line(["-u", "-c", "import sys; print(__name__, sys.argv)", "x"])
    assert capsys.readouterr().out == "__main__ ['-c', 'x']\n"


def test_the_codes_exit_status_is_the_programs(frozen: None) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_python_command_line(["-c", "raise SystemExit(3)"])
    assert exit_info.value.code == 3


def test_other_command_lines_are_left_to_the_cli(frozen: None) -> None:
    assert not run_python_command_line(["survey", "--json"])
    assert not run_python_command_line(["-u"])
    assert not run_python_command_line([])


def test_does_nothing_unless_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert not run_python_command_line(["-c", "raise SystemExit(5)"])
