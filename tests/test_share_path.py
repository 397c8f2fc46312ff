"""Where a folder lives: on an SMB mount or a local disk, read the way each system
says it. The mountinfo lines follow the kernel's format (proc_pid_mountinfo(5)); the
macOS lines are `mount` as a Mac prints an SMB share mounted from Finder. The test
bed's kernel has no cifs, so a real cifs line is recorded text; the local answers are
this machine's own."""

from __future__ import annotations

import os
from pathlib import Path

from sambatune.client.share_path import filesystem_of, from_macos_mount, from_mountinfo

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
25 22 0:23 / /mnt rw,relatime shared:2 - tmpfs tmpfs rw
61 25 0:52 / /mnt/data rw,relatime shared:30 - cifs //nas.example/data rw,vers=3.1.1,cache=strict,username=ann
62 25 0:53 / /mnt/my\\040files rw,relatime shared:31 - smb3 //nas.example/my\\040files rw,vers=3.1.1
63 61 0:54 / /mnt/data/scratch rw,relatime shared:32 - tmpfs tmpfs rw
"""

MACOS_MOUNT = """\
/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)
/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse, protect, root data)
//ann@nas.example/data on /Volumes/data (smbfs, nodev, nosuid, mounted by ann)
"""


def test_linux_mountinfo_names_the_mount_that_holds_the_path() -> None:
    share = from_mountinfo("/mnt/data/projects/2026", MOUNTINFO)
    assert (share.filesystem, share.mount_point, share.on_smb) == ("cifs", "/mnt/data", True)
    assert from_mountinfo("/mnt/my files/x", MOUNTINFO).on_smb is True  # \040 is a blank
    # A tmpfs mounted inside the share holds what is below it; /mnt/database is not /mnt/data.
    assert from_mountinfo("/mnt/data/scratch/t", MOUNTINFO).filesystem == "tmpfs"
    local = from_mountinfo("/mnt/database", MOUNTINFO)
    assert (local.filesystem, local.on_smb) == ("tmpfs", False)
    assert from_mountinfo("/home/ann", MOUNTINFO).describe() == "/home/ann is on ext4 (mounted at /)"
    assert from_mountinfo("/x", "garbage\n\n").on_smb is None


def test_macos_mount_output_names_smbfs() -> None:
    share = from_macos_mount("/Volumes/data/reports", MACOS_MOUNT)
    assert (share.filesystem, share.mount_point, share.on_smb) == ("smbfs", "/Volumes/data", True)
    assert from_macos_mount("/Users/ann", MACOS_MOUNT).filesystem == "apfs"


def test_this_machines_temporary_folder_is_no_smb_share(tmp_path: Path) -> None:
    where = filesystem_of(str(tmp_path))
    assert where.on_smb is False and where.filesystem
    # A symlink is followed to where its target lives.
    link = tmp_path / "link"
    os.symlink(tmp_path, link)
    assert filesystem_of(str(link)).filesystem == where.filesystem
