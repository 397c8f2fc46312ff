"""~/.ssh/config as OpenSSH reads it: Include (checked against ``ssh -G`` itself), and
key files: one the user named must exist, one of the config may be missing."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sambatune.errors import AuthenticationFailed, InvalidInput, SecretRequired
from sambatune.remote.connection import ConnectionOptions, open_target
from sambatune.remote.prompts import NoPrompts
from sambatune.remote.sshconfig import INCLUDE_DEPTH_LIMIT, load_ssh_config, resolve_endpoint
from testbed.sshd import SshServer, current_user

SSH = shutil.which("ssh")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.lstrip("\n"))
    return path


def resolved(host: str) -> tuple[str, int, str]:
    endpoint = resolve_endpoint(host)
    return endpoint.hostname, endpoint.port, endpoint.user


# -- Include ----------------------------------------------------------------------------


def test_include_at_the_top_reads_a_folder_in_sorted_order(isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    write(ssh / "config", "Include config.d/*\nHost *\n  User fallback\n")
    write(ssh / "config.d" / "20-later", "Host files1\n  Port 9999\n  User admin\n")
    write(ssh / "config.d" / "10-first", "Host files1\n  HostName 10.0.0.5\n  Port 2222\n")
    (ssh / "config.d" / "sub").mkdir()  # a folder the glob matches: not a config file
    assert resolved("files1") == ("10.0.0.5", 2222, "admin")  # first obtained value wins
    assert resolved("other") == ("other", 22, "fallback")


def test_include_inside_a_block_applies_only_when_the_block_matches(isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    write(
        ssh / "config",
        """
Host web*
    User webadmin
    Include web.conf
    Port 2201
Host *
    Port 2000
""",
    )
    write(
        ssh / "web.conf",
        """
HostName web.example
Host *.lan
    Port 2300
""",
    )
    assert resolved("web1") == ("web.example", 2201, "webadmin")
    # The included Host block holds only where the including one holds too...
    assert resolved("web1.lan") == ("web.example", 2300, "webadmin")
    assert resolved("db.lan") == ("db.lan", 2000, current_user())
    # ...and after the Include the including block goes on as before.
    assert resolved("mail") == ("mail", 2000, current_user())


def test_include_paths_tilde_absolute_relative_several_and_missing(
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    elsewhere = write(tmp_path / "elsewhere.conf", "Host b\n  Port 2002\n")
    write(isolated_home / "home.conf", "Host a\n  Port 2001\n")
    write(isolated_home / ".ssh" / "rel.conf", "Host c\n  Port 2003\n")
    write(
        isolated_home / ".ssh" / "config",
        f'Include ~/home.conf "{elsewhere}" rel.conf nothing-here.conf missing.d/*\nHost d\n  Port 2004\n',
    )
    assert [resolved(h)[1] for h in "abcd"] == [2001, 2002, 2003, 2004]


def test_includes_nest_up_to_sixteen_deep(isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    write(ssh / "config", "Include level1\n")
    for level in range(1, INCLUDE_DEPTH_LIMIT):
        write(ssh / f"level{level}", f"Include level{level + 1}\n")
    write(ssh / f"level{INCLUDE_DEPTH_LIMIT}", "Host deep\n  Port 2016\n")
    assert resolved("deep")[1] == 2016

    write(ssh / f"level{INCLUDE_DEPTH_LIMIT}", f"Include level{INCLUDE_DEPTH_LIMIT + 1}\n")
    write(ssh / f"level{INCLUDE_DEPTH_LIMIT + 1}", "Host deep\n  Port 2017\n")
    with pytest.raises(InvalidInput, match="Too many nested Include levels"):
        load_ssh_config()


def test_a_file_including_itself_is_an_error_not_a_hang(isolated_home: Path) -> None:
    write(isolated_home / ".ssh" / "config", "Host x\n  Include config\n")
    with pytest.raises(InvalidInput, match="does a file include itself"):
        load_ssh_config()


def test_an_included_file_others_may_write_is_refused(isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    write(ssh / "config", "Include config.d/*\n")
    shared = write(ssh / "config.d" / "team", "Host files1\n  HostName 10.9.9.9\n")
    shared.chmod(0o664)
    with pytest.raises(InvalidInput, match=f"Bad owner or permissions on {shared}"):
        load_ssh_config()
    shared.chmod(0o644)
    assert resolved("files1")[0] == "10.9.9.9"


LAYOUTS = {
    "top-level folder": {
        "config": "Include config.d/*\nHost *\n  User fallback\n  Port 2000\n",
        "config.d/10-files": "Host files1\n  HostName 10.0.0.5\n  Port 2222\n",
        "config.d/20-more": "Port 2200\nHost files1\n  Port 9999\n  User filesadmin\n",
    },
    "inside Host and Match": {
        "config": (
            "Host web* !web9\n  User webadmin\n  Include web.conf\n  Port 2201\n"
            "Match user root,admin\n  Include rooted.conf\n"
            "Host *\n  User fallback\n"
        ),
        "web.conf": "HostName web.example\nHost *.lan\n  Port 2300\nMatch host web.example\n  Port 2400\n",
        "rooted.conf": "Port 2500\nHost db*\n  HostName db.internal\n",
    },
}
HOSTS = ("files1", "web1", "web1.lan", "web9", "db1", "other")


@pytest.mark.skipif(SSH is None, reason="needs the OpenSSH client")
@pytest.mark.parametrize("layout", LAYOUTS)
def test_include_resolves_as_ssh_does(layout: str, isolated_home: Path) -> None:
    ssh = isolated_home / ".ssh"
    for name, text in LAYOUTS[layout].items():
        write(ssh / name, text)
    config = load_ssh_config(ssh / "config")
    for host in HOSTS:
        # -F: the same file, without the system-wide one SambaTune does not read either.
        answer = subprocess.run(
            [str(SSH), "-G", "-F", str(ssh / "config"), host],
            capture_output=True,
            text=True,
            check=True,
            env={"HOME": str(isolated_home), "PATH": "/usr/bin:/bin"},
        ).stdout
        theirs = dict(line.split(" ", 1) for line in answer.splitlines() if " " in line)
        ours = config.lookup(host)
        assert (ours.get("hostname"), ours.get("port", "22"), ours.get("user", current_user())) == (
            theirs["hostname"],
            theirs["port"],
            theirs["user"],
        ), host


def test_connect_with_port_user_and_key_from_an_included_file(
    sshd: SshServer,
    user_key: Path,
    isolated_home: Path,
) -> None:
    ssh = isolated_home / ".ssh"
    write(ssh / "config", "Include config.d/*.conf\n")
    write(
        ssh / "config.d" / "testbed.conf",
        f"""
Host testbed
    HostName 127.0.0.1
    Port {sshd.port}
    User {current_user()}
    IdentityFile {user_key}
    IdentitiesOnly yes
""",
    )
    write(ssh / "known_hosts", sshd.known_hosts_line)
    transport = open_target(ConnectionOptions(host="testbed"), NoPrompts())
    try:
        assert transport.label == f"{current_user()}@testbed:{sshd.port}"
        assert transport.run(["true"]).ok
    finally:
        transport.close()


# -- key files -------------------------------------------------------------------------------


def test_a_mistyped_identity_file_is_an_error_naming_it(
    ssh_options: ConnectionOptions,
    sshd: SshServer,
) -> None:
    ssh_options.identity_file = "~/.ssh/id_ed2519"
    with pytest.raises(InvalidInput) as caught:
        open_target(ssh_options, NoPrompts())
    assert caught.value.message == "The identity file ~/.ssh/id_ed2519 does not exist."
    assert str(Path.home() / ".ssh" / "id_ed2519") in caught.value.details


def test_a_folder_as_identity_file_is_an_error(ssh_options: ConnectionOptions) -> None:
    ssh_options.identity_file = str(Path.home())
    with pytest.raises(InvalidInput, match="is not a file"):
        open_target(ssh_options, NoPrompts())


def test_the_command_line_names_a_mistyped_identity(sshd: SshServer, tmp_path: Path) -> None:
    missing = str(tmp_path / "id_ed2519")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sambatune",
            "survey",
            "--host",
            "127.0.0.1",
            "--port",
            str(sshd.port),
            "--identity",
            missing,
            "--known-hosts",
            str(tmp_path / "kh"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["message"]) == (
        "invalid-input",
        f"The identity file {missing} does not exist.",
    )


def test_a_key_file_named_for_password_sign_in_does_not_matter(
    ssh_options: ConnectionOptions,
) -> None:
    ssh_options.identity_file = "~/.ssh/id_ed2519"
    ssh_options.auth = "password"
    # The test sshd takes keys only: the answer is about the password, not the key file.
    with pytest.raises((AuthenticationFailed, SecretRequired)):
        open_target(ssh_options, NoPrompts())


def test_a_missing_identity_file_of_the_ssh_config_is_skipped_as_ssh_does(
    sshd: SshServer,
    user_key: Path,
    isolated_home: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="sambatune.remote.sshconfig")
    ssh = isolated_home / ".ssh"
    write(
        ssh / "config",
        f"""
Host testbed
    HostName 127.0.0.1
    Port {sshd.port}
    User {current_user()}
    IdentityFile ~/.ssh/id_gone
    IdentityFile {user_key}
""",
    )
    write(ssh / "known_hosts", sshd.known_hosts_line)
    transport = open_target(ConnectionOptions(host="testbed"), NoPrompts())
    try:
        assert transport.run(["true"]).ok
    finally:
        transport.close()
    assert f"IdentityFile {ssh / 'id_gone'} (ssh config, for testbed) does not exist: skipped" in caplog.text
