"""SambaTune's own files (whole smb.conf copies, server names, results, the log, host
keys) are 0600 in 0700 folders: when made, and when found looser.

Every store is made for real under the test's isolated home (SAMBATUNE_HOME), with a
umask of 0 so nothing passes thanks to a careful umask.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from sambatune import appdirs
from sambatune.applied_versions import AppliedVersions
from sambatune.bench.results_db import ResultsDatabase
from sambatune.client.backups import BackupEntry, BackupStore
from sambatune.client.osinfo import forced_profile
from sambatune.client.regvalue import REG_DWORD
from sambatune.client.settings import Observed, RegistryValueRef, SysctlRef
from sambatune.logfile import CRASH_LOG_LIMIT, PrivateRotatingLog, start_file_log
from sambatune.profiles import ProfileStore, ServerProfile
from sambatune.remote.hostkeys import HostKeyStore
from sambatune.states import ApplyStatus
from sambatune.wizard.measure import MeasureSpec
from sambatune.wizard.store import WizardStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")

SMB_CONF = b"[global]\n  workgroup = SECRET-PLACE\n"


@pytest.fixture(autouse=True)
def careless_umask() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(*paths: Path) -> None:
    for path in paths:
        wanted = 0o700 if path.is_dir() else 0o600
        assert (path, oct(mode(path))) == (path, oct(wanted))


def test_the_folders_are_private_also_when_found_open(tmp_path: Path) -> None:
    home = Path(os.environ["SAMBATUNE_HOME"])
    (home / "data").mkdir(parents=True, mode=0o755)
    (home / "data").chmod(0o755)
    assert_private(appdirs.data_dir(), appdirs.config_dir())


def test_applied_versions_database(tmp_path: Path) -> None:
    versions = AppliedVersions()
    versions.record(
        server="files1",
        path="/etc/samba/smb.conf",
        content=SMB_CONF,
        previous=b"",
        outcome=ApplyStatus.APPLIED,
        summary="test",
        backup_id=None,
    )
    assert_private(versions.path.parent, versions.path)
    assert [v.content for v in versions.for_server("files1")] == [SMB_CONF]


def test_results_database_and_the_wizard_store_in_it() -> None:
    database = ResultsDatabase()
    WizardStore(database).create("files1", "/etc/samba/smb.conf", MeasureSpec("data"))
    assert_private(database.path.parent, database.path)


def test_a_loose_database_and_its_side_files_are_tightened_when_opened() -> None:
    path = appdirs.data_dir() / "sambatune.sqlite3"
    sqlite3.connect(path).close()
    path.chmod(0o644)
    appdirs.data_dir().chmod(0o755)
    AppliedVersions()
    assert_private(path.parent, path)

    # Left by a crash: SQLite reads (or drops) them when it opens the database.
    side = [path.with_name(path.name + s) for s in ("-journal", "-wal", "-shm")]
    for file in (path, *side):
        file.touch()
        file.chmod(0o644)
    appdirs.private_database(path)
    assert_private(path, *side)


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_side_files_sqlite_makes_later_are_private_too(journal: str) -> None:
    database = ResultsDatabase()
    db = sqlite3.connect(database.path, isolation_level=None)
    try:
        db.execute(f"PRAGMA journal_mode = {journal}")
        db.execute("BEGIN IMMEDIATE")
        db.execute("CREATE TABLE probe (x)")
        db.execute("INSERT INTO probe VALUES (1)")
        side = [p for p in database.path.parent.iterdir() if p.name != database.path.name]
        assert side, "SQLite made no side file during the transaction"
        assert_private(*side)
        db.execute("COMMIT")
    finally:
        db.close()


def test_server_profiles(tmp_path: Path) -> None:
    store = ProfileStore()
    store.save([ServerProfile(name="files1", host="files1.example")])
    assert_private(store.path.parent, store.path)

    store.path.chmod(0o644)
    assert [p.name for p in store.load()] == ["files1"]
    assert_private(store.path)
    store.path.chmod(0o644)
    store.save([])
    assert_private(store.path)


def test_log_file_and_its_rotations() -> None:
    folder = Path(os.environ["SAMBATUNE_HOME"]) / "logs"
    folder.mkdir(mode=0o755, parents=True)
    old = folder / "sambatune.log.1"
    old.write_text("an old rotation\n")
    old.chmod(0o644)
    root = logging.getLogger()
    before = list(root.handlers)
    level = root.level
    try:
        path = start_file_log()
        logging.getLogger("sambatune.test").warning("connected to files1")
        [handler] = [h for h in root.handlers if h not in before]
        assert isinstance(handler, PrivateRotatingLog)
        handler.doRollover()
        logging.getLogger("sambatune.test").warning("after the rotation")
        handler.flush()
    finally:
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)
    assert path.parent == appdirs.log_dir() == folder
    assert "after the rotation" in path.read_text()
    assert_private(folder, path, *folder.glob("sambatune.log.*"))


def test_crash_log() -> None:
    """A process that dies of a segfault leaves its stack in crash.log: private, appended
    to (an earlier crash survives the restart), started afresh once it has grown large."""
    folder = Path(os.environ["SAMBATUNE_HOME"]) / "logs"
    folder.mkdir(mode=0o755, parents=True)
    path = folder / "crash.log"
    path.write_text("an earlier crash\n")
    path.chmod(0o644)
    crash = (
        "import faulthandler\nfrom sambatune.logfile import start_crash_log\n"
        "start_crash_log()\nfaulthandler._sigsegv()\n"
    )
    died = subprocess.run([sys.executable, "-c", crash], capture_output=True, timeout=60)
    assert died.returncode != 0
    text = path.read_text()
    assert text.startswith("an earlier crash\n--- SambaTune ")
    assert "Fatal Python error: Segmentation fault" in text
    assert 'File "<string>", line 4' in text
    assert_private(folder, path)

    path.write_text("x" * (CRASH_LOG_LIMIT + 1))
    subprocess.run([sys.executable, "-c", crash], capture_output=True, timeout=60)
    assert path.read_text().startswith("--- SambaTune ")
    assert_private(path, folder / "crash.log.1")


def test_own_known_hosts() -> None:
    store = HostKeyStore.default()
    store.remember("[files1]:2222", paramiko.ECDSAKey.generate())
    assert_private(store.write_file.parent, store.write_file)
    assert store.entries("[files1]:2222")

    store.write_file.chmod(0o644)
    HostKeyStore.default()
    assert_private(store.write_file)


def test_client_backups() -> None:
    key = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
    store = BackupStore()
    windows = store.create(
        forced_profile("windows-10"),
        [BackupEntry(RegistryValueRef(key, "TcpWindowSize", REG_DWORD), Observed.absent(), True)],
    )
    linux = store.create(
        forced_profile("linux"), [BackupEntry(SysctlRef("net.core.rmem_max"), Observed.present("212992"))]
    )
    assert_private(store.root, windows.folder, linux.folder, store.index_path, *windows.folder.iterdir())
    for file in linux.folder.iterdir():
        # restore.sh stays runnable by its owner.
        wanted = 0o700 if file.name == "restore.sh" else 0o600
        assert (file.name, oct(mode(file))) == (file.name, oct(wanted))

    store.index_path.chmod(0o644)
    store.mark_restored(windows.id)
    assert_private(store.index_path)
