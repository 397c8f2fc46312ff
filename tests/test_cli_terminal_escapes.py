"""Escape sequences a hostile server puts in smb.conf never reach the terminal raw.

Text output shows control characters (``^[`` for ESC, like ``cat -v``); JSON keeps the
exact value, escaped. Real processes, a real smb.conf, a real smbd and its testparm.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sambatune.cli.output import (
    TerminalProgress,
    data_stdout,
    escape_json_controls,
    terminal_safe_streams,
)
from testbed.smbd import SmbServer

# Each test runs the CLI as a process of its own: a second or more each.
pytestmark = pytest.mark.slow

# Retitle the window, clear the screen, write the clipboard (OSC 52), move the cursor,
# an 8-bit CSI (U+009B), DEL, a backspace that would hide what came before.
HOSTILE = "hi \x1b]0;owned\x07 \x1b[2J\x1b[H \x1b]52;c;ZXZpbA==\x07 \x9b31m \x7f \x08\x08spoofed"
HOSTILE_PATH = "/srv/x\x1b]0;path\x07"
# What a terminal must never receive: C0 controls but tab and newline, DEL, C1 (UTF-8).
RAW = (
    [bytes([c]) for c in range(0x20) if c not in (0x09, 0x0A)]
    + [b"\x7f"]
    + [chr(c).encode() for c in range(0x80, 0xA0)]
)


def sambatune(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "sambatune", *args], capture_output=True, timeout=300)


def assert_no_raw_controls(*outputs: bytes) -> None:
    for output in outputs:
        found = [c for c in RAW if c in output]
        assert not found, f"raw control characters {found} in {output[:2000]!r}"


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


@pytest.fixture
def hostile_conf(tmp_path: Path) -> Path:
    path = tmp_path / "smb.conf"
    path.write_text(
        f"[global]\n  workgroup = W\n[evil]\n  path = {HOSTILE_PATH}\n  comment = {HOSTILE}\n",
        encoding="utf-8",
        newline="\n",
    )
    return path


def test_effective_text_shows_the_escapes_and_json_keeps_them(hostile_conf: Path) -> None:
    text = sambatune("conf", "effective", str(hostile_conf))
    assert text.returncode == 0, text.stderr
    assert_no_raw_controls(text.stdout, text.stderr)
    shown = text.stdout.decode()
    assert "comment = hi ^[]0;owned^G ^[[2J^[[H ^[]52;c;ZXZpbA==^G \\x9b31m ^? ^H^Hspoofed" in shown
    assert "path = /srv/x^[]0;path^G" in shown

    for verb in ("effective", "lint"):
        as_json = sambatune("conf", verb, str(hostile_conf), "--json")
        assert_no_raw_controls(as_json.stdout, as_json.stderr)
        assert as_json.stdout.isascii() or b"\xc2\x9b" not in as_json.stdout
    data = json.loads(sambatune("conf", "effective", str(hostile_conf), "--json").stdout)
    assert data["evil"]["comment"] == HOSTILE
    assert data["evil"]["path"] == HOSTILE_PATH


def test_lint_text_shows_them_too(hostile_conf: Path) -> None:
    with hostile_conf.open("a", encoding="utf-8") as handle:
        handle.write(f"  no such parameter \x1b[31m = {HOSTILE}\n")
    result = sambatune("conf", "lint", str(hostile_conf))
    assert_no_raw_controls(result.stdout, result.stderr)
    assert "^[[31m" in result.stdout.decode()


@pytest.fixture
def hostile_smbd(fresh_smbd: SmbServer) -> SmbServer:
    """The test's own smbd with a share whose comment and path carry escapes."""
    fresh_smbd.stop()
    fresh_smbd.start(
        fresh_smbd.default_config() + f"\n[evil]\n  comment = {HOSTILE}\n  path = {HOSTILE_PATH}\n"
    )
    assert "evil" in fresh_smbd.list_shares()
    return fresh_smbd


def test_survey_of_a_hostile_smbd(hostile_smbd: SmbServer) -> None:
    text = sambatune("survey", "--config-path", str(hostile_smbd.config))
    assert text.returncode == 0, text.stderr
    assert_no_raw_controls(text.stdout, text.stderr)
    assert "[evil] /srv/x^[]0;path^G" in text.stdout.decode()

    as_json = sambatune("survey", "--config-path", str(hostile_smbd.config), "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert_no_raw_controls(as_json.stdout, as_json.stderr)
    shares = {s["name"]: s for s in json.loads(as_json.stdout)["samba"]["shares"]}
    assert shares["evil"]["path"] == HOSTILE_PATH


def test_testparm_refusing_a_hostile_file_in_text_and_json(
    hostile_smbd: SmbServer,
    tmp_path: Path,
) -> None:
    """testparm quotes the bad line back; the refusal, the diff and the errors carry it."""
    candidate = tmp_path / "bad.conf"
    candidate.write_bytes(hostile_smbd.config.read_bytes() + b"\n[broken\x1b[8mhidden\n")
    args = ("conf", "apply", "--file", str(candidate), "--remote-path", str(hostile_smbd.config), "--yes")
    text = sambatune(*args)
    assert text.returncode == 1
    assert_no_raw_controls(text.stdout, text.stderr)
    assert "[broken^[[8mhidden" in text.stdout.decode()

    as_json = sambatune(*args, "--json")
    assert as_json.returncode == 1
    assert_no_raw_controls(as_json.stdout, as_json.stderr)
    outcome = json.loads(as_json.stdout)
    assert outcome["status"] == "refused"
    assert any("[broken\x1b[8mhidden" in s for s in strings_in(outcome))


def test_errors_are_shown_the_same_way(tmp_path: Path) -> None:
    missing = tmp_path / "gone\x1b]0;title\x07.conf"
    result = sambatune("conf", "lint", str(missing), "--verbose")
    assert result.returncode == 1
    assert_no_raw_controls(result.stdout, result.stderr)
    assert "gone^[]0;title^G.conf" in result.stderr.decode()
    as_json = sambatune("conf", "lint", str(missing), "--json")
    assert_no_raw_controls(as_json.stdout, as_json.stderr)
    assert str(missing) in json.loads(as_json.stdout)["error"]["message"]


def test_json_escapes_del_and_c1_yet_reads_back_the_same() -> None:
    value = {"k\x9b": "a\x7fb\x85c\x9fd é \x1b"}
    text = escape_json_controls(json.dumps(value, ensure_ascii=False))
    assert not any(c in text for c in "\x7f\x85\x9b\x9f\x1b")
    assert "é" in text
    assert json.loads(text) == value


def test_the_progress_line_keeps_its_carriage_returns_and_shows_the_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    with terminal_safe_streams(json_stdout=False):
        progress = TerminalProgress(enabled=True)
        progress.update(0.5, "reading \x1b]0;x\x07share")
        progress.done()
    written = captured.getvalue()
    assert written.startswith("\r[") and written.endswith("\r")
    assert "reading ^[]0;x^Gshare" in written
    assert "\x1b" not in written and "\x07" not in written
    assert sys.stderr is captured


def test_data_without_an_output_file_stays_exact_in_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CSV and HTML exports are files' worth of data: a pipe gets their exact bytes."""
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stdout", piped)
    with terminal_safe_streams(json_stdout=False):
        data_stdout().write("note,\x1b[2J\n")
        print("said \x1b[2J")
    assert piped.getvalue() == "note,\x1b[2J\nsaid ^[[2J\n"


FORGED = "2025-01-01 00:00:00,000 INFO sambatune.cli.run: sambatune survey exit status 0"


def test_a_path_from_the_server_forges_no_line_in_the_report_or_the_log(
    fresh_smbd: SmbServer, tmp_path: Path
) -> None:
    """An smbd started from a folder whose name holds a line break and an escape: every
    line SambaTune prints or logs is its own, and no escape reaches either raw (issue
    27 item 5)."""
    from sambatune.logfile import cli_log_path

    folder = tmp_path / f"srv\n{FORGED}\n  PROBLEM  forged: \x1b[2J"
    folder.mkdir()
    text = fresh_smbd.config.read_text()
    fresh_smbd.stop()
    fresh_smbd.config = folder / "smb.conf"
    fresh_smbd.start(text)
    result = sambatune("survey", "--config-path", str(fresh_smbd.config))
    assert result.returncode == 0, result.stderr
    assert_no_raw_controls(result.stdout, result.stderr)
    shown = result.stdout.decode()
    assert "srv^J" + FORGED in shown  # the path, on its line
    assert not [line for line in shown.splitlines() if line.startswith((FORGED, "  PROBLEM  forged"))]

    # An error that quotes the path goes to the log with its traceback.
    failed = sambatune("advise", "--config-path", str(folder / "missing.conf"))
    assert failed.returncode == 1
    assert_no_raw_controls(failed.stdout, failed.stderr)
    log = cli_log_path().read_bytes()
    assert b"missing.conf" in log and b"Traceback (most recent call last):" in log
    assert_no_raw_controls(log)
    assert not [line for line in log.decode().splitlines() if line.startswith("2025-01-01")]


def test_the_log_keeps_each_record_on_its_own_lines() -> None:
    import logging

    from sambatune.logfile import LogFormatter

    record = logging.LogRecord("t", logging.ERROR, __file__, 1, "path %s", (f"/x\n{FORGED}\x1b[2J",), None)
    try:
        raise RuntimeError(f"bad\n{FORGED}\u2028\x1b]0;t\x07")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    lines = LogFormatter().format(record).splitlines()
    assert lines[0].endswith("path /x") and lines[1] == "    " + FORGED + "^[[2J"
    assert "Traceback (most recent call last):" in lines
    assert not [line for line in lines if line.startswith("2025-")]
    assert lines[-1] == f"    {FORGED}\\u2028^[]0;t^G"
