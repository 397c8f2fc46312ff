"""The benchmark kinds are one registry: each kind is one module, found by itself, and
the form and the command line show what it declares."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

import sambatune.bench.kinds as kinds_package
from sambatune.bench.kinds import KINDS, _found
from sambatune.bench.kinds.kind import ROWS, BenchKind, RunRequest
from sambatune.bench.runner import Benchmark
from sambatune.cli.main import build_parser
from sambatune.errors import InvalidInput
from sambatune.ui.bench.form import BenchForm

NEW_KIND_MODULE = """
from sambatune.bench.kinds.kind import BenchKind, CommandLine

def _arguments(parser):
    parser.add_argument("--echoes", type=int, default=3)

KIND = BenchKind(
    name="zz-echo", order=15, title="Echo", explanation="Round trips.",
    rows=frozenset({"duration"}), engine="sambatune.bench.net:NetBenchmark",
    options=lambda request, context: None,
    cli=CommandLine(
        help="round trips", add_arguments=_arguments,
        options=lambda args, context, password: args.echoes,
    ),
)
"""


def _engines() -> set[str]:
    """The ``test`` names of the measuring engines in ``sambatune.bench``."""
    import importlib
    import pkgutil

    import sambatune.bench as bench

    for info in pkgutil.iter_modules(bench.__path__):
        if not info.ispkg:
            importlib.import_module(f"sambatune.bench.{info.name}")
    found: set[str] = set()
    todo = list(Benchmark.__subclasses__())
    while todo:
        engine = todo.pop()
        todo += engine.__subclasses__()
        if "test" in vars(engine):
            found.add(engine.test)
    return found


def test_every_engine_has_a_kind_and_every_kind_an_engine() -> None:
    assert set(KINDS) == _engines()


def test_a_new_module_with_a_kind_is_all_it_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zz_echo.py").write_text(NEW_KIND_MODULE)
    monkeypatch.setattr(kinds_package, "__path__", [*kinds_package.__path__, str(tmp_path)])
    try:
        found = _found()
    finally:
        sys.modules.pop("sambatune.bench.kinds.zz_echo", None)
    names = list(found)
    assert names.index("zz-echo") == names.index("net") + 1  # by its order
    # The command line gets its verb, with the SSH, method and JSON options every verb has.
    monkeypatch.setattr(kinds_package, "KINDS", found)
    args = build_parser(["bench"]).parse_args(
        ["bench", "zz-echo", "--host", "files1", "--echoes", "7", "--runs", "2", "--json"]
    )
    assert (args.bench_name, args.host, args.runs, args.json) == ("zz-echo", "files1", 2, True)
    assert found["zz-echo"].cli.options(args, None, None) == 7


def test_a_kind_names_only_rows_the_form_has() -> None:
    with pytest.raises(ValueError, match="weather"):
        BenchKind(
            "x",
            1,
            "X",
            "x",
            frozenset({"weather"}),
            engine="m:C",
            options=lambda *a: None,
            cli=KINDS["net"].cli,
        )


def test_the_command_line_has_a_verb_for_every_kind() -> None:
    parser = build_parser(["bench"])
    for name, kind in KINDS.items():
        where = ["--host", "h"] if kind.cli.over == "ssh" else ["--server", "h", "--share", "s"]
        args = parser.parse_args(["bench", name, "--runs", "2", *where])
        assert (args.runs, args.warmup) == (2, kind.cli.warmup)
        assert args.bench_name == name
    # "files" is the short verb of the small-file test: both names reach it.
    assert (
        parser.parse_args(["bench", "files"]).bench_name
        == parser.parse_args(["bench", "small-files"]).bench_name
    )


def test_the_form_shows_each_kind_its_rows_and_starts_it_with_its_defaults(qtbot: QtBot) -> None:
    form = BenchForm()
    qtbot.addWidget(form)
    assert [form.test.itemData(i) for i in range(form.test.count())] == list(KINDS)
    for kind in KINDS.values():
        form.select_test(kind.name)
        shown = {row for row in ROWS if form.form.isRowVisible(form.rows[row])}
        assert shown == kind.rows, kind.name
        assert (form.runs.value(), form.warmup.value()) == kind.method
        if "size" in kind.rows:
            assert form.file_size.text() == kind.defaults.get("size", "256MiB")


def test_a_hidden_row_is_not_read(qtbot: QtBot) -> None:
    """A directory typed for the disk test does not follow the person to the network test."""
    form = BenchForm()
    qtbot.addWidget(form)
    form.select_test("disk")
    form.directory.setText("/srv/typed-for-disk")
    form.select_test("net")
    form.direction.setCurrentIndex(form.direction.findData("upload"))
    request = form.request()
    assert request == RunRequest(test="net", runs=5, warmup=1, direction="upload")


def test_a_kind_refuses_what_cannot_run_before_anything_starts(qtbot: QtBot) -> None:
    form = BenchForm()
    qtbot.addWidget(form)
    form.select_test("small-files")
    form.share.setCurrentText("data")
    with pytest.raises(InvalidInput, match="Which SMB server"):
        form.request()
    form.server.setText("files1")
    form.count.setText("0")
    with pytest.raises(InvalidInput):
        form.request()
