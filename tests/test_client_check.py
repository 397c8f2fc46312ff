"""``sambatune client check``: a client plan measured before and after, from this computer.

The plan is a real one, made by ``sambatune client plan`` for this Linux from an fstab
whose cifs mount point is a temporary directory. That directory stands in for the
mounted share: the bench classes do plain file I/O on a mounted path, which is what a
local directory takes too. Sizes, counts and runs are small so the tests are quick.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cli_process import sambatune_cli
from sambatune.bench.results_db import ResultsDatabase
from sambatune.cli.main import main
from sambatune.client.plan import ClientPlan
from sambatune.wizard.client_check import CheckStore, default_path, default_test, is_example_share

# The test bed's kernel has no cifs: the "share" is a local directory, measured knowingly.
FAST = ("--runs", "2", "--warmup", "0", "--any-directory")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(["client", *args])
    captured = capsys.readouterr()
    out = captured.out
    return code, json.loads(out) if out.strip().startswith("{") else out, captured.err


@pytest.fixture
def share(tmp_path: Path) -> Path:
    """The "mounted share": a real directory, named as a cifs mount point in an fstab."""
    mount = tmp_path / "mnt" / "data"
    mount.mkdir(parents=True)
    return mount


@pytest.fixture
def plan_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, share: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    etc = tmp_path / "etc"
    etc.mkdir()
    # An SMB1-era rsize: the plan removes it, and links it to the large-file test.
    (etc / "fstab").write_text(f"//nas.example/data {share} cifs credentials=/etc/nas.cred,rsize=65536 0 0\n")
    # The verb points the backends at --etc-dir through the environment; monkeypatch puts it back.
    monkeypatch.setenv("SAMBATUNE_ETC_DIR", str(etc))
    code, data, _ = run_cli(
        capsys, "plan", "--bandwidth", "1gbit", "--rtt", "1ms", "--etc-dir", str(etc), "--json"
    )
    assert code == 0
    changed = [c for c in data["changes"] if c["action"] in ("set", "delete")]
    assert any(c["measure"] and c["measure"]["path"] == str(share) for c in changed)
    return str(data["id"])


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_before_then_after_in_a_new_process_gives_two_sessions_and_a_verdict(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path
) -> None:
    code, before, _ = run_cli(
        capsys, "check", plan_id, "--before", "--path", str(share), "--size", "1MiB", *FAST, "--json"
    )
    assert code == 0
    assert before["test"] == "smb-client" and before["path"] == str(share)
    assert before["method"] == {"runs": 2, "warmup": 0} and before["size"] == 1 << 20
    assert before["before_session"] and before["after_session"] is None and before["verdict"] is None
    assert leftovers(share) == []

    # The after run comes from another process, as after an apply and a remount: it finds
    # the before in the stored state, and repeats its test, path, runs and size.
    done = sambatune_cli("client", "check", plan_id, "--after", "--json")
    assert done.returncode == 0, done.stderr
    after = json.loads(done.stdout)
    assert after["before_session"] == before["before_session"]
    assert after["after_session"] not in (None, before["before_session"])
    verdict = after["verdict"]
    assert verdict["overall"] in ("better", "worse", "mixed", "no real difference")
    assert verdict["recommendation"] in ("keep", "revert", "either")
    assert {s["series"] for s in verdict["series"]} == {"write", "read"}
    for series in verdict["series"]:
        assert "Welch's t-test" in series["sentence"] and series["p_value"] is not None
        assert not any("smb.conf" in w for w in series["warnings"])
    # Nothing applied the plan here, and the check says what that means.
    assert any("No apply of plan" in note for note in after["notes"])
    assert leftovers(share) == []

    database = ResultsDatabase()
    notes = {database.load(after[f"{phase}_session"]).note for phase in ("before", "after")}
    assert notes == {
        f"client plan {plan_id}: before (sambatune client check)",
        f"client plan {plan_id}: after (sambatune client check)",
    }
    stored = CheckStore().load(plan_id)
    assert stored is not None and stored.verdict == verdict and stored.plan["id"] == plan_id


def test_the_text_shows_the_runs_and_then_the_verdict(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path
) -> None:
    code, text, _ = run_cli(
        capsys, "check", plan_id, "--before", "--path", str(share), "--size", "1MiB", *FAST
    )
    assert code == 0
    assert "Run   Size in bytes" in text and "Average" in text
    assert f"sambatune client check {plan_id} --after" in text
    code, text, _ = run_cli(capsys, "check", plan_id, "--after")
    assert code == 0
    assert "Run   Size in bytes" in text
    assert "recommendation:" in text and "(p = " in text and "Welch's t-test" in text
    assert "- Write to the share through this computer's own SMB client:" in text


def test_the_small_file_test_is_the_default_when_only_its_items_change(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path, tmp_path: Path
) -> None:
    plan = ClientPlan.from_json(
        json.loads((tmp_path / "sambatune-home" / "data" / "client-plans" / f"{plan_id}.json").read_text())
    )
    plan.changes = [c for c in plan.changes if c.measure is None or c.measure.test == "files"]
    assert plan.changes and default_test(plan) == "files" and default_path(plan) == str(share)
    file = tmp_path / "plan.json"
    file.write_text(json.dumps(plan.to_json()))
    # No --path: the plan's own (real) mount point.
    code, data, _ = run_cli(
        capsys, "check", str(file), "--before", "--count", "40", "--size", "1KiB", *FAST, "--json"
    )
    assert code == 0 and data["test"] == "files" and data["path"] == str(share)
    assert data["count"] == 40 and data["size"] == 1024
    code, data, _ = run_cli(capsys, "check", str(file), "--after", "--json")
    assert code == 0 and {s["series"] for s in data["verdict"]["series"]} == {
        "create", "stat", "read", "rename", "list", "delete"
    }  # fmt: skip
    assert leftovers(share) == []


def test_refusals_are_one_clear_line_and_measure_nothing(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path, tmp_path: Path
) -> None:
    def refused(*args: str) -> str:
        code, _, err = run_cli(capsys, "check", plan_id, *args)
        assert code == 1
        return err

    assert "has no before measurement" in refused("--after", "--path", str(share))
    assert "does not exist on this computer" in refused("--before", "--path", str(tmp_path / "gone"))
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in refused("--before", "--path", str(tmp_path / "file"))
    # A folder on this computer's own disk is no SMB share: refused unless asked for.
    local = refused("--before", "--path", str(share), "--runs", "2", "--warmup", "0")
    assert f"{share} is on " in local and "not on an SMB share" in local and "--any-directory" in local
    assert "at least 2 counted runs" in refused("--before", "--path", str(share), "--runs", "1")
    assert CheckStore().load(plan_id) is None

    code, _, _ = run_cli(capsys, "check", plan_id, "--before", "--path", str(share), "--size", "1MiB", *FAST)
    assert code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert "must run there too" in refused("--after", "--path", str(other))
    assert "must be the same test" in refused("--after", "--test", "files")
    assert "repeats the before one (runs 2)" in refused("--after", "--runs", "5")
    stored = CheckStore().load(plan_id)
    assert stored is not None and stored.after is None
    assert leftovers(share) == [] and leftovers(other) == []

    code, _, err = run_cli(capsys, "check", "no-such-plan", "--before", "--path", str(share))
    assert code == 1 and "No plan no-such-plan is on record" in err
    done = sambatune_cli("client", "check", "../../etc/passwd", "--before")
    assert done.returncode == 1 and "Cannot read the plan" in done.stderr


def test_a_plan_whose_items_name_both_tests_asks_which(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, data, _ = run_cli(capsys, "plan", "--bandwidth", "1gbit", "--rtt", "1ms", "--os", "macos", "--json")
    assert code == 0
    code, _, err = run_cli(capsys, "check", data["id"], "--before", "--path", str(tmp_path))
    assert code == 1 and "measured by two tests" in err and "--test smb-client or --test files" in err
    # The Mac plan's path is Finder's example, not a share.
    plan = ClientPlan.from_json(data)
    assert is_example_share("/Volumes/SHARE") and is_example_share("\\\\files1\\SHARE")
    assert default_path(plan) is None
    code, _, err = run_cli(
        capsys, "check", data["id"], "--before", "--test", "files", "--path", "/Volumes/SHARE"
    )
    assert code == 1 and "is the plan's example" in err


def test_ctrl_c_stops_the_test_and_leaves_nothing_behind(plan_id: str, share: Path) -> None:
    argv = [
        sys.executable, "-m", "sambatune", "client", "check", plan_id, "--before", "--path", str(share),
        "--test", "files", "--count", "50k", "--size", "1", *FAST,
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the test directory fills with files
            made = list(share.iterdir())
            if made and len(list(made[0].iterdir())) >= 200:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the small-file test never started")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "files are being removed" in err
    assert leftovers(share) == []
    assert CheckStore().load(plan_id) is None


def test_an_apply_in_between_is_seen_and_a_revert_names_its_backup(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path, tmp_path: Path
) -> None:
    from sambatune.client.apply import apply_plan
    from sambatune.client.backups import BackupStore
    from sambatune.client.cifs_mounts import EtcPaths
    from sambatune.client.linux_system import LinuxSystem
    from sambatune.client.plan_store import PlanStore
    from sambatune.wizard.client_check import verdict_record
    from sambatune.wizard.verdict import Verdict

    code, _, _ = run_cli(capsys, "check", plan_id, "--before", "--path", str(share), "--size", "1MiB", *FAST)
    assert code == 0
    # The plan's one change is the fstab's rsize (in the test's own etc): applied for real,
    # with the backup the apply always makes first.
    plan = PlanStore().load(plan_id)
    plan.changes = [c for c in plan.changes if c.catalog_id.startswith("cifs-")]
    system = LinuxSystem(sysctl_dir=tmp_path / "sysctl.d", etc=EtcPaths.under(tmp_path / "etc"))
    applied = apply_plan(system, plan, store=BackupStore())
    assert applied.ok and applied.backup_id, applied.message
    assert "rsize" not in (tmp_path / "etc" / "fstab").read_text()

    code, data, _ = run_cli(capsys, "check", plan_id, "--after", "--json")
    # The apply is on record: no doubt about it; the only note is the folder's own.
    assert code == 0 and not any("No apply" in note for note in data["notes"])
    assert [n for n in data["notes"] if "not on an SMB share" in n] == [
        f"Measured as asked though {share} is on {data['not_a_share'].split(' is on ')[1]}, not on "
        "an SMB share: what the plan changes in this computer's SMB client does not show in these figures."
    ]
    # Whatever this run's verdict, a worse one tells how to put the old values back.
    worse = verdict_record(Verdict("worse", "revert", "", ()), plan_id)
    assert worse["restore"] == {
        "backup_id": applied.backup_id,
        "command": f"sambatune client restore {applied.backup_id}",
    }
    assert f"sambatune client restore {applied.backup_id}" in worse["explanation"]
    better = verdict_record(Verdict("better", "keep", "", ()), plan_id)
    assert better["restore"] is None and "keep it" in better["explanation"]


def test_an_after_run_finds_its_plan_when_the_plan_store_pruned_it(
    capsys: pytest.CaptureFixture[str], plan_id: str, share: Path
) -> None:
    """The plan store keeps the newest 100 plans; the after run may come much later."""
    from sambatune.client.plan_store import PlanStore

    code, _before, _ = run_cli(
        capsys, "check", plan_id, "--before", "--path", str(share), "--size", "1MiB", *FAST, "--json"
    )
    assert code == 0
    PlanStore().path_of(plan_id).unlink()
    code, after, _ = run_cli(capsys, "check", plan_id, "--after", "--json")
    assert code == 0 and after["verdict"] is not None
    code, _, err = run_cli(capsys, "check", "0123456789ab", "--after")
    assert code == 1 and "0123456789ab" in err
