"""Shared fixtures: a real sshd, smbd and sudo user on loopback, and an isolated home."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))
# Qt renders without a screen in tests; screenshots still work.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
pytest_plugins = ["log_guard"]  # a test that logs an unexpected error fails (tests/log_guard.py)

from catalog_homes import copy_into_home, sambatune_home  # noqa: E402
from sambatune.remote.connection import ConnectionOptions, open_target  # noqa: E402
from sambatune.remote.local import LocalTransport  # noqa: E402
from sambatune.remote.prompts import NoPrompts  # noqa: E402
from sambatune.remote.transport import Transport  # noqa: E402
from screenshots import Grabbable, Screenshot  # noqa: E402

# The test bed (sshd, smbd, sudo users) is POSIX: on Windows (the release workflow runs
# the tests that need no server there) the modules that use it are not collected.
POSIX = os.name == "posix"
# tests/wine/ runs on a Windows Python (tests/test_windows_tier.py starts it), never here.
collect_ignore = ["wine"]
if POSIX:
    from testbed.fleet import FleetBed
    from testbed.processes import processes_mentioning
    from testbed.smbd import SmbServer
    from testbed.sshd import SshServer, keygen
    from testbed.sudo_user import SudoUser
    from testbed.troubled import with_problems
else:
    _POSIX_ONLY = (
        "from testbed",
        "import testbed",
        "import pwd",
        "import fcntl",
        "import termios",
        "geteuid",
        "getuid",
    )
    collect_ignore += [
        path.name
        for path in Path(__file__).parent.glob("test_*.py")
        if any(word in path.read_text(encoding="utf-8") for word in _POSIX_ONLY)
    ]

# No time limit per example: on a busy two-core machine a property test's slowest
# example is the machine, not the code (the tests assert correctness, not speed).
settings.register_profile("sambatune", deadline=None)
settings.load_profile("sambatune")

IS_ROOT = POSIX and os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root (creates a system user)")

#: Fixtures that start part of the test bed: a test using one is marked ``testbed``.
TESTBED_FIXTURES = {
    "testbed_dir",
    "sshd",
    "sshd_password",
    "sudo_user",
    "plain_user",
    "smbd",
    "fresh_smbd",
    "second_smbd",
    "troubled_smbd",
    "any_transport",
    "fleet_bed",
}


#: The host's Samba programs. No test changes them: one that needs a program to behave
#: otherwise shadows it on the test sshd's PATH (SshServer.path_first), so that other
#: processes on a shared machine never run a test's stand-in.
HOST_PROGRAMS = ("/usr/bin/smb*", "/usr/bin/testparm", "/usr/bin/net", "/usr/sbin/smbd", "/usr/sbin/nmbd")
_PROGRAMS_BEFORE = pytest.StashKey[dict[str, tuple[int, int, int]]]()


def _host_programs() -> dict[str, tuple[int, int, int]]:
    import glob

    found = {}
    for pattern in HOST_PROGRAMS:
        for path in glob.glob(pattern):
            status = os.lstat(path)
            found[path] = (status.st_ino, status.st_size, status.st_mtime_ns)
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_PROGRAMS_BEFORE] = _host_programs()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """After the suite: the host's Samba programs are the ones it started with."""
    before = session.config.stash.get(_PROGRAMS_BEFORE, None)
    if before is None:
        return
    after = _host_programs()
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    if changed:
        print(f"\nThe test run changed the host's programs: {', '.join(changed)}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test on the shared sshd shows that sshd's last words: why it dropped a
    connection is written there and nowhere else (CI keeps only the test output)."""
    report: pytest.TestReport = yield
    server = getattr(item, "funcargs", {}).get("sshd")
    if report.failed and POSIX and isinstance(server, SshServer) and server.log.exists():
        tail = server.log.read_text(errors="replace").splitlines()[-25:]
        report.sections.append(("the test bed's sshd log, last 25 lines", "\n".join(tail)))
    return report


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what the fast tier (`make check`) leaves out: tests that need the test bed,
    through a fixture (also one chosen by an "ssh" parameter), as root (namespaces,
    users), or by running Samba's programs themselves (marked where they do)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        over_ssh = callspec is not None and "ssh" in callspec.params.values()
        if (
            TESTBED_FIXTURES & set(getattr(item, "fixturenames", ()))
            or over_ssh
            or item.get_closest_marker("needs_root")
        ):
            item.add_marker(pytest.mark.testbed)


@pytest.fixture(scope="session")
def testbed_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("testbed")
    yield path
    leftovers = processes_mentioning(str(path))
    assert not leftovers, f"test bed processes left running: {leftovers}"


@pytest.fixture(scope="session")
def user_key(testbed_dir: Path) -> Path:
    keys = testbed_dir / "keys"
    keys.mkdir()
    return keygen(keys / "id_ed25519", comment="sambatune-test-user")


@pytest.fixture(scope="session")
def sshd(testbed_dir: Path, user_key: Path) -> Iterator[SshServer]:
    server = SshServer(testbed_dir, "sshd")
    server.authorize(user_key.with_suffix(".pub"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def sudo_user(testbed_dir: Path) -> Iterator[SudoUser]:
    if not IS_ROOT:
        pytest.skip("needs root to create the sudo test user")
    user = SudoUser.create()
    yield user
    user.delete()


@pytest.fixture(scope="session")
def plain_user(testbed_dir: Path) -> Iterator[SudoUser]:
    """A user with a password and no sudo rights."""
    if not IS_ROOT:
        pytest.skip("needs root to create a test user")
    user = SudoUser.create(with_sudo=False)
    yield user
    user.delete()


@pytest.fixture(scope="session")
def sshd_password(testbed_dir: Path, sudo_user: SudoUser) -> Iterator[SshServer]:
    server = SshServer(testbed_dir, "sshd-password", password_auth=True)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def smbd(testbed_dir: Path) -> Iterator[SmbServer]:
    server = SmbServer(testbed_dir, "smbd")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fleet_bed(testbed_dir: Path, user_key: Path) -> Iterator[FleetBed]:
    """Five servers on this machine (127.0.0.2 to .6), each with its own sshd and smbd
    (tests/testbed/fleet.py). A test that takes one down brings it back up."""
    bed = FleetBed(testbed_dir / "fleet", user_key, count=5).start()
    yield bed
    bed.stop()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep every test away from the developer's real ~/.ssh, settings and data."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SAMBATUNE_HOME", str(tmp_path / "sambatune-home"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


@pytest.fixture(scope="session")
def local_catalog_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """This computer's parameter catalog (and the index naming its testparm), built once
    per run: the build runs testparm for about a second. Test workers (pytest-xdist)
    share the run's temporary folder; the first to get here builds, the others wait."""
    import fcntl

    from sambatune.conf.catalog import cache_dir, local_testparm
    from sambatune.conf.catalog_build import live_catalog

    if local_testparm() is None:
        return []  # the bundled catalog answers, nothing is built
    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run = run.parent  # each worker's folder is inside the run's
    with open(run / "local-catalog.lock", "w") as lock, sambatune_home(run / "local-catalog-home") as home:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "built").exists():
            live_catalog(LocalTransport())
            (home / "built").touch()
        return sorted(Path(cache_dir()).glob("*.json"))


@pytest.fixture
def local_catalog_cached(local_catalog_files: list[Path], isolated_home: Path) -> None:
    """For a test that opens local files and is not about the catalog's first build: the
    catalog is in the test's home already, as after the first use on a computer."""
    copy_into_home(local_catalog_files)


@pytest.fixture
def known_hosts(tmp_path: Path, sshd: SshServer) -> Path:
    """A known_hosts file that already trusts the test sshd."""
    path = tmp_path / "known_hosts"
    path.write_text(sshd.known_hosts_line)
    return path


@pytest.fixture
def ssh_options(sshd: SshServer, user_key: Path, known_hosts: Path) -> ConnectionOptions:
    return sshd.key_options(user_key, known_hosts)


@pytest.fixture
def ssh(ssh_options: ConnectionOptions) -> Iterator[Transport]:
    """A real SSH connection to the test bed's sshd, closed after the test."""
    transport = open_target(ssh_options, NoPrompts())
    yield transport
    transport.close()


@pytest.fixture
def screenshot() -> Screenshot:
    """Save a widget as artifacts/screenshots/NAME.png (looked at by people, not asserted)."""

    def save(widget: Grabbable, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        assert widget.grab().save(str(path)), f"could not save {path}"
        return path

    return save


@pytest.fixture
def fresh_smbd(tmp_path: Path) -> Iterator[SmbServer]:
    """An smbd of this test's own, for tests that change, reload or restart it."""
    server = SmbServer(tmp_path, "own-smbd")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def second_smbd(tmp_path: Path) -> Iterator[SmbServer]:
    """Another smbd of the test's own on the same host: its own config, port and state."""
    server = SmbServer(tmp_path, "second-smbd")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def troubled_smbd(fresh_smbd: SmbServer) -> SmbServer:
    """The test's own smbd, restarted on a config with known problems
    (log level 3, fixed socket buffers, strict sync with sync always)."""
    fresh_smbd.stop()
    fresh_smbd.start(with_problems(fresh_smbd))
    return fresh_smbd


@pytest.fixture(params=["local", "ssh"])
def any_transport(request: pytest.FixtureRequest) -> Iterator[Transport]:
    """The same test on this computer and over real SSH."""
    if request.param == "local":
        yield LocalTransport()
        return
    options: ConnectionOptions = request.getfixturevalue("ssh_options")
    target = open_target(options, NoPrompts())
    yield target
    target.close()
