"""Limits a plan may only raise: a plan for another machine carries minimums, and the apply
settles them against the values it reads there (``sambatune.client.minimums``).

The Linux backend runs for real over a temp /proc/sys whose ``sysctl -w`` is a thin fake
(it writes the file, as the kernel would show it); the same plans run against the real
kernel inside a network namespace in test_client_netns.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.catalog import RaiseOnly
from sambatune.client.linux_system import LinuxSystem
from sambatune.client.minimums import settle, settle_sysctl_file
from sambatune.client.osinfo import OsInfo, forced_profile
from sambatune.client.plan import ClientPlan, PlannedChange
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.regvalue import REG_SZ, RegValue
from sambatune.client.settings import Observed
from sambatune.client.system import ProfileSystem
from sambatune.remote.transport import CommandResult

LINUX = OsInfo("linux", "linux", "Debian GNU/Linux 12", "6.1.0", "linux")
#: A machine someone already tuned higher than a 1 Gbit/s x 10 ms plan needs (2,500,000).
TUNED = {
    "net.core.rmem_max": "4194304",
    "net.core.wmem_max": "212992",
    "net.ipv4.tcp_rmem": "4096 131072 33554432",
    "net.ipv4.tcp_wmem": "8192 32768 1000000",
    "net.ipv4.tcp_window_scaling": "1",
    "net.ipv4.tcp_moderate_rcvbuf": "1",
    "net.ipv4.tcp_mtu_probing": "0",
}


@dataclass
class FakeSysctl:
    """``sysctl -w name=value`` writes /proc/sys/name the way the kernel shows it (tabs)."""

    proc: Path
    log: list[list[str]] = field(default_factory=list)

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult:
        args = list(argv)
        self.log.append(args)
        if args[:2] == ["sysctl", "-w"]:
            name, _, value = args[2].partition("=")
            (self.proc / name.replace(".", "/")).write_text("\t".join(value.split()) + "\n")
            return CommandResult(tuple(args), 0, f"{name} = {value}\n".encode(), b"")
        return CommandResult(tuple(args), 127, b"", b"not found\n")

    def set(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            path = self.proc / name.replace(".", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\t".join(value.split()) + "\n")

    def values(self) -> dict[str, str]:
        return {name: " ".join((self.proc / name.replace(".", "/")).read_text().split()) for name in TUNED}


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[tuple[LinuxSystem, FakeSysctl]]:
    real_file = Path("/etc/sysctl.d/90-sambatune.conf")
    existed = real_file.exists()
    fake = FakeSysctl(tmp_path / "proc-sys")
    fake.set(TUNED)
    system = LinuxSystem(LINUX, runner=fake, sysctl_dir=tmp_path / "sysctl.d", proc_sys=fake.proc)
    system.is_admin = lambda: True  # type: ignore[method-assign]
    yield system, fake
    assert real_file.exists() == existed, "the host's own sysctl.d must not change"


def profile_plan(sysctl_dir: Path | None = None) -> ClientPlan:
    """A plan made elsewhere for a Linux profile (1 Gbit/s x 10 ms), carried here as a file.

    A profile's persistence file is /etc/sysctl.d/90-sambatune.conf; ``sysctl_dir`` moves
    it, as the tests must never touch the real one.
    """
    plan = build_plan(ProfileSystem(forced_profile("linux")), Measurements(1e9, "entered", 0.010, "entered"))
    data = json.loads(json.dumps(plan.to_json()))
    if sysctl_dir is not None:
        for change in data["changes"]:
            if change["catalog_id"] == "linux-sysctl-file":
                change["setting"]["path"] = str(sysctl_dir / "90-sambatune.conf")
    return ClientPlan.from_json(data)


def by_id(items: list[PlannedChange], catalog_id: str) -> PlannedChange:
    return next(c for c in items if c.catalog_id == catalog_id)


def test_the_rules_raise_and_never_lower() -> None:
    number = RaiseOnly("number")
    assert settle(number, Observed.present("4194304"), "2500000").left_as_is == (
        "already 4194304, higher than the 2500000 this plan needs; left as is"
    )
    assert settle(number, Observed.present("212992"), "2500000").target == "2500000"
    assert not settle(number, Observed.present("2500000"), "2500000").left_as_is
    # Registry windows: a DWORD and a Windows 9x number held as text compare as numbers.
    assert settle(number, Observed.present(RegValue.dword(4_194_304)), RegValue.dword(1_251_220)).left_as_is
    assert settle(number, Observed.absent(), RegValue.dword(1_251_220)).target == (RegValue.dword(1_251_220))
    assert settle(
        number, Observed.present(RegValue(REG_SZ, "8192")), RegValue(REG_SZ, "251120")
    ).target == RegValue(REG_SZ, "251120")

    third = RaiseOnly("third-number")
    left = settle(third, Observed.present("4096 131072 33554432"), "4096 131072 2500000")
    assert left.left_as_is.startswith("already 33554432, higher than the 2500000 this plan needs; left as is")
    # Only the ceiling is raised; the machine's smallest and starting buffers stay.
    assert (
        settle(third, Observed.present("8192 32768 1000000"), "4096 16384 2500000").target
        == "8192 32768 2500000"
    )

    bits = RaiseOnly("bits", bits=1, absent_means=3)
    assert settle(bits, Observed.present(RegValue.dword(2)), RegValue.dword(3)).target == (RegValue.dword(3))
    assert settle(bits, Observed.present(RegValue.dword(0)), RegValue.dword(3)).target == (
        RegValue.dword(1)
    ), "timestamps were off there: they stay off"
    assert settle(bits, Observed.present(RegValue.dword(1)), RegValue.dword(3)).left_as_is
    assert settle(bits, Observed.absent(), RegValue.dword(3)).target == RegValue.dword(3)
    assert settle(RaiseOnly("bits", bits=1), Observed.absent(), RegValue(REG_SZ, "1")).target == RegValue(
        REG_SZ, "1"
    )


def test_a_profile_plan_states_its_targets_as_minimums() -> None:
    plan = profile_plan()
    data = plan.to_json()
    changes = {c["catalog_id"]: c for c in data["changes"]}
    rmem_max = changes["linux-rmem-max"]
    assert rmem_max["action"] == "set" and rmem_max["at_least"] is True
    assert rmem_max["recommended"] == "2500000"
    assert rmem_max["recommended_display"] == "at least 2500000"
    assert "this is a minimum" in rmem_max["reason"]
    assert changes["linux-tcp-rmem"]["recommended_display"] == (
        "third number at least 2500000 (the first two stay as they are there)"
    )
    assert changes["linux-tcp-window-scaling"]["at_least"] is False
    assert {
        "setting": "net.core.rmem_max",
        "before": rmem_max["current"]["display"],
        "after": "at least 2500000",
    } in data["diff"]


def test_a_profile_plan_applied_raises_what_is_lower_and_leaves_what_is_higher(
    machine: tuple[LinuxSystem, FakeSysctl], tmp_path: Path
) -> None:
    system, fake = machine
    own_file = system.sysctl_dir / "90-sambatune.conf"
    # An older plan file, from before plans said "at_least": the catalog decides anyway.
    data = profile_plan(system.sysctl_dir).to_json()
    for change in data["changes"]:
        change.pop("at_least")
    plan = ClientPlan.from_json(data)
    store = BackupStore(tmp_path / "backups")

    dry = apply_plan(system, plan, store=store, dry_run=True)
    steps = {s.setting: s for s in dry.steps}
    assert steps["net.core.rmem_max"].status == "left-as-is"
    assert steps["net.core.rmem_max"].message == (
        "already 4194304, higher than the 2500000 this plan needs; left as is"
    )
    assert steps["net.ipv4.tcp_rmem"].status == "left-as-is"
    assert "already 33554432, higher than the 2500000" in steps["net.ipv4.tcp_rmem"].message
    assert steps["net.core.wmem_max"].status == "would-change"
    assert steps["net.ipv4.tcp_wmem"].wanted == "8192 32768 2500000"
    assert steps["net.ipv4.tcp_wmem"].operations == ["sysctl -w 'net.ipv4.tcp_wmem=8192 32768 2500000'"]
    persisted = str(steps[str(own_file)].wanted)
    assert "net.ipv4.tcp_wmem = 8192 32768 2500000" in persisted
    assert "rmem" not in persisted, "a value left as is is not persisted either"
    assert "2 left as is" in dry.message
    assert dry.backup_preview is not None
    assert "net.core.rmem_max" not in json.dumps(dry.backup_preview)
    assert fake.values() == TUNED and not own_file.exists()

    result = apply_plan(system, plan, store=store)
    assert result.ok, result.message
    after = fake.values()
    assert after["net.core.rmem_max"] == "4194304"
    assert after["net.ipv4.tcp_rmem"] == "4096 131072 33554432"
    assert after["net.core.wmem_max"] == "2500000"
    assert after["net.ipv4.tcp_wmem"] == "8192 32768 2500000"
    text = own_file.read_text()
    assert "net.core.wmem_max = 2500000" in text and "rmem" not in text
    backup = store.load(result.backup_id or "")
    # Only what was written is backed up (tcp_window_scaling already held the planned 1).
    assert {e.ref.label() for e in backup.entries} == {
        "net.core.wmem_max",
        "net.ipv4.tcp_wmem",
        str(own_file),
    }

    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert fake.values() == TUNED
    assert not own_file.exists()


def test_nothing_raised_means_no_file_and_no_backup(
    machine: tuple[LinuxSystem, FakeSysctl], tmp_path: Path
) -> None:
    system, fake = machine
    fake.set({"net.core.wmem_max": "8388608", "net.ipv4.tcp_wmem": "4096 16384 4194304"})
    before = fake.values()
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, profile_plan(system.sysctl_dir), store=store)
    assert result.ok and result.backup_id is None
    assert "already holds the planned value or more" in result.message
    own = next(s for s in result.steps if s.setting.endswith("90-sambatune.conf"))
    assert own.status == "left-as-is" and "nothing new to keep" in own.message
    assert fake.values() == before
    assert not (system.sysctl_dir / "90-sambatune.conf").exists()
    assert not store.list()


def test_the_sysctl_file_never_persists_a_lower_value(
    machine: tuple[LinuxSystem, FakeSysctl], tmp_path: Path
) -> None:
    system, fake = machine
    # An earlier apply persisted 8,000,000; since then someone lowered the live value.
    own_file = system.sysctl_dir / "90-sambatune.conf"
    own_file.parent.mkdir(parents=True)
    own_file.write_text("# SambaTune\nnet.core.wmem_max = 8000000\nnet.ipv4.tcp_wmem = 4096 16384 900000\n")
    original = own_file.read_text()
    store = BackupStore(tmp_path / "backups")
    result = apply_plan(system, profile_plan(system.sysctl_dir), store=store)
    assert result.ok, result.message
    assert fake.values()["net.core.wmem_max"] == "2500000", "live: raised from 212992"
    text = own_file.read_text()
    assert "net.core.wmem_max = 8000000" in text, "the file's higher value stays"
    assert "net.ipv4.tcp_wmem = 8192 32768 2500000" in text
    assert restore_backup(system, result.backup_id or "", store=store).ok
    assert own_file.read_text() == original and fake.values() == TUNED

    # The helper on its own: nothing raised leaves the file alone.
    assert settle_sysctl_file(text, Observed.present(text), {}) is None
