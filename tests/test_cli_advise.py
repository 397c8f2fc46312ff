"""``sambatune advise`` against the real test bed: a running smbd whose smb.conf carries
known problems, judged on this computer and over real SSH."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from cli_process import sambatune_cli, ssh_args
from sambatune.advisor.gather import explicit_from_file, gather_inputs
from sambatune.remote.connection import ConnectionOptions
from sambatune.remote.local import LocalTransport
from testbed.smbd import SmbServer
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser
from testbed.troubled import with_problems


def by_id(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for item in report["findings"]:
        found.setdefault(item["id"], []).append(item)
    return found


def assert_known_problems_found(report: dict[str, Any], server: SmbServer) -> None:
    assert report["ok"] is True
    assert report["config_path"] == str(server.config)
    assert report["samba_version"].count(".") == 2
    found = by_id(report)

    [buffers] = found["socket-options-fixed-buffers"]
    assert buffers["severity"] == "problem"
    assert buffers["change"] == {
        "kind": "smb.conf",
        "section": "global",
        "parameter": "socket options",
        "action": "unset",
        "value": None,
    }
    assert buffers["evidence"][0]["value"] == "SO_RCVBUF=8192 SO_SNDBUF=8192"

    [logging] = found["log-level-high"]
    assert logging["severity"] == "warning"
    assert logging["change"] == {
        "kind": "smb.conf",
        "section": "global",
        "parameter": "log level",
        "action": "set",
        "value": "1",
    }
    assert logging["evidence"][0]["text"] == "log level = 3 in [global]"

    [syncing] = found["sync-always"]
    assert syncing["severity"] == "warning"
    assert syncing["subject"] == server.share
    assert syncing["change"] == {
        "kind": "smb.conf",
        "section": server.share,
        "parameter": "sync always",
        "action": "unset",
        "value": None,
    }
    texts = " ".join(e["text"] for e in syncing["evidence"])
    assert f"sync always = yes in [{server.share}]" in texts
    assert "strict sync = yes" in texts

    # Most urgent first.
    order = ["problem", "warning", "suggestion", "info"]
    severities = [f["severity"] for f in report["findings"]]
    assert severities == sorted(severities, key=order.index)
    for item in (buffers, logging, syncing):
        assert item["expected_effect"] and item["effect_source"] and item["risk"]
        assert item["sources"]


def test_advise_finds_the_known_problems_on_this_computer(troubled_smbd: SmbServer) -> None:
    result = sambatune_cli("advise", "--config-path", str(troubled_smbd.config), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert_known_problems_found(report, troubled_smbd)
    assert report["target"] == "this computer"


def test_advise_finds_the_known_problems_over_ssh(
    troubled_smbd: SmbServer, ssh_options: ConnectionOptions
) -> None:
    result = sambatune_cli(
        "advise", *ssh_args(ssh_options), "--config-path", str(troubled_smbd.config), "--json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert_known_problems_found(report, troubled_smbd)
    assert report["target"].endswith(f"127.0.0.1:{ssh_options.port}")


def test_the_clean_test_bed_has_none_of_those_findings(fresh_smbd: SmbServer) -> None:
    result = sambatune_cli("advise", "--config-path", str(fresh_smbd.config), "--json")
    assert result.returncode == 0, result.stderr
    found = by_id(json.loads(result.stdout))
    assert not {"socket-options-fixed-buffers", "log-level-high", "sync-always"} & set(found)
    # Without measurements the advisor says what to measure, once per kind.
    assert {
        "measure-network-path",
        "measure-client-window",
        "measure-directory-scaling",
        "measure-throughput",
    } <= set(found)


def test_text_report_is_grouped_by_severity(troubled_smbd: SmbServer, tmp_path: Path) -> None:
    measurements = tmp_path / "measured.json"
    measurements.write_text(
        json.dumps(
            {
                "throughput": {
                    "smb_read": {"mean_bytes_per_second": 3.0e7, "source": "5 runs"},
                    "network": {"mean_bytes_per_second": 1.17e8},
                },
            }
        )
    )
    result = sambatune_cli(
        "advise",
        "--config-path",
        str(troubled_smbd.config),
        "--measurements",
        str(measurements),
        "--bandwidth",
        "1gbit",
        "--rtt",
        "2ms",
        "--client-window",
        "64KiB",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("PROBLEMS") < out.index("WARNINGS") < out.index("FOR INFORMATION")
    assert max(len(line) for line in out.splitlines() if line.startswith("    ")) <= 100
    out = " ".join(out.split())  # phrases may wrap across lines
    assert "Fixed socket buffers switch off TCP auto-tuning" in out
    assert "32.8 Mbit/s at the measured round trip of 2 ms" in out
    assert "[global] remove 'socket options' (back to the default)" in out
    assert "[global] log level = 1" in out
    assert f"Every write waits for the disk (sync always with strict sync) [{troubled_smbd.share}]" in out
    assert "(client-window-below-bdp)" in out
    assert "SMB reads reach only 26% of what the network allows" in out
    assert "Not judged yet: bandwidth" not in out


def test_bad_options_give_one_clear_line(fresh_smbd: SmbServer, tmp_path: Path) -> None:
    result = sambatune_cli("advise", "--config-path", str(fresh_smbd.config), "--rtt", "2ms")
    assert result.returncode == 1
    assert result.stderr.startswith("sambatune: Give both --bandwidth and --rtt")
    missing = sambatune_cli("advise", "--config-path", str(tmp_path / "nope.conf"), "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "invalid-input"
    assert "does not exist" in missing.stderr
    broken = tmp_path / "broken.conf"
    broken.write_text("[global]\n  oplocks = maybe\n")
    rejected = sambatune_cli("advise", "--config-path", str(broken))
    assert rejected.returncode == 1
    assert rejected.stderr.startswith("sambatune: testparm rejects")
    assert "Traceback" not in rejected.stderr + missing.stderr + result.stderr


# --- gathering the inputs ----------------------------------------------------------------


@pytest.mark.usefixtures("local_catalog_cached")
def test_gathering_reads_what_testparm_cannot_report(tmp_path: Path) -> None:
    config = tmp_path / "smb.conf"
    config.write_text(
        "[global]\n"
        "  debug level = 2\n"
        "  read size = 16384\n"
        "  share modes = no\n"
        "  strict sync = no\n"
        "[data]\n"
        "  path = /tmp\n"
        "  # log level = 9 is a comment, not a setting\n"
        "  read prediction = \\\n"
        "     yes\n"
    )
    explicit = explicit_from_file(LocalTransport(), str(config))
    assert explicit["global"]["log level"] == "2"
    assert explicit["global"]["read size"] == "16384"
    assert explicit["global"]["share modes"] == "no"
    assert explicit["global"]["strict sync"] == "no"
    assert explicit["data"]["read prediction"] == "yes"
    assert explicit["data"]["path"] == "/tmp"


def test_gathered_inputs_hold_the_files_log_level_and_the_server(fresh_smbd: SmbServer) -> None:
    fresh_smbd.config.write_text(with_problems(fresh_smbd))
    inputs = gather_inputs(LocalTransport(), config_path=str(fresh_smbd.config))
    assert inputs.config.global_value("log level") == "3"
    assert inputs.config.effective["global"]["log level"] == "3"
    assert inputs.config.value(fresh_smbd.share, "sync always") == "yes"
    assert inputs.config.value(fresh_smbd.share, "strict sync") == "yes"
    assert inputs.server.samba_version is not None
    assert inputs.server.os_system == "Linux"
    assert "net.ipv4.tcp_rmem" in inputs.server.tcp


@pytest.mark.usefixtures("local_catalog_cached")
def test_gathering_follows_includes_and_samba_s_line_rules(tmp_path: Path) -> None:
    extra = tmp_path / "extra.conf"
    extra.write_text("[Data]\n  log level = 9\n")
    config = tmp_path / "smb.conf"
    config.write_text(
        f"log level = 1\n[Globals]\n; debuglevel = 7\nDebug Level = 4 \\\n  auth:5\ninclude = {extra}\n"
    )
    explicit = explicit_from_file(LocalTransport(), str(config))
    assert explicit["global"]["log level"] == "4 auth:5"
    assert "log level" not in explicit.get("Data", explicit.get("data", {}))


def test_a_file_only_root_can_read_is_read_with_sudo(
    sshd_password: SshServer, sudo_user: SudoUser, tmp_path: Path
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sambatune-advise-"))
    try:
        folder.chmod(0o755)
        config = folder / "smb.conf"
        config.write_text("[global]\n  log level = 5\n  read raw = no\n")
        config.chmod(0o600)
        secret = sudo_user.password + "\n"
        result = sambatune_cli(
            "advise",
            "--host",
            f"{sudo_user.name}@127.0.0.1:{sshd_password.port}",
            "--known-hosts",
            str(tmp_path / "kh"),
            "--accept-new-host-key",
            "--password-stdin",
            "--sudo-password-stdin",
            "--config-path",
            str(config),
            "--json",
            stdin=secret + secret,
        )
    finally:
        shutil.rmtree(folder)
    assert result.returncode == 0, result.stderr
    found = by_id(json.loads(result.stdout))
    assert found["log-level-high"][0]["severity"] == "problem"
    assert found["smb1-parameter-without-smb1"][0]["evidence"][0]["parameter"] == "read raw"
    assert sudo_user.password not in result.stdout + result.stderr


def test_advise_reads_the_benchmarks_on_record_that_ran_with_this_smb_conf(troubled_smbd: SmbServer) -> None:
    """Figures measured earlier with exactly this smb.conf judge the throughput rules;
    a session run with another smb.conf is left out, and --ignore-recorded drops them."""
    from bench_sessions import record_sessions
    from sambatune.bench.results_db import ResultsDatabase

    # The first session (72 MB/s over the network) ran with another smb.conf.
    recorded = record_sessions(
        ResultsDatabase(), server="this computer", after_conf=troubled_smbd.config.read_bytes()
    )

    result = sambatune_cli("advise", "--config-path", str(troubled_smbd.config), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert sorted(report["recorded_sessions"]) == sorted([recorded.after, recorded.disk, recorded.smb_client])
    throughput = report["measurements"]["throughput"]
    assert throughput["network"]["mean_bytes_per_second"] > 110e6  # after, not before (72)
    assert f"session {recorded.after}, run with this smb.conf" in throughput["network"]["source"]
    assert throughput["smb_read"]["mean_bytes_per_second"] > 100e6
    assert throughput["disk_read"]["mean_bytes_per_second"] > 170e6
    assert "measure-throughput" not in by_id(report)
    assert_known_problems_found(report, troubled_smbd)

    text = sambatune_cli("advise", "--config-path", str(troubled_smbd.config))
    assert "Measured: stored benchmark sessions" in text.stdout

    ignored = json.loads(
        sambatune_cli(
            "advise", "--config-path", str(troubled_smbd.config), "--ignore-recorded", "--json"
        ).stdout
    )
    assert ignored["recorded_sessions"] == [] and ignored["measurements"].get("throughput") in (None, {})
    assert "measure-throughput" in by_id(ignored)
