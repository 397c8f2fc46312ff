"""Linux SMB client plans: cifs mounts in fstab, systemd mount units and autofs maps.

Everything runs against real files in a temporary directory standing in for /etc
(the fstab files are real ones people published, tests/data/fstab/SOURCES.md): the
edit changes only the options field of one entry, and a restore gives back every byte.
Mounting a share is not possible in this container (no cifs in /proc/filesystems), so
the remount is checked as the commands the plan lists, and the one test that would
run it says why it is skipped.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from sambatune.client.apply import apply_plan, restore_backup
from sambatune.client.backups import BackupStore
from sambatune.client.catalog import catalog_problems, load_catalog
from sambatune.client.cifs_mounts import (
    EtcPaths,
    cifs_mountable,
    decode,
    edited_text,
    parse_fstab,
    remount_steps,
    scan_mounts,
    with_option,
)
from sambatune.client.linux_system import LinuxSystem
from sambatune.client.osinfo import OsInfo
from sambatune.client.plan import ClientPlan
from sambatune.client.planner import Measurements, build_plan
from sambatune.client.settings import MountOptionRef
from sambatune.client.smb_client_catalog import ENTRIES
from sambatune.errors import InvalidInput
from sambatune.remote.transport import CommandResult

DATA = Path(__file__).parent / "data" / "fstab"
REAL_FSTABS = sorted(DATA.glob("*.fstab"))

UNIT = b"""[Unit]
Description=Mount SMB Share
After=network-online.target
Wants=network-online.target

[Mount]
What=//nas.example/plex
Where=/home/user/plex/plex_data_mnt
Type=cifs
Options=credentials=/etc/samba/creds_plex_data,uid=1000,gid=1000,rsize=65536
TimeoutSec=30

[Install]
WantedBy=multi-user.target
"""

AUTO_MASTER = b"""#
# Sample auto.master file
#
/misc\t/etc/auto.misc
/smb   /etc/auto.smb   --timeout=300
+dir:/etc/auto.master.d
+auto.master
"""

AUTO_SMB = b"""# shares of the NAS
media   -fstype=cifs,rw,credentials=/etc/samba/nas.cred,uid=1000   ://nas.example/media
backup  -fstype=cifs,ro,credentials=/etc/samba/nas.cred ://nas.example/backup
cd      -fstype=iso9660,ro,nosuid,nodev :/dev/cdrom
"""


class NoCommands:
    """A runner for tests that must not run anything (interfaces are not needed here)."""

    def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = 120.0
    ) -> CommandResult:
        return CommandResult(tuple(argv), 127, b"", b"not in this test\n")


def linux(etc: Path, kernel: str = "6.8.0-45-generic") -> LinuxSystem:
    os_info = OsInfo("linux", "linux", "Test Linux", kernel, "linux")
    return LinuxSystem(os_info, runner=NoCommands(), sysctl_dir=etc / "sysctl.d", etc=EtcPaths.under(etc))


def plan_for(system: LinuxSystem, multichannel: bool | None = True) -> ClientPlan:
    plan = build_plan(
        system,
        Measurements(1e9, "entered", 0.001, "entered", server_multichannel=multichannel),
    )
    # Only the SMB client part: the sysctl part is tested elsewhere and reads this kernel.
    plan.changes = [c for c in plan.changes if c.catalog_id.startswith("cifs-")]
    return plan


# -- the options field -------------------------------------------------------------


def test_option_edits_replace_the_last_and_append_new_ones() -> None:
    assert with_option("rw,rsize=65536", "rsize", "rsize=4194304") == "rw,rsize=4194304"
    assert with_option("rsize=1,rw,rsize=2", "rsize", "rsize=3") == "rsize=1,rw,rsize=3"
    assert with_option("rw", "multichannel", "multichannel") == "rw,multichannel"
    assert with_option("rw,multichannel", "multichannel", None) == "rw"
    assert with_option("rsize=65536,rw", "rsize", None) == "rw"


@pytest.mark.parametrize("path", REAL_FSTABS, ids=lambda p: p.name)
def test_real_fstabs_are_read_as_written(path: Path) -> None:
    entries = parse_fstab(decode(path.read_bytes()), str(path))
    expected = {
        "pisrv.fstab": ["/mnt/freeboxsrv", "/storage"],
        "ubuntu-forum-2011.fstab": ["/mnt/sharename", "/mnt/anothersharename"],
        # smbfs is the old client, not cifs; a genfstab file without shares has none.
        "debian-config.fstab": [],
        "alkeryn.fstab": [],
    }[path.name]
    assert [e.mount_point for e in entries] == expected
    if path.name == "pisrv.fstab":
        assert entries[0].what == "//192.168.1.254/Disque dur"  # \040 read as a space
        assert entries[0].options.startswith("_netdev,noauto,rw,users,credentials=")


@pytest.mark.parametrize("path", [p for p in REAL_FSTABS if parse_fstab(decode(p.read_bytes()), str(p))])
def test_each_edit_changes_only_that_options_field_and_undoes_byte_for_byte(path: Path) -> None:
    original = path.read_bytes()
    text = decode(original)
    for entry in parse_fstab(text, str(path)):
        edits = [
            ("rsize", "rsize=4194304"),
            ("multichannel", "multichannel"),
            ("max_channels", "max_channels=4"),
        ]
        current = text
        for option, token in edits:
            now = next(e for e in parse_fstab(current, str(path)) if e.entry == entry.entry)
            changed = edited_text(entry.ref(option), current, token)
            before_lines, after_lines = current.splitlines(True), changed.splitlines(True)
            assert len(before_lines) == len(after_lines)
            differing = [i for i, (a, b) in enumerate(zip(before_lines, after_lines, strict=True)) if a != b]
            assert len(differing) == 1
            line_before, line_after = before_lines[differing[0]], after_lines[differing[0]]
            # Only the options field: what comes before it and after it (tabs included) stays.
            field_at = line_before.index(now.options)
            assert line_after.startswith(line_before[:field_at])
            assert line_after.endswith(line_before[field_at + len(now.options) :])
            current = changed
        for option, _ in reversed(edits):
            current = edited_text(entry.ref(option), current, None)
        assert current.encode("utf-8", "surrogateescape") == original


def test_a_line_without_an_options_field_and_a_duplicate_are_left_alone(tmp_path: Path) -> None:
    text = "//a/b /mnt/x cifs\n//a/c /mnt/y cifs rw 0 0\n//a/d /mnt/y cifs ro 0 0\n"
    entries = parse_fstab(text, "fstab")
    assert all(e.problem for e in entries)
    with pytest.raises(InvalidInput):
        edited_text(MountOptionRef("fstab", "fstab", "/mnt/x", "rsize"), text, "rsize=1")


# -- systemd units and autofs maps -----------------------------------------------------


def write_etc(etc: Path, fstab: bytes) -> None:
    (etc / "systemd" / "system").mkdir(parents=True)
    (etc / "fstab").write_bytes(fstab)
    (etc / "systemd" / "system" / "home-user-plex-plex_data_mnt.mount").write_bytes(UNIT)
    (etc / "auto.master").write_bytes(AUTO_MASTER.replace(b"/etc/", str(etc).encode() + b"/"))
    (etc / "auto.smb").write_bytes(AUTO_SMB)


def test_scan_finds_fstab_units_and_autofs_maps(tmp_path: Path) -> None:
    write_etc(tmp_path, (DATA / "pisrv.fstab").read_bytes())
    scan = scan_mounts(EtcPaths.under(tmp_path))
    found = {(e.source, e.mount_point) for e in scan.entries}
    assert found == {
        ("fstab", "/mnt/freeboxsrv"),
        ("fstab", "/storage"),
        ("systemd", "/home/user/plex/plex_data_mnt"),
        ("autofs", "/smb/media"),
        ("autofs", "/smb/backup"),
    }
    assert any("auto.misc" in note for note in scan.notes)  # named but missing: said, not guessed
    unit = next(e for e in scan.entries if e.source == "systemd")
    assert remount_steps(unit) == [
        "systemctl daemon-reload",
        "systemctl restart home-user-plex-plex_data_mnt.mount",
    ]


# -- plan, apply, restore through the real engine --------------------------------------


def test_plan_apply_restore_gives_back_every_file_byte_for_byte(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    write_etc(
        etc,
        (DATA / "ubuntu-forum-2011.fstab").read_bytes().replace(b"_netdev 0", b"_netdev,rsize=65536 0", 1),
    )
    files = [
        etc / "fstab",
        etc / "systemd" / "system" / "home-user-plex-plex_data_mnt.mount",
        etc / "auto.smb",
    ]
    before = {f: f.read_bytes() for f in files}
    system = linux(etc)
    plan = plan_for(system, multichannel=True)
    actions = {c.id: c.action for c in plan.changes}
    assert actions["cifs-rsize:/mnt/sharename"] == "delete"  # 64 KiB: an SMB1-era leftover
    assert actions["cifs-rsize:/mnt/anothersharename"] == "keep"  # not set: 4 MiB asked already
    assert actions["cifs-rsize:/home/user/plex/plex_data_mnt"] == "delete"
    assert actions["cifs-multichannel:/smb/media"] == "set"
    assert actions["cifs-max-channels:/smb/media"] == "set"
    assert actions["cifs-actimeo:/mnt/sharename"] == "keep"  # a trade, never changed for you
    assert "systemctl restart home-user-plex-plex_data_mnt.mount" in plan.after_apply
    assert "umount /mnt/sharename" in plan.after_apply
    for change in plan.changes:
        assert change.sources and change.measure is not None
        assert change.measure.command.startswith("sambatune bench ")
        assert change.measure.path.startswith("/")

    store = BackupStore(tmp_path / "backups")
    dry = apply_plan(system, plan, dry_run=True, store=store)
    assert dry.ok and {f: f.read_bytes() for f in files} == before

    result = apply_plan(system, ClientPlan.from_json(plan.to_json()), store=store)
    assert result.ok, result.message
    assert result.restart_needed == "reconnect"
    fstab_after = (etc / "fstab").read_text()
    assert "_netdev,multichannel,max_channels=4 0 0" in fstab_after
    assert "rsize=65536" not in fstab_after
    assert (
        "Options=credentials=/etc/samba/creds_plex_data,uid=1000,gid=1000,multichannel,max_channels=4\n"
        in (files[1].read_text())
    )
    assert "-fstype=cifs,rw,credentials=/etc/samba/nas.cred,uid=1000,multichannel,max_channels=4   ://" in (
        files[2].read_text()
    )

    # The backup folder keeps each edited file whole; its restore.sh puts them back too.
    assert result.backup_folder is not None
    folder = Path(result.backup_folder)
    assert sorted(p.name for p in (folder / "files").iterdir()) == [
        "01-fstab",
        "02-home-user-plex-plex_data_mnt.mount",
        "03-auto.smb",
    ]
    assert (folder / "files" / "01-fstab").read_bytes() == before[files[0]]

    restored = restore_backup(system, result.backup_id or "", store=store)
    assert restored.ok, restored.message
    assert {f: f.read_bytes() for f in files} == before

    # The shell script alone does the same after an apply.
    again = apply_plan(system, plan_for(system, multichannel=True), store=store)
    assert again.ok and (etc / "fstab").read_bytes() != before[files[0]]
    subprocess.run(["sh", str(Path(again.backup_folder or "") / "restore.sh")], check=True)
    assert {f: f.read_bytes() for f in files} == before


def test_multichannel_needs_the_server_and_a_kernel_it_is_planned_for(tmp_path: Path) -> None:
    write_etc(tmp_path, (DATA / "pisrv.fstab").read_bytes())
    unknown = plan_for(linux(tmp_path), multichannel=None)
    item = next(c for c in unknown.changes if c.id == "cifs-multichannel:/storage")
    assert item.action == "none" and "not known" in item.reason
    off = plan_for(linux(tmp_path), multichannel=False)
    assert next(c for c in off.changes if c.id == "cifs-multichannel:/storage").action == "none"
    old = plan_for(linux(tmp_path, kernel="5.15.0-105-generic"), multichannel=True)
    item = next(c for c in old.changes if c.id == "cifs-multichannel:/storage")
    assert item.action == "none" and not item.honoured and "6.7" in item.honoured_note
    assert not old.after_apply or all("storage" not in c for c in old.after_apply)


def test_a_plan_cannot_write_any_other_mount_option(tmp_path: Path) -> None:
    write_etc(tmp_path, (DATA / "pisrv.fstab").read_bytes())
    system = linux(tmp_path)
    plan = plan_for(system, multichannel=True)
    data = plan.to_json()
    change = next(c for c in data["changes"] if c["action"] == "set")
    change["setting"]["option"] = "password"
    change["recommended"] = "password=x"
    with pytest.raises(InvalidInput):
        apply_plan(system, ClientPlan.from_json(data), store=BackupStore(tmp_path / "b"))
    assert (tmp_path / "fstab").read_bytes() == (DATA / "pisrv.fstab").read_bytes()


def test_every_smb_client_item_has_sources_and_a_label() -> None:
    assert catalog_problems() == []
    catalog = load_catalog()
    for raw in ENTRIES:
        item = catalog[raw["id"]]
        assert item.sources, item.id
        assert all(h.evidence for h in item.generations.values()), item.id


@pytest.mark.skipif(
    cifs_mountable() is not None,
    reason=f"no real remount here: {cifs_mountable()}; the edit, backup and restore are tested on real files",
)
def test_remount_with_a_real_cifs_mount() -> None:  # pragma: no cover - needs cifs in the kernel
    pytest.skip("cifs is loaded, but this test bed has no share to mount in a namespace yet")


def test_the_gui_plans_for_what_the_servers_survey_says_it_offers() -> None:
    # The server's multichannel and signing settings decide the cifs and nsmb.conf items;
    # the page takes them from the connected server's survey, not "unknown".
    from types import SimpleNamespace

    from sambatune.remote.client_audit import ClientAudit
    from sambatune.remote.survey import Survey
    from sambatune.ui.workspace import plan_target

    audit = ClientAudit(multichannel=True, server_signing="default")
    session = SimpleNamespace(
        profile=SimpleNamespace(is_local=False, host="files1", port=22, name="files1"),
        transport=None,
        survey=Survey("admin@files1", {"client_audit": audit.to_json()}),
    )
    target = plan_target(session)  # type: ignore[arg-type]
    assert target is not None and target.multichannel is True and target.signing == "default"
    session.survey = None
    unknown = plan_target(session)  # type: ignore[arg-type]
    assert unknown is not None and unknown.multichannel is None and unknown.signing is None
