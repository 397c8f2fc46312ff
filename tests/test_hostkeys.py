"""Host keys checked exactly as OpenSSH checks them, with OpenSSH itself as the judge.

The pattern table is checked against ``ssh-keygen -F`` (OpenSSH's own matcher), and the
known_hosts cases against the real ``ssh`` client with ``StrictHostKeyChecking=accept-new``:
for every crafted file, ssh and SambaTune (answering yes to unknown keys, as
``--accept-new-host-key`` does) must connect or refuse alike, and write the same line.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import paramiko
import pytest

from fixed_answers import FixedAnswers
from sambatune.errors import HostKeyChanged, HostKeyRevoked, HostKeyUnknown, InvalidInput
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.hostkeys import (
    CERT_AUTHORITY,
    REVOKED,
    HostKeyStatus,
    HostKeyStore,
    KnownKey,
    check_host_key,
    host_matches,
    parse_line,
)
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.sshconfig import resolve_endpoint
from testbed.sshd import SshServer, current_user, keygen


def public_line(pub: Path) -> str:
    """``type base64`` of a .pub file, without its comment."""
    return " ".join(pub.read_text().split()[:2])


def pkey(pub: Path) -> paramiko.PKey:
    kind, blob = pub.read_text().split()[:2]
    return paramiko.PKey.from_type_string(kind, base64.b64decode(blob))


def hashed_name(name: str, scratch: Path, key: Path) -> str:
    """The ``|1|salt|hash`` field ``ssh-keygen -H`` writes for ``name``."""
    scratch.write_text(f"{name} {public_line(key)}\n")
    subprocess.run(["ssh-keygen", "-H", "-f", str(scratch)], check=True, capture_output=True)
    return scratch.read_text().split()[0]


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Keys that are nobody's host key here: a stranger's, and one of a type paramiko lacks."""
    root = tmp_path_factory.mktemp("hostkeys")
    return {
        "other": keygen(root / "other").with_suffix(".pub"),
        "dsa": keygen(root / "dsa", kind="dsa").with_suffix(".pub"),
    }


# --------------------------------------------------------------------------------------
# Which lines apply to which host: OpenSSH's match_hostname, judged by ssh-keygen -F

PATTERN_CASES = [
    # (host field in known_hosts, host looked up, applies?)
    ("files1", "files1", True),
    ("files1", "files2", False),
    ("FILES1", "files1", True),
    ("files1.example.org", "files1", False),
    ("*.example.org", "files1.example.org", True),
    ("*.example.org", "example.org", False),
    ("*.example.org", "files1.example.org.evil.net", False),
    ("192.168.1.*", "192.168.1.20", True),
    ("192.168.1.*", "192.168.10.2", False),
    ("files?", "files1", True),
    ("files?", "files12", False),
    ("fi*s*1", "files1", True),
    ("*", "anything.at.all", True),
    ("files1,files2,files3", "files2", True),
    (",files1", "files1", True),
    ("files1,", "files2", False),
    ("*.example.org,!secret.example.org", "www.example.org", True),
    ("*.example.org,!secret.example.org", "secret.example.org", False),
    ("!secret.example.org,*.example.org", "secret.example.org", False),
    ("!secret.example.org", "www.example.org", False),
    ("!*.example.org,files1", "files1", True),
    ("[127.0.0.1]:*", "[127.0.0.1]:2222", True),
    ("[127.0.0.1]:*", "127.0.0.1", False),
    ("[127.0.0.1]:22?2", "[127.0.0.1]:2222", True),
    ("[files1]:2222", "[files1]:2222", True),
    ("[files1]:2222", "[files1]:2223", False),
    ("files1", "[files1]:2222", False),
    # Brackets are literal characters, not a character class as in fnmatch.
    ("[127.0.0.1]", "127.0.0.1", False),
    ("[abc]", "a", False),
    ("hash:files1", "files1", True),
    ("hash:files1", "files2", False),
    ("hash:[files1]:2222", "[files1]:2222", True),
    ("hash:[files1]:2222", "files1", False),
    # A hashed name only counts as the whole field.
    ("files2,hash:files1", "files1", False),
]


@pytest.mark.parametrize(("field", "host", "applies"), PATTERN_CASES)
def test_host_patterns_match_as_in_openssh(
    field: str, host: str, applies: bool, tmp_path: Path, keys: dict[str, Path]
) -> None:
    if "hash:" in field:
        head, _, name = field.partition("hash:")
        field = head + hashed_name(name, tmp_path / "scratch", keys["other"])
    known = tmp_path / "known_hosts"
    known.write_text(f"{field} {public_line(keys['other'])}\n")
    openssh = subprocess.run(["ssh-keygen", "-F", host, "-f", str(known)], capture_output=True, text=True)
    assert (openssh.returncode == 0) == applies, openssh.stdout + openssh.stderr
    assert host_matches(field, host) == applies


def test_names_are_looked_up_in_lowercase(tmp_path: Path, keys: dict[str, Path]) -> None:
    # ssh lowercases the name before looking it up; a hashed entry only shows it.
    known = tmp_path / "known_hosts"
    field = hashed_name("files1", tmp_path / "scratch", keys["other"])
    known.write_text(f"{field} {public_line(keys['other'])}\n")
    assert len(HostKeyStore.single_file(known).entries("FILES1")) == 1


# --------------------------------------------------------------------------------------
# Reading lines


def test_lines_are_read_as_openssh_reads_them(tmp_path: Path, keys: dict[str, Path]) -> None:
    other = public_line(keys["other"])
    kind, blob = other.split()
    path = tmp_path / "known_hosts"

    def read(line: str) -> KnownKey | None:
        return parse_line(line, path, 1)

    def marker(line: str) -> str | None:
        entry = read(line)
        return None if entry is None else entry.marker

    plain = read(f"files1 {other} a comment")
    assert plain is not None
    assert (plain.hosts, plain.key_type, plain.marker) == ("files1", kind, "")
    assert plain.blob == base64.b64decode(blob)
    assert marker(f"  \tfiles1\t{other}\n") == ""
    assert marker(f"@revoked * {other}") == REVOKED
    assert marker(f"@cert-authority *.example.org {other}") == CERT_AUTHORITY
    # OpenSSH skips these lines: they vouch for nothing and revoke nothing.
    assert read(f"# files1 {other}") is None
    assert read("") is None
    assert read(f"@trusted files1 {other}") is None
    assert read(f"@revoked @cert-authority * {other}") is None
    assert read(f"files1 {kind}") is None
    assert read(f"files1 ssh-rsa {blob}") is None  # the blob says ed25519
    assert read(f"files1 {kind} {blob[:-8]}") is None
    # A key type paramiko lacks is still a key on record for the host.
    dsa = read(f"files1 {public_line(keys['dsa'])}")
    assert dsa is not None and dsa.type_label == "DSA"


def test_decisions(tmp_path: Path, keys: dict[str, Path], sshd: SshServer) -> None:
    server = pkey(sshd.host_key.with_suffix(".pub"))
    mine = public_line(sshd.host_key.with_suffix(".pub"))
    other = public_line(keys["other"])
    known = tmp_path / "known_hosts"

    def decide(text: str) -> tuple[HostKeyStatus, int | None]:
        known.write_text(text)
        check = check_host_key(HostKeyStore.single_file(known).entries("files1"), server)
        return check.status, check.line.line_number if check.line else None

    assert decide("") == (HostKeyStatus.NEW, None)
    assert decide(f"files1 {mine}\n") == (HostKeyStatus.KNOWN, 1)
    assert decide(f"files1 {other}\nfiles1 {mine}\n") == (HostKeyStatus.KNOWN, 2)
    assert decide(f"files1 {other}\n") == (HostKeyStatus.CHANGED, 1)
    assert decide(f"files1 {public_line(keys['dsa'])}\n") == (HostKeyStatus.CHANGED, 1)
    assert decide(f"files1 {mine}\n@revoked * {mine}\n") == (HostKeyStatus.REVOKED, 2)
    assert decide(f"@revoked files2 {mine}\n") == (HostKeyStatus.NEW, None)
    assert decide(f"@revoked * {other}\nfiles1 {mine}\n") == (HostKeyStatus.KNOWN, 2)
    # A CA key is not the host's key, even when it is the very same key.
    assert decide(f"@cert-authority * {mine}\n") == (HostKeyStatus.NEW, None)
    assert decide(f"@cert-authority * {mine}\nfiles1 {other}\n") == (HostKeyStatus.CHANGED, 2)


# --------------------------------------------------------------------------------------
# The oracle: ssh and SambaTune against the same sshd and the same known_hosts


@dataclass
class KeyTypesServer(SshServer):
    """The test bed's sshd with more host keys than its one ED25519 key."""

    extra_host_keys: tuple[Path, ...] = ()

    def write_config(self) -> None:
        super().write_config()
        with open(self.config, "a") as handle:
            handle.writelines(f"HostKey {key}\n" for key in self.extra_host_keys)


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, user_key: Path, sshd: SshServer
) -> Iterator[dict[str, SshServer]]:
    """An ED25519-only sshd, an RSA-only one, and one with both (ED25519 first)."""
    root = tmp_path_factory.mktemp("hostkey-servers")
    (root / "rsa").mkdir()
    keygen(root / "rsa" / "hostkey", kind="rsa")
    rsa = KeyTypesServer(root, "rsa")
    both = KeyTypesServer(root, "both")
    both.extra_host_keys = (keygen(root / "both" / "hostkey_rsa", kind="rsa"),)
    started: list[SshServer] = []
    try:
        for server in (rsa, both):
            server.authorize(user_key.with_suffix(".pub"))
            started.append(server.start())
        yield {"ed25519": sshd, "rsa": rsa, "both": both}
    finally:
        for running in started:
            running.stop()


@dataclass(frozen=True)
class Case:
    name: str
    server: str  # "ed25519", "rsa" or "both"
    known_hosts: str  # {port}, {ed25519}, {rsa}: the server's; {other}, {dsa}: strangers
    outcome: str  # what both must do: "known", "new", "changed" or "revoked"
    hash_names: bool = False


HOST = "[127.0.0.1]:{port}"
ORACLE_CASES = [
    Case("exact", "ed25519", f"{HOST} {{ed25519}}", "known"),
    Case("exact-changed", "ed25519", f"{HOST} {{other}}", "changed"),
    Case("hashed", "ed25519", f"{HOST} {{ed25519}}", "known", hash_names=True),
    Case("hashed-changed", "ed25519", f"{HOST} {{other}}", "changed", hash_names=True),
    Case("revoked", "ed25519", f"@revoked {HOST} {{ed25519}}", "revoked"),
    Case("revoked-and-listed", "ed25519", f"{HOST} {{ed25519}}\n@revoked * {{ed25519}}", "revoked"),
    Case("revoked-for-another-host", "ed25519", "@revoked files1 {ed25519}", "new"),
    Case("another-key-revoked", "ed25519", f"@revoked * {{other}}\n{HOST} {{ed25519}}", "known"),
    Case("other-type-on-record", "rsa", f"{HOST} {{other}}", "changed"),
    Case("other-type-under-wildcard", "rsa", "* {other}", "changed"),
    Case("dsa-on-record", "ed25519", f"{HOST} {{dsa}}", "changed"),
    Case("rsa-on-record-ed25519-also-offered", "both", f"{HOST} {{rsa}}", "known"),
    Case("port-wildcard-changed", "ed25519", "[127.0.0.1]:* {other}", "changed"),
    Case("wildcard-right", "ed25519", "[127.0.0.*]:* {ed25519}", "known"),
    Case("question-mark-changed", "ed25519", "[127.0.0.?]:{port} {other}", "changed"),
    Case("list-changed", "ed25519", f"files1,{HOST},files2 {{other}}", "changed"),
    Case("negated", "ed25519", f"[127.0.0.1]:*,!{HOST} {{other}}", "new"),
    Case("negated-first", "ed25519", f"!{HOST},* {{other}}", "new"),
    Case("plain-name-right", "ed25519", "127.0.0.1 {ed25519}", "known"),
    Case("plain-name-changed", "ed25519", "127.0.0.1 {other}", "new"),
    Case("cert-authority", "ed25519", "@cert-authority * {other}", "new"),
    Case("cert-authority-is-host-key", "ed25519", f"@cert-authority {HOST} {{ed25519}}", "new"),
    Case(
        "cert-authority-and-changed", "ed25519", f"@cert-authority * {{ed25519}}\n{HOST} {{other}}", "changed"
    ),
    Case("unknown-marker", "ed25519", f"@trusted {HOST} {{other}}", "new"),
    Case("two-markers", "ed25519", "@revoked @cert-authority * {ed25519}", "new"),
    Case("comment", "ed25519", f"# {HOST} {{other}}\n", "new"),
]


def openssh_outcome(server: SshServer, known: Path, user_key: Path) -> str:
    result = subprocess.run(
        [
            "ssh",
            "-F",
            "/dev/null",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-o",
            f"UserKnownHostsFile={known}",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "UpdateHostKeys=no",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-i",
            str(user_key),
            "-p",
            str(server.port),
            f"{current_user()}@127.0.0.1",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "REVOKED HOST KEY" in result.stderr:
        return "revoked"
    if "HOST IDENTIFICATION HAS CHANGED" in result.stderr:
        return "changed"
    if result.returncode == 0:
        return "new" if "Permanently added" in result.stderr else "known"
    return f"ssh failed otherwise: {result.stderr}"


def options_with(port: int, known: Path, user_key: Path, lines: str | None = None) -> ConnectionOptions:
    """Options for the test sshd on ``port``, with ``known`` as known_hosts (written
    with ``lines`` when given)."""
    if lines is not None:
        known.write_text(lines)
    return ConnectionOptions(
        host="127.0.0.1", port=port, user=current_user(), identity_file=str(user_key), known_hosts=known
    )


def sambatune_outcome(server: SshServer, known: Path, user_key: Path) -> tuple[str, FixedAnswers]:
    options = options_with(server.port, known, user_key)
    answers = FixedAnswers(accept_new_host_key=True)
    try:
        target = open_target(options, answers)
    except HostKeyRevoked:
        return "revoked", answers
    except HostKeyChanged:
        return "changed", answers
    assert target.run(["true"]).ok
    target.close()
    return ("new" if answers.questions else "known"), answers


@pytest.mark.parametrize("case", ORACLE_CASES, ids=lambda c: c.name)
def test_sambatune_decides_as_openssh_accept_new(
    case: Case,
    servers: dict[str, SshServer],
    keys: dict[str, Path],
    user_key: Path,
    tmp_path: Path,
) -> None:
    server = servers[case.server]
    publics = {"other": public_line(keys["other"]), "dsa": public_line(keys["dsa"])}
    host_keys = [server.host_key, *getattr(server, "extra_host_keys", ())]
    for key in host_keys:
        publics[key.with_suffix(".pub").read_text().split()[0].removeprefix("ssh-")] = public_line(
            key.with_suffix(".pub")
        )
    crafted = tmp_path / "known_hosts"
    crafted.write_text(case.known_hosts.format(port=server.port, **publics) + "\n")
    if case.hash_names:
        subprocess.run(["ssh-keygen", "-H", "-f", str(crafted)], check=True, capture_output=True)
    before = crafted.read_text()
    files = {who: tmp_path / f"known_hosts.{who}" for who in ("openssh", "sambatune")}
    for path in files.values():
        path.write_text(before)

    openssh = openssh_outcome(server, files["openssh"], user_key)
    sambatune, answers = sambatune_outcome(server, files["sambatune"], user_key)

    assert openssh == case.outcome
    assert sambatune == case.outcome
    # Both write the same new line, or nothing.
    assert files["sambatune"].read_text() == files["openssh"].read_text()
    if case.outcome != "new":
        assert files["sambatune"].read_text() == before
    if case.outcome in ("changed", "revoked"):
        # Refused without a question: the app, which asks a person, refuses these too,
        # as ssh does with StrictHostKeyChecking=ask.
        assert answers.questions == []


# --------------------------------------------------------------------------------------
# Every file OpenSSH reads: the config's UserKnownHostsFile (several, with %-tokens) and
# GlobalKnownHostsFile, or their defaults. A key on record in any of them counts.

LOCATED_CASES = [c for c in ORACLE_CASES if c.name in ("exact", "exact-changed", "hashed-changed", "revoked")]
LOCATIONS = ["global-known-hosts-file", "second-user-known-hosts-file"]


def located_config(folder: Path) -> Path:
    """An ssh config naming two user files (one by %h and %p) and two global ones,
    all in ``folder`` and empty; absolute paths, since ssh's ~ is the passwd home."""
    folder.mkdir()
    for name in ("user", "global1", "global2"):
        (folder / name).touch()
    config = folder / "config"
    config.write_text(
        "Host *\n"
        f"  UserKnownHostsFile {folder}/user {folder}/user-%h-%p\n"
        f'  GlobalKnownHostsFile {folder}/global1 "{folder}/global2"\n'
    )
    return config


@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize("case", LOCATED_CASES, ids=lambda c: c.name)
def test_sambatune_reads_every_known_hosts_file_openssh_reads(
    case: Case, where: str, sshd: SshServer, keys: dict[str, Path], user_key: Path, tmp_path: Path
) -> None:
    publics = {"other": public_line(keys["other"]), "ed25519": public_line(sshd.host_key.with_suffix(".pub"))}
    line = case.known_hosts.format(port=sshd.port, **publics) + "\n"
    outcomes = {}
    for who in ("openssh", "sambatune"):
        folder = tmp_path / who
        config = located_config(folder)
        crafted = folder / ("global2" if where.startswith("global") else f"user-127.0.0.1-{sshd.port}")
        crafted.write_text(line)
        if case.hash_names:
            subprocess.run(["ssh-keygen", "-H", "-f", str(crafted)], check=True, capture_output=True)
        if who == "openssh":
            done = subprocess.run(
                [
                    "ssh", "-F", str(config), "-o", "StrictHostKeyChecking=accept-new",
                    "-o", "UpdateHostKeys=no", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                    "-i", str(user_key), "-p", str(sshd.port), f"{current_user()}@127.0.0.1", "true",
                ],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            outcomes[who] = (
                "revoked" if "REVOKED HOST KEY" in done.stderr
                else "changed" if "HOST IDENTIFICATION HAS CHANGED" in done.stderr
                else ("new" if "Permanently added" in done.stderr else "known") if done.returncode == 0
                else done.stderr
            )  # fmt: skip
            added = (folder / "user").read_text()
        else:
            options = ConnectionOptions(
                host="127.0.0.1", port=sshd.port, user=current_user(), identity_file=str(user_key),
                ssh_config=config,
            )  # fmt: skip
            try:
                open_target(options, FixedAnswers(accept_new_host_key=True)).close()
                outcomes[who] = "known" if _own_known_hosts() == "" else "new"
            except HostKeyRevoked:
                outcomes[who] = "revoked"
            except HostKeyChanged:
                outcomes[who] = "changed"
            mine = _own_known_hosts()
        assert crafted.read_text() != "" and (folder / "global1").read_text() == ""
    assert outcomes == {"openssh": case.outcome, "sambatune": case.outcome}
    # The same key is added, or none (ssh to its first user file, SambaTune to its own).
    assert [k.split()[1:] for k in mine.splitlines()] == [k.split()[1:] for k in added.splitlines()]


def _own_known_hosts() -> str:
    from sambatune.appdirs import known_hosts_file

    return known_hosts_file().read_text()


def test_the_default_files_are_openssh_defaults(
    sshd: SshServer, keys: dict[str, Path], user_key: Path, isolated_home: Path
) -> None:
    endpoint = resolve_endpoint("127.0.0.1", ssh_config=paramiko.SSHConfig())
    assert endpoint.user_known_hosts == (
        str(isolated_home / ".ssh" / "known_hosts"),
        str(isolated_home / ".ssh" / "known_hosts2"),
    )
    assert endpoint.global_known_hosts == ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
    # A key on record in ~/.ssh/known_hosts2 is as good as one in known_hosts.
    (isolated_home / ".ssh" / "known_hosts2").write_text(
        f"[127.0.0.1]:{sshd.port} {public_line(keys['other'])}\n"
    )
    options = ConnectionOptions(
        host="127.0.0.1", port=sshd.port, user=current_user(), identity_file=str(user_key)
    )
    with pytest.raises(HostKeyChanged):
        open_target(options, FixedAnswers(accept_new_host_key=True))
    assert _own_known_hosts() == ""


def test_known_hosts_options_are_read_as_ssh_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWN_DIR", "/srv/keys")
    config = paramiko.SSHConfig.from_text(
        "Host files1\n  HostName Files1.Example.org\n  Port 2222\n  User admin\n"
        '  UserKnownHostsFile ~/a "/b c/%h_%p_%r" ${KNOWN_DIR}/%n %%literal\n'
        "  GlobalKnownHostsFile none\n"
        "Host files2\n  UserKnownHostsFile /x/%Q\n"
    )
    endpoint = resolve_endpoint("files1", ssh_config=config)
    assert endpoint.user_known_hosts == (
        os.path.expanduser("~/a"),
        "/b c/files1.example.org_2222_admin",
        "/srv/keys/files1",
        "%literal",
    )
    assert endpoint.global_known_hosts == ()
    with pytest.raises(InvalidInput, match="%Q"):
        resolve_endpoint("files2", ssh_config=config)


# --------------------------------------------------------------------------------------
# What a person is told


def test_revoked_key_message(sshd: SshServer, user_key: Path, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    pub = sshd.host_key.with_suffix(".pub")
    options = options_with(
        sshd.port, known, user_key, f"{sshd.known_hosts_line}@revoked * {public_line(pub)}\n"
    )
    with pytest.raises(HostKeyRevoked) as caught:
        open_target(options, FixedAnswers(accept_new_host_key=True))
    assert caught.value.code == "host-key-revoked"
    assert "revoked" in caught.value.message
    assert sshd.host_key_fingerprint in caught.value.message
    assert f"{known}, line 2" in caught.value.details


def test_other_key_type_message(
    servers: dict[str, SshServer], keys: dict[str, Path], user_key: Path, tmp_path: Path
) -> None:
    server = servers["rsa"]
    known = tmp_path / "known_hosts"
    options = options_with(
        server.port, known, user_key, f"[127.0.0.1]:{server.port} {public_line(keys['other'])}\n"
    )
    with pytest.raises(HostKeyChanged) as caught:
        open_target(options, FixedAnswers(accept_new_host_key=True))
    assert "CHANGED" in caught.value.message
    assert "type RSA" in caught.value.message and "type ED25519" in caught.value.message
    assert server.host_key_fingerprint in caught.value.message
    assert f"ssh-keygen -R '[127.0.0.1]:{server.port}' -f '{known}'" in caught.value.details


def test_changed_key_under_a_pattern_is_not_removed_with_ssh_keygen(
    sshd: SshServer, keys: dict[str, Path], user_key: Path, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    options = options_with(sshd.port, known, user_key, f"[127.0.0.1]:* {public_line(keys['other'])}\n")
    with pytest.raises(HostKeyChanged) as caught:
        open_target(options, NoPrompts())
    # ssh-keygen -R would delete the pattern line for every host it covers.
    assert "ssh-keygen -R '" not in caught.value.details
    assert "'[127.0.0.1]:*'" in caught.value.details
    assert "edit it by hand" in caught.value.details


def test_certificate_authority_is_mentioned_when_asking(
    sshd: SshServer, keys: dict[str, Path], user_key: Path, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    options = options_with(sshd.port, known, user_key, f"@cert-authority * {public_line(keys['other'])}\n")
    with pytest.raises(HostKeyUnknown) as caught:
        open_target(options, NoPrompts())
    assert "certificate authority" in caught.value.details
    assert f"{known}, line 1" in caught.value.details
