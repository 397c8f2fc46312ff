"""Measurements go where the chosen smbd listens, not to 127.0.0.1: an smbd with ``bind
interfaces only`` on another address (127.0.0.5 here) is measured from the server's side
(its own smbclient) and from this computer (SambaTune's client) at that address."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_process import sambatune_cli, ssh_args
from sambatune.bench.context import BenchContext
from sambatune.remote.connection import ConnectionOptions
from sambatune.remote.survey import Survey
from sambatune.ui.overview_page import listening_text
from testbed.ports import free_port
from testbed.smbd import GLOBAL_TEMPLATE, SHARE_TEMPLATE, SmbServer

CONFIG = "/etc/samba/smb.conf"


def context(data_address: str, *listening: tuple[str, int]) -> BenchContext:
    instance: dict[str, object] = {
        "config": CONFIG,
        "managed": True,
        "listening": [{"address": address, "port": port} for address, port in listening],
    }
    survey = Survey("admin@files1", {"samba": {"instances": [instance], "running": True}})
    return BenchContext(data_address, survey=survey, smb_conf_path=CONFIG)


@pytest.mark.parametrize(
    ("ssh_address", "listening", "on_server", "from_here"),
    [
        # Every address: loopback on the server, the SSH address from here.
        ("192.0.2.10", [("0.0.0.0", 445), ("::", 445)], "127.0.0.1", "192.0.2.10"),
        # bind interfaces only on the SSH address.
        ("192.0.2.10", [("192.0.2.10", 445), ("127.0.0.1", 445)], "192.0.2.10", "192.0.2.10"),
        # ...on another network than SSH's: its own address, never loopback from here.
        ("192.0.2.10", [("127.0.0.1", 445), ("198.51.100.7", 445)], "127.0.0.1", "198.51.100.7"),
        # This computer is the server, smbd on 127.0.0.5 only.
        ("127.0.0.1", [("127.0.0.5", 4455)], "127.0.0.5", "127.0.0.5"),
        # Only the port in use counts: 139 on loopback is not where 445 is served.
        ("192.0.2.10", [("127.0.0.1", 139), ("198.51.100.7", 445)], "198.51.100.7", "198.51.100.7"),
    ],
)
def test_one_place_decides_where_smb_is_measured(
    ssh_address: str, listening: list[tuple[str, int]], on_server: str, from_here: str
) -> None:
    chosen = context(ssh_address, *listening)
    assert chosen.smb_address() == on_server
    assert chosen.client_smb_address() == from_here


def test_the_overview_names_addresses_and_ports() -> None:
    def shown(*listening: tuple[str, int]) -> str:
        return listening_text({"listening": [{"address": a, "port": p} for a, p in listening]})

    assert shown(("0.0.0.0", 445), ("::", 445), ("0.0.0.0", 139)) == "*:139, *:445"
    assert shown(("127.0.0.5", 4455)) == "127.0.0.5:4455"
    assert shown(("::1", 445)) == "[::1]:445"


@pytest.fixture
def bound_smbd(tmp_path: Path) -> Iterator[SmbServer]:
    server = SmbServer(tmp_path, "smbd-127-0-0-5", port=free_port(), listen_address="127.0.0.5")
    global_section = GLOBAL_TEMPLATE.format(port=server.port, dir=server.dir, interfaces="127.0.0.5/8")
    server.start(global_section + SHARE_TEMPLATE.format(dir=server.dir))
    yield server
    server.stop()


def test_measured_at_the_address_smbd_is_bound_to(
    bound_smbd: SmbServer, ssh_options: ConnectionOptions, tmp_path: Path
) -> None:
    """smbd serves 127.0.0.5 only (bind interfaces only); SSH reaches this machine at
    127.0.0.1. The SMB test on the server and the wizard's small-file baseline from here
    both find it there."""
    connect = ssh_args(ssh_options)
    config = str(bound_smbd.config)
    assert "bind interfaces only = yes" in bound_smbd.config.read_text()
    surveyed = sambatune_cli("survey", *connect, "--config-path", config, "--json")
    assert surveyed.returncode == 0, surveyed.stderr
    [instance] = [i for i in json.loads(surveyed.stdout)["samba"]["instances"] if i["config"] == config]
    assert {p["address"] for p in instance["listening"]} == {"127.0.0.5"}

    smb = sambatune_cli(
        "bench", "smb", *connect, "--config-path", config, "--share", "bench",
        "--size", "1MiB", "--runs", "2", "--warmup", "0", "--no-ceilings", "--json",
    )  # fmt: skip
    assert smb.returncode == 0, smb.stdout[-2000:] + smb.stderr[-2000:]
    assert json.loads(smb.stdout)["summary"]["mean_bytes_per_s"] > 0

    started = sambatune_cli(
        "wizard", "start", *connect, "--config-path", config, "--share", "bench",
        "--test", "files", "--files", "50", "--runs", "2", "--warmup", "0", "--json",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    baseline = sambatune_cli(
        "wizard", "next", str(json.loads(started.stdout)["wizard_id"]), *connect, "--json"
    )
    assert baseline.returncode == 0, baseline.stdout[-2000:] + baseline.stderr[-2000:]
    assert json.loads(baseline.stdout)["stage"] == "choose"
