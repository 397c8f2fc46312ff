"""``sambatune client ...`` as a user runs it: JSON out, clear errors, nothing changed on the host.

Everything here either only reads this computer or plans for a forced profile; the
tests that write settings run inside network namespaces (test_client_netns.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sambatune.cli.main import main
from testbed.iperf3 import iperf3_result


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["client", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else out


def test_window_calculator_worked_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_cli(capsys, "window", "--bandwidth", "1gbit", "--rtt", "10ms", "--json")
    assert code == 0
    assert data["required_window"] == 1_250_000 and data["scale_shift"] == 5
    assert data["max_unscaled_window"] == 65_535 and data["max_window"] == 1_073_725_440
    code, data = run_cli(
        capsys, "window", "--bandwidth", "1gbit", "--rtt", "20ms", "--current", "64KiB", "--json"
    )
    assert data["current_throughput_bps"] == pytest.approx(26_214_400)


def test_bad_units_give_one_clear_json_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["client", "window", "--bandwidth", "100", "--rtt", "10ms", "--json"])
    captured = capsys.readouterr()
    assert code == 1
    error = json.loads(captured.out)["error"]
    assert error["code"] == "invalid-input" and "bits or bytes" in error["message"]
    assert "Traceback" not in captured.err


def test_show_reports_this_computer(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_cli(capsys, "show", "--json")
    assert code == 0
    assert data["os"]["family"] == "linux" and data["os"]["detected"]
    assert any(nic["name"] == "lo" for nic in data["interfaces"])
    rmem = next(s for s in data["settings"] if s["catalog_id"] == "linux-tcp-rmem")
    assert rmem["label"] == "honoured" and rmem["current"]["state"] == "present"


def test_show_for_a_profile_labels_without_reading(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_cli(capsys, "show", "--os", "windows-10", "--json")
    assert code == 0 and not data["can_apply"]
    labels = {s["catalog_id"]: s["label"] for s in data["settings"]}
    assert labels["tcpip-tcpwindowsize"] == "ignored"
    assert labels["netsh-autotuninglevel"] == "honoured"
    code, text = run_cli(capsys, "show", "--os", "windows-10")
    assert "TcpWindowSize is ignored" in " ".join(text.split())


@pytest.mark.parametrize(
    ("profile", "ignored", "planned"),
    [
        ("windows-10", "tcpip-tcpwindowsize", "netsh-autotuninglevel"),
        ("windows-xp", "netsh-autotuninglevel", "tcpip-tcpwindowsize"),
        ("windows-98", "tcpip-tcpwindowsize", "win9x-defaultrcvwindow"),
    ],
)
def test_plan_for_windows_profiles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: str, ignored: str, planned: str
) -> None:
    reg = tmp_path / "plan.reg"
    code, data = run_cli(
        capsys,
        "plan",
        "--bandwidth",
        "1gbit",
        "--rtt",
        "20ms",
        "--os",
        profile,
        "--reg-file",
        str(reg),
        "--json",
    )
    assert code == 0
    changes = {c["catalog_id"]: c for c in data["changes"]}
    assert changes[ignored]["label"] == "ignored" and changes[ignored]["action"] == "none"
    assert changes[planned]["label"] == "honoured" and changes[planned]["action"] == "set"
    assert data["window"]["required_window"] == 2_500_000
    assert data["os"]["detected"] is False
    assert any("example" in w for w in data["warnings"])
    raw = reg.read_bytes()
    if profile == "windows-98":
        assert raw.startswith(b"REGEDIT4\r\n")
    else:
        assert raw.startswith(b"\xff\xfeW\x00")
    assert data["reg_file"].replace("\n", "\r\n") in raw.decode(
        "cp1252" if profile == "windows-98" else "utf-16"
    )


def test_plan_needs_rtt_or_server(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["client", "plan", "--bandwidth", "1gbit", "--os", "windows-10", "--json"])
    assert code == 1
    error = json.loads(capsys.readouterr().out)["error"]
    # The message speaks of the input (the GUI shows it at the field); the flags are in
    # the details, which the command line prints.
    assert "round-trip time" in error["message"] and "--rtt" not in error["message"]
    assert "--rtt" in error["details"]


def test_a_plan_for_windows_is_not_applied_on_linux(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    run_cli(
        capsys,
        "plan",
        "--bandwidth",
        "1gbit",
        "--rtt",
        "20ms",
        "--os",
        "windows-10",
        "-o",
        str(plan),
        "--json",
    )
    code = main(["client", "apply", str(plan), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["error"]["code"] == "cannot-apply-here"
    code = main(["client", "apply", str(tmp_path / "missing.json"), "--json"])
    assert code == 1


def test_dry_run_of_a_plan_for_another_machine_shows_its_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    run_cli(
        capsys,
        "plan",
        "--bandwidth",
        "1gbit",
        "--rtt",
        "20ms",
        "--os",
        "windows-xp",
        "-o",
        str(plan),
        "--json",
    )
    code, data = run_cli(capsys, "apply", str(plan), "--dry-run", "--json")
    assert code == 0 and data["ok"] and data["dry_run"]
    assert "Windows XP" in data["message"] and "Nothing on" in data["message"]
    assert {s["status"] for s in data["steps"]} == {"planned"}
    operations = [op for s in data["steps"] for op in s["operations"]]
    assert (
        "registry: set HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\"
        "Parameters\\TcpWindowSize = REG_DWORD 0x00262974 (2500980)"
    ) in operations
    assert data["restart_needed"] == "reboot" and data["backup"] is None
    code, listed = run_cli(capsys, "backups", "--json")
    assert listed["backups"] == []


def test_apply_prints_the_same_text_as_the_page(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One rendering of an apply for both faces: each step, and exactly what it would run."""
    from sambatune.client.elevation import result_from_json
    from sambatune.client.reports import result_text

    plan = tmp_path / "plan.json"
    args = ["plan", "--bandwidth", "1gbit", "--rtt", "20ms", "--os", "windows-xp", "-o", str(plan), "--json"]
    run_cli(capsys, *args)
    _, data = run_cli(capsys, "apply", str(plan), "--dry-run", "--json")
    assert main(["client", "apply", str(plan), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert text == result_text(result_from_json(data)) + "\n"
    assert "[planned for that machine] HKLM\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters" in text


def test_dry_run_of_a_local_plan_changes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = subprocess.run(["sysctl", "-n", "net.ipv4.tcp_rmem"], capture_output=True, text=True).stdout
    plan = tmp_path / "plan.json"
    sysctl_dir = tmp_path / "sysctl.d"
    run_cli(
        capsys,
        "plan",
        "--bandwidth",
        "40gbit",
        "--rtt",
        "50ms",
        "--sysctl-dir",
        str(sysctl_dir),
        "-o",
        str(plan),
        "--json",
    )
    code, data = run_cli(capsys, "apply", str(plan), "--dry-run", "--sysctl-dir", str(sysctl_dir), "--json")
    assert code == 0 and data["dry_run"] and data["ok"]
    assert any(
        op.startswith("sysctl -w 'net.ipv4.tcp_rmem=") for s in data["steps"] for op in s["operations"]
    )
    assert data["backup_preview"]["settings"]
    after = subprocess.run(["sysctl", "-n", "net.ipv4.tcp_rmem"], capture_output=True, text=True).stdout
    assert before == after and not sysctl_dir.exists()
    code, listed = run_cli(capsys, "backups", "--json")
    assert listed["backups"] == []


@pytest.mark.slow  # a real iperf3 run
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_bandwidth_from_a_real_iperf3_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = iperf3_result(tmp_path)
    end = json.loads(result.read_text())["end"]
    measured = next(end[key]["bits_per_second"] for key in ("sum_received", "sum", "sum_sent") if key in end)
    code, data = run_cli(
        capsys, "plan", "--bandwidth-from", str(result), "--rtt", "10ms", "--os", "windows-10", "--json"
    )
    assert code == 0
    assert data["measurements"]["bandwidth_bps"] == measured
    assert "iperf3" in data["measurements"]["bandwidth_source"]


def test_text_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["client", "plan", "--bandwidth", "1gbit", "--rtt", "10ms", "--os", "windows-xp"]) == 0
    text = capsys.readouterr().out
    assert "[CHANGE] TCP receive window (TcpWindowSize)  (honoured on this OS)" in text
    assert "1,251,220" in text


def test_the_module_entry_point(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sambatune",
            "client",
            "window",
            "--bandwidth",
            "100mbit",
            "--rtt",
            "1ms",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["required_window"] == 12_500


def test_a_plan_cannot_smuggle_a_file_write(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    run_cli(
        capsys,
        "plan",
        "--bandwidth",
        "40gbit",
        "--rtt",
        "50ms",
        "--sysctl-dir",
        str(tmp_path / "d"),
        "-o",
        str(plan),
        "--json",
    )
    data = json.loads(plan.read_text())
    for change in data["changes"]:
        if change["catalog_id"] == "linux-sysctl-file":
            change["setting"]["path"] = str(tmp_path / "authorized_keys")
    plan.write_text(json.dumps(data))
    code = main(["client", "apply", str(plan), "--dry-run", "--json"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 1 and "not SambaTune's own" in error["message"]


def _linux_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path, sysctl_dir: Path) -> dict[str, Any]:
    plan = tmp_path / "made.json"
    args = ["plan", "--bandwidth", "40gbit", "--rtt", "50ms", "--sysctl-dir", str(sysctl_dir)]
    code, _ = run_cli(capsys, *args, "-o", str(plan), "--json")
    assert code == 0
    data: dict[str, Any] = json.loads(plan.read_text())
    return data


def _apply_plan(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Any, sysctl_dir: Path
) -> dict[str, Any]:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(data))
    code = main(["client", "apply", str(plan), "--sysctl-dir", str(sysctl_dir), "--dry-run", "--json"])
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 1, out
    return out["error"]


def test_a_plan_writes_only_its_own_file_in_a_folder_only_its_owner_changes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The right file name in another folder, or the right folder when others may
    change it: refused before anything is read or written (issue 27 item 9)."""
    folder = tmp_path / "sysctl.d"
    folder.mkdir(mode=0o755)
    data = _linux_plan(capsys, tmp_path, folder)
    [change] = [c for c in data["changes"] if c["catalog_id"] == "linux-sysctl-file"]
    change["setting"]["path"] = str(tmp_path / "elsewhere" / "90-sambatune.conf")
    error = _apply_plan(capsys, tmp_path, data, folder)
    assert "is not this computer's" in error["message"] and "--sysctl-dir" in error["message"]

    change["setting"]["path"] = str(folder / "90-sambatune.conf")
    folder.chmod(0o777)
    error = _apply_plan(capsys, tmp_path, data, folder)
    assert "can be changed by other users" in error["message"]
    folder.chmod(0o755)
    linked = tmp_path / "linked.d"
    linked.symlink_to(folder)
    change["setting"]["path"] = str(linked / "90-sambatune.conf")
    error = _apply_plan(capsys, tmp_path, data, linked)
    assert "is not a folder" in error["message"]
    assert not list(folder.iterdir())


DAMAGED_PLANS = {
    "no-os": lambda d: d.pop("os"),
    "window-a-number": lambda d: d.__setitem__("window", 5),
    "changes-hold-a-number": lambda d: d.__setitem__("changes", [5]),
    "current-as-text": lambda d: d["changes"][0].__setitem__("current", "x"),
    "honoured-as-text": lambda d: d["changes"][0].__setitem__("honoured", "false"),
    "sources-as-text": lambda d: d["changes"][0].__setitem__("sources", "ab"),
    "an-unknown-action": lambda d: d["changes"][0].__setitem__("action", "sett"),
    "action-a-list": lambda d: d["changes"][0].__setitem__("action", ["set"]),
}


@pytest.mark.parametrize("damage", list(DAMAGED_PLANS))
def test_a_damaged_plan_is_one_clear_refusal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, damage: str
) -> None:
    folder = tmp_path / "sysctl.d"
    folder.mkdir()
    data = _linux_plan(capsys, tmp_path, folder)
    DAMAGED_PLANS[damage](data)
    error = _apply_plan(capsys, tmp_path, data, folder)
    assert "damaged" in error["message"] or "not a" in error["message"], error
    assert not list(folder.iterdir())


def test_a_reader_that_goes_away_is_not_a_traceback(tmp_path: Path) -> None:
    """``sambatune client show | head -1``: the pipe closes before everything is written."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sambatune", "client", "show", "--os", "windows-xp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "SAMBATUNE_HOME": str(tmp_path)},
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
