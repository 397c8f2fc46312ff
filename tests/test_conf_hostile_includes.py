"""Includes that name what is no smb.conf: devices, FIFOs, folders, giants, endless chains.

Each gives a lint finding on the include's own line, quickly, in little memory, and
leaves no process behind, on this computer and over real SSH. The depth limit is
checked against the installed testparm on the same files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import MAX_INCLUDE_DEPTH, IncludeReader, effective_view
from sambatune.conf.includes import (
    FILE_SIZE_LIMIT,
    INCLUDES_SIZE_LIMIT,
    LocalIncludes,
    TransportIncludes,
)
from sambatune.conf.lint import Finding, lint
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.local import LocalTransport
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.regular_file import read_local
from testbed.processes import processes_mentioning

# Generous: the work is milliseconds; an unbounded read of /dev/zero takes minutes.
SECONDS = 20.0
# Well above one file at the size limit, far below what /dev/zero would make of it.
PEAK_BYTES = 4 * FILE_SIZE_LIMIT
NewReader = Callable[[], "LocalIncludes | TransportIncludes"]


def catalog() -> ParameterCatalog:
    return load_bundled("4.17")


@pytest.fixture(params=["local-files", "local-transport", "ssh"])
def reader_for(request: pytest.FixtureRequest) -> Iterator[NewReader]:
    """Makes fresh include readers: LocalIncludes, or TransportIncludes here or over SSH."""
    if request.param == "local-files":
        yield LocalIncludes
        return
    if request.param == "local-transport":
        local = LocalTransport()
        yield lambda: TransportIncludes(local)
        return
    options: ConnectionOptions = request.getfixturevalue("ssh_options")
    target = open_target(options, NoPrompts())
    yield lambda: TransportIncludes(target)
    target.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)  # readable by the SSH user too
    return tmp_path


def bounded_lint(text: str, reader: IncludeReader) -> list[Finding]:
    """Lint ``text`` as main.conf, asserting it takes little time and memory."""
    document = SmbConfDocument(text, "main.conf")
    tracemalloc.start()
    start = time.monotonic()
    try:
        found = lint(document, catalog(), read_include=reader)
        elapsed = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < SECONDS, f"lint took {elapsed:.1f} s"
    assert peak < PEAK_BYTES, f"lint peaked at {peak / 2**20:.0f} MiB"
    return found


def about_includes(found: list[Finding]) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in found if f.code.startswith("include")]


def test_devices_fifos_and_folders_are_named_not_read(reader_for: NewReader, folder: Path) -> None:
    fifo = folder / "pipe.conf"
    os.mkfifo(fifo)
    (folder / "folder.conf").mkdir()
    after = folder / "after.conf"
    after.write_text("workgroup = AFTER\n")
    text = (
        f"[global]\n\tworkgroup = BEFORE\n\tinclude = /dev/zero\n\tinclude = /dev/urandom\n"
        f"\tinclude = {fifo}\n\tinclude = {folder}/folder.conf\n\tinclude = {after}\n"
    )
    found = bounded_lint(text, reader_for())
    assert about_includes(found) == [
        (3, "include-not-regular"),
        (4, "include-not-regular"),
        (5, "include-not-regular"),
        (6, "include-not-regular"),
    ]
    messages = {f.line: f.message for f in found}
    assert "/dev/zero is a character device" in messages[3]
    assert "skips the include" in messages[3]
    assert f"{fifo} is a FIFO" in messages[5] and "wait" in messages[5]
    assert "is a directory" in messages[6]
    assert all(f.severity == "warning" and f.file is None for f in found if f.code == "include-not-regular")
    # The walk carried on past them: the include after them was read.
    view = effective_view(SmbConfDocument(text, "main.conf"), catalog(), read_include=reader_for())
    assert view.global_section.value("workgroup") == "AFTER"
    assert not processes_mentioning(str(fifo))


def test_an_include_over_the_size_limit_is_reported(reader_for: NewReader, folder: Path) -> None:
    big = folder / "big.conf"
    with open(big, "wb") as handle:  # sparse: a claimed size costs no disk
        handle.truncate(FILE_SIZE_LIMIT + 1)
    exact = folder / "exact.conf"
    exact.write_bytes(b"workgroup = EXACT\n" + b"#" * (FILE_SIZE_LIMIT - 19) + b"\n")
    assert exact.stat().st_size == FILE_SIZE_LIMIT
    found = bounded_lint(f"[global]\ninclude = {exact}\n\n include = {big}\n", reader_for())
    assert about_includes(found) == [(4, "include-too-large")]
    assert "larger than 8 MiB" in found[0].message


def test_includes_together_have_a_budget(reader_for: NewReader, folder: Path) -> None:
    """100 nested files at the size limit would be 800 MiB: the total is capped too."""
    each = FILE_SIZE_LIMIT * 3 // 4
    lines = ["[global]"]
    for number in range(INCLUDES_SIZE_LIMIT // each + 1):
        part = folder / f"part{number}.conf"
        part.write_bytes(f"comment = part {number}\n".encode() + b"#" * (each - 40) + b"\n")
        lines.append(f"include = {part}")
    reader = reader_for()
    found = bounded_lint("\n".join(lines) + "\n", reader)
    last = len(lines)
    assert about_includes(found) == [(last, "include-too-large")]
    assert "together pass 16 MiB" in found[0].message
    assert reader.total <= INCLUDES_SIZE_LIMIT


def chain(folder: Path, length: int) -> Path:
    """main.conf including inc1.conf including ... inc<length>.conf; each sets workgroup."""
    for number in range(1, length + 1):
        text = f"workgroup = W{number}\n"
        if number < length:
            text += f"include = {folder}/inc{number + 1}.conf\n"
        (folder / f"inc{number}.conf").write_text(text)
    main = folder / "main.conf"
    main.write_text(f"[global]\n\tworkgroup = W0\n\tinclude = {folder}/inc1.conf\n")
    return main


def run_testparm(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["testparm", "-s", str(path)], capture_output=True, text=True, timeout=60)


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("length", [MAX_INCLUDE_DEPTH, MAX_INCLUDE_DEPTH + 1])
def test_include_depth_is_testparms(length: int, reader_for: NewReader, folder: Path) -> None:
    main = chain(folder, length)
    document = SmbConfDocument(main.read_bytes(), str(main))
    found = lint(document, catalog(), read_include=reader_for())
    result = run_testparm(main)
    if length == MAX_INCLUDE_DEPTH:
        assert result.returncode == 0, result.stderr
        assert f"workgroup = W{length}" in result.stdout
        assert not [f for f in found if f.severity == "error"]
        return
    assert result.returncode != 0
    assert f"Maximum include depth ({MAX_INCLUDE_DEPTH}) exceeded!" in result.stderr
    assert "Error loading services" in result.stderr
    deep = [f for f in found if f.code == "include-too-deep"]
    assert [(f.file, f.line, f.severity) for f in deep] == [
        (f"{folder}/inc{MAX_INCLUDE_DEPTH}.conf", 2, "error")
    ]
    assert "Maximum include depth (100) exceeded!" in deep[0].message


def test_read_local_stops_at_the_limit_even_where_the_size_lies() -> None:
    """/proc files claim size 0 and hold more; the read still ends at limit + 1."""
    found = read_local("/proc/self/maps", 10)
    assert found.kind == "too large" and found.data == b""
    assert read_local("/proc/self/stat", 1 << 20).kind == "file"


# -- the command line ----------------------------------------------------------------------


def sambatune(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sambatune", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_lint_reports_hostile_includes_and_refuses_hostile_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    main = tmp_path / "smb.conf"
    main.write_text(f"[global]\ninclude = /dev/zero\ninclude = {fifo}\n")
    result = sambatune("conf", "lint", str(main), "--samba-version", "4.17")
    assert "Traceback" not in result.stderr
    assert f"{main}:2:" in result.stdout and "include-not-regular" in result.stdout
    assert f"{main}:3:" in result.stdout and "FIFO" in result.stdout
    for path, words in (
        ("/dev/zero", "is a character device"),
        (str(fifo), "is a FIFO"),
        (str(tmp_path), "is a directory"),
    ):
        refused = sambatune("conf", "lint", path, "--samba-version", "4.17")
        assert refused.returncode == 1, refused.stdout
        assert "Traceback" not in refused.stderr and words in refused.stderr
    big = tmp_path / "big.conf"
    with open(big, "wb") as handle:
        handle.truncate(FILE_SIZE_LIMIT + 1)
    refused = sambatune("conf", "effective", str(big), "--samba-version", "4.17")
    assert refused.returncode == 1 and "larger than 8 MiB" in refused.stderr
    assert not processes_mentioning(str(fifo))


def spellings(path: Path, count: int) -> list[str]:
    """``count`` ways of writing the same absolute path."""
    parent, name = str(path.parent), path.name
    forms = [
        f"{parent}/{name}",
        f"{parent}//{name}",
        f"{parent}/./{name}",
        f"{parent}/../{path.parent.name}/{name}",
    ]
    forms += [f"{parent}/{'./' * i}{name}" for i in range(2, count)]
    return forms[:count]


def test_one_file_under_nine_spellings_is_one_loop(reader_for: NewReader, folder: Path) -> None:
    """Each spelling used to count as another file: the walk grew like n! (9: about 10^6)."""
    main = folder / "main.conf"
    main.write_text("[global]\n  workgroup = W\n" + "".join(f"  include = {s}\n" for s in spellings(main, 9)))
    found = bounded_lint(main.read_text(), reader_for())
    assert about_includes(found) and all(code == "include-loop" for _, code in about_includes(found))


def test_files_that_each_include_the_next_twice_stay_bounded(reader_for: NewReader, folder: Path) -> None:
    """2^30 walks if followed blindly; SambaTune stops at its budget and says so."""
    depth = 30
    for level in range(depth):
        text = f"  comment = level {level}\n"
        if level + 1 < depth:
            following = folder / f"level{level + 1}.conf"
            text += f"  include = {following}\n  include = {following}\n"
        (folder / f"level{level}.conf").write_text(text)
    found = bounded_lint(f"[global]\n  include = {folder / 'level0.conf'}\n", reader_for())
    assert [code for _, code in about_includes(found)] == ["include-too-many"]
