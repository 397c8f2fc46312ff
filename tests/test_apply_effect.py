"""Apply proves that a change takes effect and that no share vanishes, on a real smbd.

Both refusals happen before the swap: the live file, the backups and what smbd
serves stay as they were, and the outcome says why in words an admin can act on.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from sambatune.conf.apply import APPLIED, REFUSED, ApplyRequest, apply_config
from sambatune.conf.catalog import load_bundled
from sambatune.remote.smb_sessions import shares_in_use
from sambatune.remote.transport import Transport
from testbed.ports import free_port
from testbed.smbd import GLOBAL_TEMPLATE, SMBD, SmbServer

pytestmark = pytest.mark.testbed

INCLUDED = "[inc]\n\tpath = {path}\n\tguest ok = yes\n\tread only = yes\n"


@pytest.fixture
def included_shares(fresh_smbd: SmbServer) -> SmbServer:
    """smbd on Unraid's layout: [global] ends with an include that opens the shares."""
    server = fresh_smbd
    (server.root / "shares.conf").write_text(INCLUDED.format(path=server.share_path))
    interfaces = "lo"
    text = GLOBAL_TEMPLATE.format(port=server.port, dir=server.dir, interfaces=interfaces)
    text += f"\tinclude = {server.root}/shares.conf\n"
    server.stop()
    server.start(text)
    assert "inc" in server.list_shares()
    return server


def _request(server: SmbServer, candidate: bytes) -> ApplyRequest:
    return ApplyRequest(str(server.config), server.config.read_bytes(), candidate, summary="test change")


def _backups(server: SmbServer) -> list[str]:
    folder = server.config.parent / "sambatune-backups"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_line_samba_would_read_in_an_included_share_is_refused(
    included_shares: SmbServer, ssh: Transport
) -> None:
    server = included_shares
    original = server.config.read_bytes()
    # What SambaTune used to write: the new line after the include, read in [inc].
    candidate = original + b"\tcomment = the server's own\n"
    outcome = apply_config(ssh, _request(server, candidate))
    assert outcome.status == REFUSED, outcome.message
    assert outcome.live == "old"
    assert "would not do what it says" in outcome.message
    assert "[global] comment = the server's own" in outcome.message
    assert server.config.read_bytes() == original
    assert _backups(server) == []
    # Above the include, the same line takes effect and is applied.
    placed = original.replace(b"\tinclude", b"\tcomment = the server's own\n\tinclude")
    assert apply_config(ssh, _request(server, placed)).status == APPLIED


def test_a_share_served_from_a_missing_include_stops_the_apply(
    included_shares: SmbServer, ssh: Transport
) -> None:
    server = included_shares
    original = server.config.read_bytes()
    client = subprocess.Popen(  # a client on [inc], idle at smbclient's prompt
        ["smbclient", "//127.0.0.1/inc", "-N", "-p", str(server.port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_tcon(ssh, server, "inc")
        (server.root / "shares.conf").unlink()  # gone, but smbd still serves [inc] to it
        candidate = original.replace(b"\tinclude", b"\tdeadtime = 15\n\tinclude")
        outcome = apply_config(ssh, _request(server, candidate))
        assert outcome.status == REFUSED, outcome.message
        assert "[inc]" in outcome.message
        assert f"{server.root}/shares.conf" in outcome.message
        assert server.config.read_bytes() == original
        assert _backups(server) == []
        assert client.poll() is None  # still connected: nothing was reloaded
    finally:
        client.kill()
        client.wait()


def _wait_for_tcon(transport: Transport, server: SmbServer, share: str) -> None:
    deadline = time.monotonic() + 20
    while share not in shares_in_use(transport, str(server.config)):
        assert time.monotonic() < deadline, f"no client connected to [{share}]"
        time.sleep(0.1)


def test_a_share_the_change_removes_may_go(fresh_smbd: SmbServer, ssh: Transport) -> None:
    server = fresh_smbd
    original = server.config.read_bytes()
    shares = server.list_shares()
    text = original.decode()
    last = max(text.rfind(f"[{name}]") for name in shares)
    gone = text[last + 1 : text.index("]", last)]
    outcome = apply_config(ssh, _request(server, text[:last].encode()))
    assert outcome.status == APPLIED, outcome.message
    assert gone not in server.list_shares()


def test_the_intended_settings_are_read_from_the_edited_file(tmp_path: Path) -> None:
    from sambatune.conf.apply_effect import intended_sets

    original = b"[global]\n\tworkgroup = W\n[data]\n\tpath = /srv\n"
    candidate = b"[global]\n\tworkgroup = W\n\twritable = yes\n[data]\n\tpath = /srv\n\tread only = no\n"
    found = {
        (i.section, i.name, i.value)
        for i in intended_sets(original, candidate, str(tmp_path / "x"), load_bundled("4.17"))
    }
    assert found == {("global", "read only", "No"), ("data", "read only", "no")}


@pytest.mark.parametrize("limit", ["100", "50"])
def test_a_value_smbd_cannot_start_with_is_refused_though_testparm_takes_it(
    fresh_smbd: SmbServer, ssh: Transport, limit: str
) -> None:
    """max open files of 100 or less: testparm passes, a reload keeps running, and the next
    start panics (measured below with the same smbd), so the apply refuses it."""
    server = fresh_smbd
    original = server.config.read_bytes()
    candidate = original.replace(b"[global]\n", f"[global]\n  max open files = {limit}\n".encode(), 1)
    outcome = apply_config(ssh, _request(server, candidate))
    assert outcome.status == REFUSED, outcome.message
    assert outcome.live == "old"
    assert f"max open files = {limit}: smbd panics at start" in outcome.message
    assert server.config.read_bytes() == original
    assert _backups(server) == []
    assert "bench" in server.list_shares()


def test_smbd_starts_with_101_open_files_and_not_with_100(tmp_path: Path) -> None:
    """The fact behind the refusal and lint's max-open-files-aborts, on this machine's smbd."""
    from sambatune.conf.apply_effect import MIN_OPEN_FILES

    def config(server: SmbServer, limit: int) -> str:
        server.port = free_port()
        line = f"[global]\n  max open files = {limit}\n"
        return server.default_config().replace("[global]\n", line, 1)

    running = SmbServer(tmp_path, "smbd-101")
    running.start(config(running, MIN_OPEN_FILES + 1))
    try:
        assert running.list_shares()
    finally:
        running.stop()
    aborting = SmbServer(tmp_path, "smbd-100")
    aborting.config.write_text(config(aborting, MIN_OPEN_FILES))
    argv = [SMBD, "--foreground", "--no-process-group", "--debug-stdout", "-s", str(aborting.config)]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        aborting.stop()
    assert result.returncode != 0
    assert "file_init_global" in result.stdout + result.stderr


def test_a_removed_share_line_must_leave_the_share_with_global_s_value(
    fresh_smbd: SmbServer, ssh: Transport
) -> None:
    """An included file of the share still sets what the edit removed: testparm on the
    server reads the include, so the removal would change nothing and is refused."""
    server = fresh_smbd
    extra = server.root / "bench-extra.conf"
    extra.write_text("\tread only = no\n")
    original = server.config.read_bytes().replace(
        b"  read only = no\n", f"  read only = no\n  include = {extra}\n".encode()
    )
    server.config.write_bytes(original)
    server.smbclient("ls")  # a connection reloads the file; the share still works
    candidate = original.replace(b"  read only = no\n", b"", 1)
    outcome = apply_config(ssh, _request(server, candidate))
    assert outcome.status == REFUSED, outcome.message
    assert "[bench] read only removed: testparm reads 'No', not [global]'s 'Yes'" in outcome.message
    assert server.config.read_bytes() == original and _backups(server) == []
    # Without the include the removal takes effect, and is applied.
    extra.write_text("")
    assert apply_config(ssh, _request(server, candidate)).status == APPLIED


def test_removals_are_intended_only_where_the_share_takes_global_s(tmp_path: Path) -> None:
    from sambatune.conf.apply_effect import intended_sets

    original = (
        b"[early]\n\tread only = no\n[global]\n\tread only = no\n\tworkgroup = W\n"
        b"[data]\n\tcomment = c\n[copy]\n\tcopy = data\n\tcomment = d\n"
        b"[plain]\n\tcomment = p\n[gone]\n\tcomment = g\n"
    )
    candidate = (
        b"[early]\n[global]\n\tread only = no\n[data]\n\tcomment = c\n[copy]\n\tcopy = data\n[plain]\n"
    )
    found = {
        (i.section, i.name, i.value)
        for i in intended_sets(original, candidate, str(tmp_path / "x"), load_bundled("4.17"))
    }
    # [plain] falls back to [global]'s comment. [early] sits above [global], [copy] now
    # copies [data]'s, [gone] is gone, workgroup is global-only: none is checked this way.
    assert found == {("plain", "comment", None)}


# -- vendor layouts on a real smbd -----------------------------------------------------------------

LAYOUTS = Path(__file__).parent / "data" / "vendor_layouts"
VENDORS = sorted(p.name for p in LAYOUTS.iterdir() if p.is_dir())


def _vendor_config(server: SmbServer, layout: str) -> bytes:
    """The vendor's file as the smbd serves it here: its includes moved next to it, and a
    last [global] block with this bed's port, directories and role. Those are global-only,
    so the last word is theirs; every share keeps what the vendor gave it."""
    folder = LAYOUTS / layout
    for extra in folder.glob("*.conf"):
        if extra.name not in ("smb.conf", "smb4.conf"):
            (server.root / extra.name).write_bytes(extra.read_bytes())
    [main] = [p for p in folder.glob("*.conf") if p.name in ("smb.conf", "smb4.conf")]
    text = main.read_text()
    for folder_name in ("/etc/samba/", "/boot/config/"):
        text = text.replace(folder_name, f"{server.root}/")
    bed = GLOBAL_TEMPLATE.format(port=server.port, dir=server.dir, interfaces="lo")
    bed += "  security = user\n  hosts allow = 127.0.0.1\n  server smb encrypt = default\n"
    return (text.rstrip("\n") + "\n\n" + bed).encode()


@pytest.mark.parametrize("layout", VENDORS)
def test_each_vendor_layout_takes_a_placed_change_on_a_real_smbd(
    fresh_smbd: SmbServer, ssh: Transport, layout: str
) -> None:
    from sambatune.conf.document import SmbConfDocument
    from sambatune.conf.includes import LocalIncludes
    from sambatune.conf.placement import placed_set
    from sambatune.conf.testparm_output import dump_by_section
    from test_conf_oracle import installed_catalog

    server = fresh_smbd
    server.stop()
    server.start(_vendor_config(server, layout).decode())
    served = server.list_shares()
    original = server.config.read_bytes()
    document = SmbConfDocument(original, str(server.config))
    placed_set(document, "global", "deadtime", "15", installed_catalog(), LocalIncludes())
    outcome = apply_config(ssh, _request(server, document.render()))
    assert outcome.status == APPLIED, outcome.message
    reading = subprocess.run(
        ["testparm", "-s", "--suppress-prompt", str(server.config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dump_by_section(reading.stdout)["global"]["deadtime"] == "15"
    assert server.list_shares() == served
