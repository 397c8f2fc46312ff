"""The bottleneck verdict from real measurements of a server with the classic fixed
socket buffers (``troubled_smbd``: SO_SNDBUF=8192 SO_RCVBUF=8192): SMB crawls far
below the disk and the network, so the limit named is Samba's side (the SMB row), not
the slowest layer, and the advice names the buffers of the smb.conf that ran.

The same sessions are read by ``sambatune results bottleneck`` and by the Bottleneck
panel, so the two cannot disagree."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from pytestqt.qtbot import QtBot

from cli_process import sambatune_cli, ssh_args
from sambatune.bench.results_db import ResultsDatabase
from sambatune.remote.connection import ConnectionOptions
from sambatune.ui.bench.bottleneck_panel import BottleneckPanel
from table_items import item_at
from testbed.smbd import SmbServer

if TYPE_CHECKING:
    from conftest import Screenshot

BUFFERS = "socket options = SO_RCVBUF=8192 SO_SNDBUF=8192"


@pytest.fixture
def measured(troubled_smbd: SmbServer, ssh_options: ConnectionOptions) -> str:
    """A network test and an SMB test (with its disk ceilings) of the troubled server,
    recorded; the server's label."""
    connect = ssh_args(ssh_options)
    config = str(troubled_smbd.config)
    net = sambatune_cli(
        "bench", "net", *connect, "--config-path", config, "--duration", "1",
        "--runs", "2", "--warmup", "0", "--size", "64MiB", "--json",
    )  # fmt: skip
    assert net.returncode == 0, net.stdout[-2000:] + net.stderr[-2000:]
    smb = sambatune_cli(
        "bench", "smb", *connect, "--config-path", config, "--share", troubled_smbd.share,
        "--size", "4MiB", "--runs", "2", "--warmup", "0", "--json",
    )  # fmt: skip
    assert smb.returncode == 0, smb.stdout[-2000:] + smb.stderr[-2000:]
    label = json.loads(smb.stdout)["target"]
    assert json.loads(net.stdout)["target"] == label
    return str(label)


def test_fixed_socket_buffers_are_named_as_the_limit(
    measured: str, qtbot: QtBot, screenshot: Screenshot
) -> None:
    done = sambatune_cli("results", "bottleneck", measured, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {row["name"]: row for row in report["rows"]}
    smb_row = f"SMB {report['direction']}"
    smb = rows[smb_row]["ceiling_bytes_per_s"]
    slowest = next(row for row in report["rows"] if row["limits"])
    # What the server did: SMB far below every measured layer.
    assert smb < 0.5 * slowest["ceiling_bytes_per_s"], report
    # What SambaTune says: Samba's side limits, the mark on the SMB row, the buffers named.
    assert report["limiting"] in ("smb processing", "cpu")
    assert report["limit_row"] == smb_row != slowest["name"]
    assert BUFFERS in report["advice"][0] and "8.0 KiB" in report["advice"][0]
    assert report["figures"]["socket_options"] == "SO_RCVBUF=8192 SO_SNDBUF=8192"

    text = sambatune_cli("results", "bottleneck", measured)
    assert text.returncode == 0, text.stderr
    assert f"Limit: {report['limiting']}." in text.stdout
    [smb_line] = [line for line in text.stdout.splitlines() if line.startswith(smb_row)]
    assert smb_line.endswith("<- limits")
    [slowest_line] = [line for line in text.stdout.splitlines() if line.startswith(slowest["name"] + " ")]
    assert slowest_line.endswith("slowest layer")

    database = ResultsDatabase()
    sessions = [database.load(s.id) for s in database.sessions(server=measured)]
    panel = BottleneckPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show_results(sessions)
    assert panel.direction.currentData() == report["direction"]
    marks = {
        item_at(panel.table, r, 0).text(): item_at(panel.table, r, panel.table.columnCount() - 1).text()
        for r in range(panel.table.rowCount())
    }
    assert marks[smb_row] == "◀ limits" and marks[slowest["name"]] == "slowest layer"
    verdict = panel.verdict.text()
    assert f"Limit: {report['limiting']}." in verdict and BUFFERS in verdict
    panel.show()
    qtbot.wait(100)
    screenshot(panel, "bench-bottleneck-buffers")
