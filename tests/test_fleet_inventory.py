"""Fleets from Ansible inventories, ssh config and hosts typed by hand
(sambatune.fleet.inventory), checked against Ansible's own reading where it is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from sambatune.errors import InvalidInput
from sambatune.fleet.ansible_inventory import load_inventory
from sambatune.fleet.inventory import (
    HIDDEN,
    VAULT_ENCRYPTED,
    Fleet,
    fleet_by_hand,
    fleet_from_ssh_config,
    split_limit,
)

REAL_INVENTORIES = Path(__file__).parent / "data" / "inventories"
ANSIBLE_INVENTORY = shutil.which("ansible-inventory", path=str(Path(sys.executable).parent)) or shutil.which(
    "ansible-inventory"
)
TestFunction = TypeVar("TestFunction", bound=Callable[..., None])


def _needs_ansible(test: TestFunction) -> TestFunction:
    """Skipped without ansible-inventory; slow, since each call starts Ansible (0.7 s):
    out of `make check`, in `make test`, which installs it."""
    skip = pytest.mark.skipif(ANSIBLE_INVENTORY is None, reason="ansible-inventory is not installed")
    marked: TestFunction = pytest.mark.slow(skip(test))
    return marked


# all < parent group < child group < host; [g:vars] of a group declared later; a range
# with a port; quoted and literal values; a host in two groups.
LAYERED_INI = """\
# hosts before any section are ungrouped
loose ansible_host=10.0.0.9

[fileservers]
nas[01:03].branch.example ansible_user=deploy
nas-b:2222 samba_conf=/etc/samba/smb-b.conf ansible_become=yes note="two words" count=42

[backup]
nas-b ansible_host=192.0.2.5 level=host

[branch:children]
fileservers
backup

[branch:vars]
level=branch
ansible_user=admin

[fileservers:vars]
level=fileservers
ansible_ssh_private_key_file=~/.ssh/fleet_ed25519

[all:vars]
level=all
ansible_python_interpreter=/usr/bin/python3
"""

LAYERED_YAML = """\
all:
  vars:
    level: all
  hosts:
    loose:
      ansible_host: 10.0.0.9
  children:
    branch:
      vars:
        level: branch
        ansible_user: admin
      children:
        fileservers:
          vars: {level: fileservers}
          hosts:
            nas[01:02].branch.example:
            nas-b:2222:
              samba_conf: /etc/samba/smb-b.conf
              ansible_become: true
        backup:
          hosts:
            nas-b:
              ansible_host: 192.0.2.5
              level: host
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _ansible_list(path: Path, limit: str | None = None) -> dict[str, Any]:
    assert ANSIBLE_INVENTORY is not None
    command = [ANSIBLE_INVENTORY, "-i", str(path), "--list"]
    if limit is not None:
        command += ["--limit", limit]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path.parent,
        env={"ANSIBLE_LOCALHOST_WARNING": "False", "PATH": "/usr/bin:/bin", "HOME": str(path.parent)},
    )
    assert result.returncode == 0, result.stderr
    listed: dict[str, Any] = json.loads(result.stdout)
    return listed


def _ansible_members(listed: dict[str, Any], group: str) -> set[str]:
    entry = listed.get(group, {})
    members = set(entry.get("hosts", []))
    for child in entry.get("children", []):
        members |= _ansible_members(listed, child)
    return members


def _assert_reads_like_ansible(path: Path) -> None:
    fleet = load_inventory(path)
    listed = _ansible_list(path)
    hostvars = listed["_meta"]["hostvars"]
    assert set(fleet.names) == _ansible_members(listed, "all")
    for host in fleet:
        # ansible-inventory leaves hosts without variables out of hostvars
        assert dict(host.variables) == hostvars.get(host.name, {}), host.name
    for group in listed:
        if group in ("_meta", "all"):
            continue
        ours = {host.name for host in fleet if group in host.groups}
        assert ours == _ansible_members(listed, group), group


# --- INI and YAML ----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), [("layered.ini", LAYERED_INI), ("layered.yml", LAYERED_YAML)])
def test_variables_layer_like_ansible(tmp_path: Path, name: str, text: str) -> None:
    fleet = load_inventory(_write(tmp_path, name, text))
    nas_b = fleet.host("nas-b")
    # host < child group < parent group < all
    assert nas_b.variables["level"] == "host"
    assert fleet.host("nas01.branch.example").variables["level"] == "fileservers"
    assert fleet.host("loose").variables["level"] == "all"
    assert fleet.host("loose").groups == ("ungrouped",)
    assert nas_b.address == "192.0.2.5"
    assert nas_b.port == 2222
    assert nas_b.samba_conf == "/etc/samba/smb-b.conf"
    assert nas_b.become is True
    assert nas_b.user == "admin"  # the group's; the range line's user is for nas01..03 only
    assert set(nas_b.groups) == {"backup", "branch", "fileservers"}
    assert fleet.names[0] == "loose"


def test_ini_values_are_python_literals_or_text(tmp_path: Path) -> None:
    fleet = load_inventory(_write(tmp_path, "layered.ini", LAYERED_INI))
    nas_b = fleet.host("nas-b")
    assert nas_b.variables["count"] == 42
    assert nas_b.variables["note"] == "two words"
    assert nas_b.variables["ansible_become"] == "yes"  # text, taken as true like Ansible
    assert [h.name for h in fleet if h.name.startswith("nas0")] == [
        "nas01.branch.example",
        "nas02.branch.example",
        "nas03.branch.example",
    ]
    assert fleet.host("nas02.branch.example").identity_file == "~/.ssh/fleet_ed25519"


def test_ranges_with_letters_steps_and_zero_padding(tmp_path: Path) -> None:
    fleet = load_inventory(_write(tmp_path, "ranges", "[g]\ndb-[a:c]\nweb[08:12:2].lan\nx[1:2]y[1:2]\n"))
    assert fleet.names == (
        "db-a",
        "db-b",
        "db-c",
        "web08.lan",
        "web10.lan",
        "web12.lan",
        "x1y1",
        "x1y2",
        "x2y1",
        "x2y2",
    )


@_needs_ansible
@pytest.mark.parametrize(("name", "text"), [("layered.ini", LAYERED_INI), ("layered.yml", LAYERED_YAML)])
def test_generated_inventory_reads_like_ansible_inventory(tmp_path: Path, name: str, text: str) -> None:
    _assert_reads_like_ansible(_write(tmp_path, name, text))


def test_group_priority_orders_groups_of_one_depth(tmp_path: Path) -> None:
    text = """\
        [a]
        h
        [b]
        h
        [a:vars]
        x=from-a
        ansible_group_priority=5
        [b:vars]
        x=from-b
        """
    assert load_inventory(_write(tmp_path, "prio.ini", text)).host("h").variables["x"] == "from-a"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[web]\nh1\n[web:kids]\nx\n", "[web:kids] has unknown type"),
        ("[web]\nh1\n[db:vars]\nx=1\n", "undefined group 'db'"),
        ("[web:children]\nghost\n", "undefined group 'ghost'"),
        ("[a:children]\nb\n[b:children]\na\n", "loop"),
        ("[web]\nh1 novalue\n", "key=value"),
        ('[web]\nh1 note="open\n', "No closing quotation"),
        ("[web]\nh1 ansible_port=ssh\n", "ansible_port 'ssh' is not a number"),
        ("[web name]\nh1\n", "Invalid section entry"),
        ("[web:vars]\nnoequals\n[web]\n", "key=value"),
    ],
)
def test_bad_ini_is_an_error_naming_file_and_ansibles_reason(tmp_path: Path, text: str, words: str) -> None:
    path = _write(tmp_path, "bad.ini", text)
    with pytest.raises(InvalidInput) as caught:
        load_inventory(path)
    assert caught.value.message.startswith(f"{path}: ")
    assert words in caught.value.message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("all:\n  hosts:\n    - a\n    - b\n", 'Invalid "hosts" entry for "all" group'),
        ("all:\n  children:\n    web:\n      hosts:\n        h1: [1, 2]\n", "expected dictionary"),
        ("all:\n  vars: [x]\n", 'Invalid "vars" entry'),
    ],
)
def test_bad_yaml_is_an_error_naming_file_and_ansibles_reason(tmp_path: Path, text: str, words: str) -> None:
    path = _write(tmp_path, "bad.yml", text)
    with pytest.raises(InvalidInput) as caught:
        load_inventory(path)
    assert caught.value.message.startswith(f"{path}: ")
    assert words in caught.value.message
    assert "\n" not in caught.value.message


def test_unreadable_inventory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        load_inventory(tmp_path / "missing.ini")
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00[web]\n")
    with pytest.raises(InvalidInput, match="Ansible cannot read"):
        load_inventory(tmp_path / "binary")


# --- group_vars, host_vars and vault ---------------------------------------------------


VAULT_PASSWORD = "correct horse battery staple"


def _vaulted(text: str) -> str:
    from sambatune.fleet.ansible_inventory import ansible_core

    ansible_core()  # ansible-core imported the way that works under Qt's import hook
    from ansible.parsing.vault import VaultLib, VaultSecret

    secret = VaultSecret(VAULT_PASSWORD.encode())
    return VaultLib([("default", secret)]).encrypt(text, secret).decode()


def _inventory_folder(tmp_path: Path) -> Path:
    """An inventory folder as admins keep one: hosts, group_vars (a template, an inline
    !vault become password), host_vars (one file vault-encrypted as a whole)."""
    folder = tmp_path / "inventory"
    (folder / "group_vars").mkdir(parents=True)
    (folder / "host_vars").mkdir()
    (folder / "hosts.ini").write_text("[samba]\nnas1 ansible_host=192.0.2.1\nnas2 ansible_host=192.0.2.2\n")
    (folder / "group_vars" / "all.yml").write_text("admin_name: deploy\nsamba_conf: /etc/samba/smb.conf\n")
    become = textwrap.indent(_vaulted("sudo-from-vault"), "  ")
    (folder / "group_vars" / "samba.yml").write_text(
        f'ansible_user: "{{{{ admin_name }}}}"\nansible_become: true\n'
        f"ansible_become_password: !vault |\n{become}\n"
    )
    (folder / "host_vars" / "nas2.yml").write_text(
        _vaulted(
            "ansible_user: nas2admin\nsamba_measure_share: private\nansible_password: login-from-vault\n"
        )
    )
    return folder


def test_group_vars_host_vars_and_vault_read_as_ansible_reads_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from sambatune.fleet.ansible_inventory import VaultPasswords

    caplog.set_level("DEBUG")
    fleet = load_inventory(_inventory_folder(tmp_path), VaultPasswords(password=VAULT_PASSWORD))
    nas1, nas2 = fleet.host("nas1"), fleet.host("nas2")
    # group_vars/samba.yml's template over group_vars/all.yml; host_vars over group_vars
    assert (nas1.user, nas1.become, nas1.samba_conf) == ("deploy", True, "/etc/samba/smb.conf")
    assert nas2.user == "nas2admin"
    assert nas1.connection_options().sudo_password == "sudo-from-vault"
    assert nas2.connection_options().password == "login-from-vault"
    # Everything that came out of a vault is secret, an ordinary variable of that file too.
    assert nas2.secrets >= {"ansible_become_password", "ansible_password", "samba_measure_share"}
    shown = json.dumps(fleet.to_json())
    for secret in ("sudo-from-vault", "login-from-vault", "private", VAULT_PASSWORD):
        assert secret not in shown
        assert secret not in caplog.text
    assert "$ANSIBLE_VAULT" not in shown


def test_vault_secrets_from_a_file_a_script_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sambatune.fleet.ansible_inventory import VaultPasswords

    folder = _inventory_folder(tmp_path)
    password_file = tmp_path / "vault-pass"
    password_file.write_text(VAULT_PASSWORD + "\n")
    script = tmp_path / "vault-pass-client"
    script.write_text(f"#!/bin/sh\necho '{VAULT_PASSWORD}'\n")
    script.chmod(0o700)
    for vault in (VaultPasswords(files=(password_file,)), VaultPasswords(files=(script,))):
        assert load_inventory(folder, vault).host("nas2").user == "nas2admin"
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(password_file))
    assert load_inventory(folder).host("nas1").connection_options().sudo_password == "sudo-from-vault"


def test_vault_data_without_its_password_is_refused_saying_how_to_give_it(tmp_path: Path) -> None:
    from sambatune.fleet.ansible_inventory import VaultPasswordNeeded, VaultPasswords

    folder = _inventory_folder(tmp_path)
    with pytest.raises(
        VaultPasswordNeeded, match=r"nas1: ansible_become_password .* no vault password was given"
    ) as missing:
        load_inventory(folder)
    assert "--ask-vault-pass" in missing.value.details
    with pytest.raises(VaultPasswordNeeded, match="does not open"):
        load_inventory(folder, VaultPasswords(password="wrong"))
    # Only a file vault-encrypted as a whole: Ansible cannot read the host's variables.
    (folder / "group_vars" / "samba.yml").write_text("ansible_become: true\n")
    with pytest.raises(VaultPasswordNeeded, match="no vault password was given"):
        load_inventory(folder)
    with pytest.raises(VaultPasswordNeeded, match="does not open"):
        load_inventory(folder, VaultPasswords(password="wrong"))


def test_an_inline_vault_value_sambatune_does_not_need_is_kept_closed(tmp_path: Path) -> None:
    vaulted = textwrap.indent(_vaulted("unrelated"), "        ")
    path = tmp_path / "hosts.yml"
    path.write_text(f"all:\n  hosts:\n    h1:\n      app_token: !vault |\n{vaulted}\n")
    host = load_inventory(path).host("h1")
    assert host.variables["app_token"] == VAULT_ENCRYPTED
    assert host.to_json()["variables"]["app_token"] == HIDDEN


# --- Real inventories ------------------------------------------------------------------


def test_kolla_multinode_inventory() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "kolla-multinode")
    assert fleet.names == (
        "control01",
        "control02",
        "control03",
        "network01",
        "network02",
        "compute01",
        "monitoring01",
        "storage01",
        "localhost",
    )
    # manila-share is named as a child before its own section declares it
    assert "openvswitch" in fleet.host("network01").groups
    assert "manila-share" in fleet.host("network01").groups
    assert "ovn-nb-db" in fleet.host("control02").groups  # ovn-database's child, five deep
    assert fleet.host("localhost").connection_options().is_local
    assert fleet.select("baremetal:!control").names == (
        "network01",
        "network02",
        "compute01",
        "monitoring01",
        "storage01",
    )


def test_ampere_inventory_group_vars_with_legacy_names() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "ampere-kolla-hosts")
    assert len(fleet) == 7
    first = fleet.host("openstack1")
    assert (first.address, first.user, first.identity_file) == ("10.76.96.59", "root", "~/.ssh/id_rsa")
    assert first.groups == ("ampere",)
    assert fleet.host("openstack7").address == "10.76.96.66"


def test_homelab_inventory_hosts_in_several_groups() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "homelab-hosts.ini")
    assert len(fleet) == 9
    assert fleet.host("streaming.homelab").groups == ("homelab", "media")
    assert fleet.host("pihole-raspberry").user == "arian"
    assert fleet.host("proxy.homelab").user is None
    assert fleet.select("homelab:&media:!arr*").names == (
        "streaming.homelab",
        "downloader.homelab",
        "library.homelab",
    )


def test_pi_nas_inventory() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "pi-nas-hosts.ini")
    (nas,) = fleet.hosts
    assert (nas.name, nas.address, nas.user, nas.groups) == ("pi-nas", "192.168.1.50", "pi", ("nas",))
    options = nas.connection_options()
    assert (options.host, options.user, options.password) == ("192.168.1.50", "pi", None)


def test_home_infrastructure_yaml() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "home-infrastructure.yml")
    assert fleet.names == ("nsa", "mini", "mb4", "mkt")
    assert fleet.host("nsa").variables["timezone"] == "Europe/London"
    assert fleet.host("mini").user == "richardbell"
    assert fleet.host("mb4").connection_options().is_local
    assert fleet.select("macos").names == ("mini", "mb4")


def test_homelab_infra_yaml_with_top_level_groups() -> None:
    fleet = load_inventory(REAL_INVENTORIES / "homelab-infra-hosts.yml")
    alma = fleet.host("alma-server")
    assert (alma.address, alma.port, alma.user, alma.groups) == ("192.168.2.128", 2222, "user", ("servers",))
    # 'ansible_connetion' is misspelt in the original: Ansible connects over SSH, so do we
    assert fleet.host("localhost").connection_options().host == "127.0.0.1"


@_needs_ansible
@pytest.mark.parametrize("name", sorted(p.name for p in REAL_INVENTORIES.iterdir() if p.name != "SOURCES.md"))
def test_real_inventory_reads_like_ansible_inventory(tmp_path: Path, name: str) -> None:
    copy = tmp_path / name  # no ansible.cfg or group_vars of this repository nearby
    copy.write_bytes((REAL_INVENTORIES / name).read_bytes())
    _assert_reads_like_ansible(copy)


# --- --limit ----------------------------------------------------------------------------


@pytest.fixture
def layered(tmp_path: Path) -> Fleet:
    return load_inventory(_write(tmp_path, "layered.ini", LAYERED_INI))


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (None, ("loose", "nas01.branch.example", "nas02.branch.example", "nas03.branch.example", "nas-b")),
        ("nas-b", ("nas-b",)),
        ("backup", ("nas-b",)),
        ("loose:backup", ("loose", "nas-b")),
        ("loose,backup", ("loose", "nas-b")),
        ("branch:!backup", ("nas01.branch.example", "nas02.branch.example", "nas03.branch.example")),
        ("!backup", ("loose", "nas01.branch.example", "nas02.branch.example", "nas03.branch.example")),
        ("fileservers:&backup", ("nas-b",)),
        ("*.branch.example", ("nas01.branch.example", "nas02.branch.example", "nas03.branch.example")),
        ("nas0[12]*", ("nas01.branch.example", "nas02.branch.example")),
        ("~nas-?b$", ("nas-b",)),
        ("fileservers[0]", ("nas01.branch.example",)),
        ("fileservers[1:2]", ("nas02.branch.example", "nas03.branch.example")),
        ("fileservers[-1]", ("nas-b",)),
        ("all", ("loose", "nas01.branch.example", "nas02.branch.example", "nas03.branch.example", "nas-b")),
        ("ungrouped", ("loose",)),
        ("*", ("loose", "nas01.branch.example", "nas02.branch.example", "nas03.branch.example", "nas-b")),
    ],
)
def test_limit_patterns(layered: Fleet, limit: str | None, expected: tuple[str, ...]) -> None:
    assert layered.select(limit).names == expected


@_needs_ansible
@pytest.mark.parametrize(
    "limit",
    [
        "loose:backup",
        "branch:!backup",
        "!backup",
        "fileservers:&backup",
        "*.branch.example",
        "~nas-?b$",
        "fileservers[1:2]",
        "fileservers[-1]",
        "ungrouped,nas-b",
    ],
)
def test_limit_selects_what_ansible_selects(tmp_path: Path, limit: str) -> None:
    path = _write(tmp_path, "layered.ini", LAYERED_INI)
    listed = _ansible_list(path, limit)
    assert set(load_inventory(path).select(limit).names) == _ansible_members(listed, "all")


@pytest.mark.parametrize("limit", ["nope", "branch:nope", "!nope", "&nope", "nas9*", "fileservers[9]"])
def test_a_limit_term_matching_nothing_is_an_error_naming_it(layered: Fleet, limit: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        layered.select(limit)
    term = limit.split(":")[-1]
    assert repr(term) in caught.value.message


def test_limit_from_a_file(layered: Fleet, tmp_path: Path) -> None:
    retry = tmp_path / "site.retry"
    retry.write_text("nas-b\nloose\n")
    assert layered.select(f"@{retry}").names == ("loose", "nas-b")


def test_split_limit_keeps_brackets_whole() -> None:
    assert split_limit("web[1:3]:!db") == ["web[1:3]", "!db"]
    assert split_limit("a, b ,&c") == ["a", "b", "&c"]


def test_unknown_host_name_is_an_error(layered: Fleet) -> None:
    with pytest.raises(InvalidInput, match="No host named ghost"):
        layered.host("ghost")


# --- Connection options -----------------------------------------------------------------


def test_connection_options_from_inventory_vars(layered: Fleet, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    options = layered.host("nas-b").connection_options(known_hosts=known)
    assert (options.host, options.port, options.user) == ("192.0.2.5", 2222, "admin")
    assert options.identity_file == "~/.ssh/fleet_ed25519"
    assert options.known_hosts == known
    assert options.password is None


@pytest.mark.parametrize(
    ("args", "jump"),
    [
        ("-J bastion.example", "bastion.example"),
        ("-o ProxyJump=admin@bastion:2200", "admin@bastion:2200"),
        ("-o StrictHostKeyChecking=no -oProxyJump=b1", "b1"),
        ("-o ProxyCommand='ssh -W %h:%p b'", None),
    ],
)
def test_jump_host_from_ssh_args(tmp_path: Path, args: str, jump: str | None) -> None:
    path = tmp_path / "jump.yml"
    path.write_text(json.dumps({"all": {"hosts": {"h": {"ansible_ssh_common_args": args}}}}))
    assert load_inventory(path).host("h").connection_options().jump_host == jump


@pytest.mark.parametrize(
    ("value", "python"),
    [
        ("/usr/libexec/platform-python", "/usr/libexec/platform-python"),
        ("/usr/bin/env python3", "/usr/bin/env python3"),
        ("auto_silent", None),  # Ansible's discovery: PATH's python3 here
        ("{{ ansible_playbook_python }}", sys.executable),  # rendered as Ansible does
    ],
)
def test_the_python_ansible_uses_runs_the_agents(tmp_path: Path, value: str, python: str | None) -> None:
    path = tmp_path / "py.yml"
    path.write_text(json.dumps({"all": {"hosts": {"h": {"ansible_python_interpreter": value}}}}))
    assert load_inventory(path).host("h").connection_options().python == python


def test_a_python_that_is_no_command_is_refused(tmp_path: Path) -> None:
    fleet = load_inventory(_write(tmp_path, "py.ini", "[w]\nh ansible_python_interpreter='\"/usr/bin/py'\n"))
    with pytest.raises(InvalidInput, match="ansible_python_interpreter"):
        fleet.host("h").connection_options()


def test_reading_an_inventory_leaves_the_terminal_to_sambatune(tmp_path: Path) -> None:
    """ansible-core's Display patches stdout and stderr when imported and warned on the
    terminal that it could not patch the CLI's own streams."""
    from cli_process import sambatune_cli

    path = _write(tmp_path, "hosts.ini", "[fileservers]\nnas1 ansible_host=192.0.2.7\n")
    for extra in ((), ("--json",)):
        listed = sambatune_cli("fleet", "hosts", "--inventory", str(path), *extra)
        assert listed.returncode == 0 and "nas1" in listed.stdout
        assert listed.stderr == ""


def test_a_connection_that_is_not_ssh_is_refused(tmp_path: Path) -> None:
    fleet = load_inventory(_write(tmp_path, "win.ini", "[w]\nwin1 ansible_connection=winrm\n"))
    with pytest.raises(InvalidInput, match="winrm"):
        fleet.host("win1").connection_options()


# --- Other sources ----------------------------------------------------------------------


def test_fleet_by_hand() -> None:
    fleet = fleet_by_hand(["admin@nas1:2222", "nas2", "root@[::1]:22", " ", "10.0.0.7"])
    assert fleet.names == ("nas1:2222", "nas2", "[::1]:22", "10.0.0.7")
    first = fleet.host("nas1:2222")
    assert (first.address, first.port, first.user) == ("nas1", 2222, "admin")
    v6 = fleet.host("[::1]:22").connection_options()
    assert (v6.host, v6.port, v6.user) == ("::1", 22, "root")
    assert fleet.source == "by hand"
    assert fleet.select("nas*").names == ("nas1:2222", "nas2")


@pytest.mark.parametrize("entry", ["@nas", "nas:ssh", "nas:99999", "a b", "[::1]:"])
def test_fleet_by_hand_refuses_what_is_no_destination(entry: str) -> None:
    with pytest.raises(InvalidInput):
        fleet_by_hand([entry])


def test_fleet_by_hand_refuses_a_host_twice() -> None:
    with pytest.raises(InvalidInput, match="twice"):
        fleet_by_hand(["a@nas", "b@nas"])


def test_fleet_from_ssh_config(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "Host nas1 nas2\n  User admin\nHost *.lab !bad.lab\n  Port 2200\n"
        "Host backup\n  HostName 192.0.2.9\n  Port 2222\nHost *\n  ServerAliveInterval 30\n"
    )
    fleet = fleet_from_ssh_config(config)
    assert fleet.names == ("backup", "nas1", "nas2")
    assert fleet.source == "ssh config"
    options = fleet.host("backup").connection_options(ssh_config=fleet.ssh_config)
    assert (options.host, options.ssh_config) == ("backup", config)


def test_nothing_of_ansible_core_leaves_the_reader(tmp_path: Path) -> None:
    """Names, groups and values are plain Python: Ansible's tagged strings broke the
    export's YAML writer, and nothing outside the reader should know ansible-core."""
    fleet = load_inventory(_write(tmp_path, "layered.ini", LAYERED_INI))

    def plain(value: Any) -> bool:
        if isinstance(value, dict):
            return all(type(k) is str and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(item) for item in value)
        return type(value) in (str, int, float, bool, type(None))

    for host in fleet:
        assert plain(host.name) and all(type(g) is str for g in host.groups)
        assert plain(dict(host.variables)) and plain(host.to_json())


def test_only_what_sambatune_reads_is_rendered(tmp_path: Path) -> None:
    """A play renders a variable when it uses one; so does the reader: a lookup in a
    variable SambaTune never reads does not run, and stays as written."""
    from sambatune.fleet.change import OVERLAY_VARIABLE
    from sambatune.fleet.inventory import READ_VARIABLES
    from sambatune.fleet.rollout import SHARE_VARIABLE

    assert {SHARE_VARIABLE, OVERLAY_VARIABLE, "samba_conf", "ansible_user"} <= READ_VARIABLES
    ran = tmp_path / "lookup-ran"
    side = f"{{{{ lookup('pipe', 'touch {ran}') }}}}"
    text = f"""\
        [samba]
        nas1 site=lan samba_measure_share="{{{{ 'bench-' ~ site }}}}" side="{side}"
        """
    host = load_inventory(_write(tmp_path, "hosts.ini", text)).host("nas1")
    assert host.variables["samba_measure_share"] == "bench-lan"
    assert host.variables["side"] == side
    assert not ran.exists()
