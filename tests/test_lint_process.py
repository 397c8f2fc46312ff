"""The editor's lint in a child process: the same findings as lint in this process,
includes read by the parent, and a child that dies or is stopped never hangs a check."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from sambatune.cancellation import CancelToken
from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import EffectiveConfig, IncludeStatus, effective_view
from sambatune.conf.includes import IncludeResult, LocalIncludes
from sambatune.conf.lint import Finding, lint
from sambatune.conf.lint_process import LintProcess
from sambatune.errors import Cancelled, SambaTuneError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from conf_parse import generate

CORPUS = Path(__file__).parent / "data" / "smbconf_corpus"


@pytest.fixture
def process() -> Iterator[LintProcess]:
    lint_process = LintProcess()
    yield lint_process
    lint_process.close()


def _in_this_process(
    document: SmbConfDocument,
    reader: LocalIncludes | None = None,
) -> tuple[EffectiveConfig, list[Finding]]:
    catalog = load_bundled()
    view = effective_view(document, catalog, read_include=reader)
    return view, lint(document, catalog, view=view)


def test_real_files_get_the_findings_lint_gives_here(process: LintProcess) -> None:
    catalog = load_bundled()
    files = sorted(CORPUS.glob("*.conf"))[:40]
    assert len(files) == 40
    for path in files:
        data = path.read_bytes()
        document = SmbConfDocument.parse(data, str(path))
        view, expected = _in_this_process(document)
        summary = process.check(data, str(path), catalog, None)
        assert summary.findings == expected, path.name
        assert summary.section_settings["global"] == len(view.global_section.own_settings())
        for key, section in view.sections.items():
            assert summary.section_settings[key] == len(section.own_settings()), (path, key)


def test_a_large_generated_file(process: LintProcess) -> None:
    text = generate(20_000)
    document = SmbConfDocument.parse(text, "big.conf")
    _view, expected = _in_this_process(document)
    summary = process.check(text.encode(), "big.conf", load_bundled(), None)
    assert summary.findings == expected
    assert len(summary.section_settings) > 1000


def test_includes_are_read_by_the_parent_and_linked_to_its_documents(
    process: LintProcess, tmp_path: Path
) -> None:
    shares = tmp_path / "shares.conf"
    shares.write_text("[data]\n   path = /srv/data\n   socket options = SO_RCVBUF=8192\n")
    main = tmp_path / "smb.conf"
    main.write_text(f"[global]\n   include = {shares}\n   include = {tmp_path}/missing.conf\n")
    reader = LocalIncludes()
    asked: list[str] = []

    def counting(path: str) -> IncludeResult:
        asked.append(path)
        return reader(path)

    document = SmbConfDocument.parse(main.read_bytes(), str(main))
    _view, expected = _in_this_process(document, LocalIncludes())
    summary = process.check(main.read_bytes(), str(main), load_bundled(), counting)
    assert summary.findings == expected
    assert any(f.file == str(shares) for f in summary.findings)
    assert [(link.path, link.status) for link in summary.includes] == [
        (str(shares), "followed"),
        (f"{tmp_path}/missing.conf", "missing"),
    ]
    # The document is the one this side read: the editor opens it from there.
    assert summary.includes[0].document is reader(str(shares))
    assert summary.includes[0].document.render() == shares.read_bytes()
    assert summary.includes[1].document is None
    assert asked == [str(shares), f"{tmp_path}/missing.conf"]
    assert summary.section_settings["data"] == 2


def test_a_failing_reader_fails_the_check_and_the_next_check_works(
    process: LintProcess, tmp_path: Path
) -> None:
    data = b"[global]\n   include = /etc/samba/other.conf\n   log level = 1\n"

    def broken(path: str) -> NoReturn:
        raise SambaTuneError("The connection to the server was lost.")

    with pytest.raises(SambaTuneError, match="connection to the server was lost"):
        process.check(data, "smb.conf", load_bundled(), broken)
    summary = process.check(b"[global]\n   log level = 1\n", "smb.conf", load_bundled(), None)
    assert summary.section_settings == {"global": 1}


def test_a_child_that_dies_mid_check_fails_it_and_a_new_one_starts(process: LintProcess) -> None:
    catalog = load_bundled()
    process.check(b"[global]\n", None, catalog, None)
    first = process._process
    assert first is not None
    # Dead between checks: started again without a word.
    first.kill()
    first.wait()
    assert process.check(b"[global]\n", None, catalog, None).section_settings == {"global": 0}
    second = process._process
    assert second is not None and second.pid != first.pid
    outcome = _check_in_thread(process, generate(50_000).encode(), catalog, second.kill)
    assert isinstance(outcome, SambaTuneError) and not isinstance(outcome, Cancelled)
    assert "background check of smb.conf stopped" in outcome.message
    summary = process.check(b"[global]\n   workgroup = X\n", None, catalog, None)
    assert summary.section_settings == {"global": 1}


def _check_in_thread(
    process: LintProcess, data: bytes, catalog: ParameterCatalog, meanwhile: Callable[[], object]
) -> BaseException | None:
    """Run a check on a thread, call ``meanwhile`` while it runs; what the check raised."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            process.check(data, None, catalog, None, CancelToken())
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.05)
    meanwhile()
    worker.join(5)
    assert not worker.is_alive()
    assert len(outcome) == 1
    return outcome[0]


def test_close_during_a_check_stops_it_and_the_child(process: LintProcess) -> None:
    text = generate(50_000).encode()
    catalog = load_bundled()
    process.check(b"[global]\n", None, catalog, None)  # started, catalog sent
    child = process._process
    started = time.monotonic()
    outcome = _check_in_thread(process, text, catalog, process.close)
    assert time.monotonic() - started < 1.5
    assert isinstance(outcome, Cancelled)
    assert child is not None and child.poll() is not None
    with pytest.raises(Cancelled):
        process.check(b"[global]\n", None, catalog, None)


class CatalogTheChildCannotRead(ParameterCatalog):
    """Pickled by reference to this test module, which the child cannot import."""


@pytest.mark.expect_log_errors
def test_an_error_inside_the_child_comes_back_as_a_message(process: LintProcess) -> None:
    catalog = load_bundled()
    unreadable = CatalogTheChildCannotRead.__new__(CatalogTheChildCannotRead)
    unreadable.__dict__.update(catalog.__dict__)
    with pytest.raises(
        SambaTuneError,
        match=r"check of smb\.conf failed: the parameter catalog "
        r"could not be read",
    ):
        process.check(b"[global]\n", None, unreadable, None)
    assert process.check(b"[global]\n", None, catalog, None).findings == lint(
        SmbConfDocument.parse(b"[global]\n"), catalog
    )


def test_close_never_waits_for_a_check_that_is_reading_an_include(process: LintProcess) -> None:
    """The editor closes on the GUI thread while a check may wait on a slow server for an
    included file: closing returns at once, and the check ends cancelled when the read does."""
    catalog = load_bundled()
    reading, release = threading.Event(), threading.Event()

    def slow(path: str) -> tuple[IncludeStatus, str]:
        reading.set()
        release.wait(10)
        return "missing", ""

    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            process.check(b"[global]\n   include = /srv/slow.conf\n", None, catalog, slow)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert reading.wait(10)
    child = process._process
    started = time.monotonic()
    process.close()
    assert time.monotonic() - started < 0.5
    release.set()
    worker.join(10)
    assert not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
    assert child is not None and child.poll() is not None
