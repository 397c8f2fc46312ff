"""The results database, CSV export, comparisons, and the bench/results command line."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench_sessions import record_sessions
from cli_process import ssh_args
from sambatune.appdirs import data_dir
from sambatune.bench.comparison import compare_sessions, config_changes
from sambatune.bench.context import BenchContext
from sambatune.bench.csv_export import RUN_COLUMNS, write_runs_csv, write_samples_csv
from sambatune.bench.records import BenchResult, RunRecord
from sambatune.bench.results_db import SCHEMA_VERSION, ResultsDatabase
from sambatune.bench.runner import Method, Recorder
from sambatune.errors import InvalidInput, SambaTuneError
from testbed.smbd import SmbServer

CONFIG = b"[global]\n  workgroup = X\n  socket options = SO_RCVBUF=8192\n\xff odd byte\n"


def make_result(
    rates: list[float],
    *,
    warmup: float = 1.0,
    test: str = "net",
    link: int | None = 10**9,
    parameters: dict[str, Any] | None = None,
) -> BenchResult:
    recorder = Recorder(
        test,
        "admin@files1:22",
        parameters or {"direction": "download"},
        Method(runs=len(rates), warmup=1),
        link,
    )
    recorder.declare("download", "Download (server to this computer)")
    for attempt, rate in enumerate([warmup, *rates], 1):
        recorder.record("download", attempt, seconds=2.0, bytes=int(rate * 2e6), details={"path": "direct"})
        recorder.sample("download", attempt, 0.5, int(rate * 5e5), rate * 1e6)
    return recorder.finish("download")


def test_run_record_is_the_books_table_row() -> None:
    run = RunRecord("get", 1, False, seconds=2.3, bytes=1812898, link_speed_bits=10_000_000)
    assert run.bytes_per_s == pytest.approx(788216.5, rel=1e-6)
    assert run.bits_per_s == pytest.approx(6305732.2, rel=1e-6)
    assert run.percent_of_link == pytest.approx(63.06, rel=1e-3)
    ops = RunRecord("list/1000", 2, True, seconds=0.5, operations=1000)
    assert ops.unit == "operations" and ops.operations_per_s == 2000 and ops.bytes_per_s is None


def test_client_planner_reads_a_net_result() -> None:
    from sambatune.client.measure import bandwidth_from_result

    data = json.loads(json.dumps(make_result([100.0, 102.0, 98.0]).to_json()))
    bits, where = bandwidth_from_result(data)
    assert bits == pytest.approx(800e6) and where == "summary.mean_bits_per_s"


def test_method_refuses_nonsense() -> None:
    with pytest.raises(InvalidInput):
        Method(runs=0)
    with pytest.raises(InvalidInput):
        Method(runs=3, warmup=-1)
    assert [Method(runs=2, warmup=2).is_warmup(a) for a in (1, 2, 3, 4)] == [True, True, False, False]


def test_summary_counts_only_the_counted_runs() -> None:
    result = make_result([100.0, 102.0, 98.0], warmup=10.0)
    summary = result.to_json()["summary"]
    assert summary["mean_bytes_per_s"] == pytest.approx(100e6)
    assert summary["stdev_bytes_per_s"] == pytest.approx(2e6)
    assert [r["run"] for r in summary["runs"]] == [1, 2, 3]
    assert summary["warmup_runs"][0]["bytes_per_s"] == pytest.approx(10e6)
    assert summary["mean_percent_of_link"] == pytest.approx(80.0)
    assert {"bytes", "seconds", "bytes_per_s"} <= set(summary["runs"][0])


def test_sessions_round_trip_with_the_exact_config(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "results.sqlite3")
    assert database.schema_version == SCHEMA_VERSION
    context = BenchContext(data_address="10.0.0.5", smb_conf_path="/etc/samba/smb.conf", smb_conf=CONFIG)
    result = make_result([100.0, 101.0])
    session = database.save(result, context, note="baseline")
    assert result.session_id == session
    stored = database.load(session)
    assert stored.smb_conf == CONFIG  # bytes, not text: an odd byte survives
    assert stored.note == "baseline" and stored.server == "admin@files1:22"
    assert stored.result.to_json()["summary"] == result.to_json()["summary"]
    assert len(stored.result.samples) == 3
    assert stored.result.series["download"].runs[0].details == {"path": "direct"}
    listed = database.sessions()
    assert [s.id for s in listed] == [session] and listed[0].mean == pytest.approx(100.5e6)
    assert database.servers()[0]["sessions"] == 1
    database.set_note(session, "changed")
    assert database.load(session).note == "changed"
    database.delete(session)
    with pytest.raises(InvalidInput, match="no benchmark session"):
        database.load(session)


def test_results_live_next_to_the_applied_versions(tmp_path: Path) -> None:
    assert ResultsDatabase().path == data_dir() / "results.sqlite3"
    assert str(data_dir()).startswith(os.environ["SAMBATUNE_HOME"])


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    ResultsDatabase(path)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SambaTuneError, match="newer SambaTune"):
        ResultsDatabase(path)


def test_csv_has_one_row_per_run_and_flags_warmups(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "r.sqlite3")
    session = database.save(make_result([100.0, 101.0, 99.0, 100.5, 99.5, 160.0]))
    out = io.StringIO()
    assert write_runs_csv([database.load(session)], out) == 7
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == RUN_COLUMNS
    assert [r["warmup"] for r in rows] == ["yes"] + ["no"] * 6
    assert [r["run"] for r in rows] == ["", "1", "2", "3", "4", "5", "6"]
    assert rows[-1]["outlier"] == "yes" and rows[1]["outlier"] == "no"
    assert float(rows[1]["bits_per_s"]) == pytest.approx(800e6)
    assert float(rows[1]["percent_of_link"]) == pytest.approx(80.0)
    samples = io.StringIO()
    assert write_samples_csv([database.load(session)], samples) == 7


def test_compare_shows_the_one_change(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "r.sqlite3")
    before_conf = b"[global]\n  socket options = SO_RCVBUF=8192\n# a comment\n"
    after_conf = b"[global]\n# a comment changed\n"
    before = database.save(
        make_result([100.0, 101.0, 99.0, 100.5, 99.5]),
        BenchContext("h", smb_conf_path="/s", smb_conf=before_conf),
    )
    after = database.save(
        make_result([120.0, 121.0, 119.0, 120.5, 119.5]),
        BenchContext("h", smb_conf_path="/s", smb_conf=after_conf),
    )
    found = compare_sessions(database.load(before), database.load(after))
    assert found.comparison.significant and found.comparison.verdict == "better"
    assert found.changed_lines == ["-  socket options = SO_RCVBUF=8192"]
    assert found.warnings == []
    data = found.to_json()
    assert data["before_session"] == before and data["series"] == "download"


def test_compare_warns_about_two_changes_and_a_different_test(tmp_path: Path) -> None:
    database = ResultsDatabase(tmp_path / "r.sqlite3")
    before = database.save(
        make_result([100.0, 101.0], parameters={"seconds": 5}),
        BenchContext("h", smb_conf=b"[g]\n a = 1\n b = 2\n"),
    )
    after = database.save(
        make_result([100.0, 101.0], parameters={"seconds": 10}),
        BenchContext("h", smb_conf=b"[g]\n a = 3\n b = 4\n"),
    )
    found = compare_sessions(database.load(before), database.load(after))
    assert any("2 settings changed" in w for w in found.warnings)
    assert any("seconds: 5 -> 10" in w for w in found.warnings)
    other = database.save(make_result([1.0], test="disk"))
    with pytest.raises(InvalidInput, match="only the same test"):
        compare_sessions(database.load(before), database.load(other))


def test_config_changes_ignore_comments() -> None:
    diff, changed = config_changes(b"a = 1\n# x\n", b"a = 2\n# y\n")
    assert changed == ["-a = 1", "+a = 2"]
    assert any(line.startswith("@@") for line in diff)


# -- the command line ------------------------------------------------------------------


def sambatune(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "sambatune", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=600,
        env=os.environ.copy(),
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"sambatune {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done


def check_summary_shape(data: dict[str, Any], *, with_bytes: bool = True) -> None:
    assert data["ok"] is True and isinstance(data["session_id"], int)
    summary = data["summary"]
    for key in ("mean_bytes_per_s", "stdev_bytes_per_s", "runs"):
        assert key in summary
    assert isinstance(summary["runs"], list) and summary["runs"]
    for run in summary["runs"]:
        assert {"bytes", "seconds", "bytes_per_s"} <= set(run)
        assert isinstance(run["seconds"], float)
        if with_bytes:
            assert isinstance(run["bytes"], int) and run["bytes"] > 0
            assert run["bytes_per_s"] == pytest.approx(run["bytes"] / run["seconds"])
    if with_bytes:
        assert summary["mean_bytes_per_s"] > 0 and summary["stdev_bytes_per_s"] >= 0


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_bench_verbs_print_the_promised_json(
    where: str, request: pytest.FixtureRequest, smbd: SmbServer, tmp_path: Path
) -> None:
    connection = [] if where == "local" else ssh_args(request.getfixturevalue("ssh_options"))
    conf = ["--config-path", str(smbd.config)]
    target = tmp_path / "target"
    target.mkdir()
    method = ["--runs", "2", "--warmup", "1"]
    runs = {
        "net": ["net", "--duration", "0.3"],
        "disk": ["disk", "--directory", str(target), "--size", "4MiB", "--files", "50"],
        "smb": ["smb", "--share", "bench", "--size", "4MiB", "--no-ceilings"],
        "dirscale": ["dirscale", "--share", "bench", "--files", "20,60", "--lookups", "5"],
        "sockbuf": ["sockbuf", "--duration", "0.2", "--sizes", "64KiB"],
    }
    sessions = []
    for test, args in runs.items():
        data = json.loads(
            sambatune("bench", *args, *method, *connection, *conf, "--json", "--note", f"cli {test}").stdout
        )
        assert data["test"] == test
        check_summary_shape(data, with_bytes=test != "dirscale")
        assert len(data["summary"]["runs"]) == 2
        assert data["parameters"]["runs"] == 2 and data["parameters"]["warmup"] == 1
        sessions.append(data["session_id"])
    assert list(target.iterdir()) == [] and list(smbd.share_path.iterdir()) == []

    listed = json.loads(sambatune("results", "list", "--json").stdout)["sessions"]
    assert [s["session_id"] for s in listed] == sessions[::-1]
    assert listed[-1]["note"] == "cli net"
    # The table's columns line up whatever the test's name ("dirscale", "net"): every
    # row has its mean and its run count end where the header's do.
    table = sambatune("results", "list").stdout.splitlines()
    header = table[0]
    ends = (header.index("Mean") + len("Mean"), header.index("Runs") + len("Runs"))
    for row in table[1:]:
        assert row[ends[0] - 1] != " " and row[ends[1] - 1] == "2", (header, row)
        assert row[ends[1] :].startswith("  cli "), row
    shown = json.loads(sambatune("results", "show", str(sessions[2]), "--config", "--json").stdout)
    assert shown["smb_conf"] == smbd.config.read_text()
    assert shown["smb_conf_path"] == str(smbd.config)
    text = sambatune("results", "show", str(sessions[0])).stdout
    assert "Download (server to this computer)" in text and "Average" in text
    exported = sambatune("results", "export", str(sessions[0]), str(sessions[1])).stdout
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert {r["test"] for r in rows} == {"net", "disk"}
    compared = json.loads(
        sambatune("results", "compare", str(sessions[0]), str(sessions[0]), "--json").stdout
    )
    assert compared["verdict"] == "no real difference" and compared["changed_lines"] == []


def test_cli_reports_errors_as_json() -> None:
    done = sambatune("bench", "disk", "--json", check=False)
    assert done.returncode == 1
    error = json.loads(done.stdout)
    assert error["ok"] is False and error["error"]["code"] == "invalid-input"
    assert "--share NAME or --directory PATH" in error["error"]["message"]
    missing = sambatune("results", "show", "999", "--json", check=False)
    assert json.loads(missing.stdout)["error"]["code"] == "invalid-input"


def test_unreachable_port_mentions_the_ssh_fallback_flag(tmp_path: Path) -> None:
    done = sambatune("bench", "net", "--duration", "0.2", "--data-address", "127.0.0.2", check=False)
    assert done.returncode == 1
    assert "could not open its own TCP connection" in done.stderr
    assert "--through-ssh" in done.stderr


def test_bench_verbs_do_not_import_qt() -> None:
    code = (
        "import sys; from sambatune.cli.main import build_parser; build_parser();"
        "import sambatune.cli.bench, sambatune.cli.results, sambatune.bench.net,"
        " sambatune.bench.smb, sambatune.bench.dirscale, sambatune.bench.sockbuf,"
        " sambatune.bench.results_db, sambatune.bench.comparison;"
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_results_list_lines_up_whatever_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    """Tests named 'smb-client', notes of any length: the columns still line up."""
    from sambatune.cli.main import main

    record_sessions(ResultsDatabase())
    assert main(["results", "list"]) == 0
    table = capsys.readouterr().out.splitlines()
    header = table[0]
    mean_end, runs_end = header.index("Mean") + len("Mean"), header.index("Runs") + len("Runs")
    assert len(table) == 6 and any(" smb-client " in row for row in table)
    for row in table[1:]:
        assert row[mean_end - 1] == "s" and row[mean_end] == " ", (header, row)  # "... MB/s" or "ops/s"
        assert row[runs_end - 1].isdigit() and (len(row) == runs_end or row[runs_end] == " "), row
