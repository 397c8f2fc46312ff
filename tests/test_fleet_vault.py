"""A fleet from an inventory folder as Ansible admins keep one (group_vars, host_vars, a
vaulted login and become password), surveyed for real: the sudo user's password opens
a root-only smb.conf only if SambaTune read it out of the vault."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from cli_process import sambatune_cli
from testbed.smbd import SmbServer
from testbed.sshd import SshServer
from testbed.sudo_user import SudoUser

VAULT_PASSWORD = "fleet vault words"


def _vaulted(text: str) -> str:
    from sambatune.fleet.ansible_inventory import ansible_core

    ansible_core()
    from ansible.parsing.vault import VaultLib, VaultSecret

    secret = VaultSecret(VAULT_PASSWORD.encode())
    return VaultLib([("default", secret)]).encrypt(text, secret).decode()


def test_a_vaulted_become_password_reaches_a_root_only_smb_conf(
    sshd_password: SshServer, sudo_user: SudoUser, smbd: SmbServer, tmp_path: Path
) -> None:
    config = tmp_path / "root-only" / "smb.conf"
    config.parent.mkdir()
    config.write_bytes(smbd.config.read_bytes())
    config.chmod(0o600)  # root's: the sudo user reads it only through sudo
    os.chmod(tmp_path, 0o755)

    folder = tmp_path / "inventory"
    (folder / "group_vars").mkdir(parents=True)
    (folder / "host_vars").mkdir()
    (folder / "hosts.ini").write_text(
        f"[fileservers]\nnas-sudo ansible_host=127.0.0.1 ansible_port={sshd_password.port}\n"
    )
    (folder / "group_vars" / "fileservers.yml").write_text(
        f"ansible_user: {sudo_user.name}\nansible_become: true\nsamba_conf: {config}\n"
    )
    secrets = f"ansible_password: {sudo_user.password}\nansible_become_password: {sudo_user.password}\n"
    (folder / "host_vars" / "nas-sudo.yml").write_text(_vaulted(secrets))
    password_file = tmp_path / "vault-pass"
    password_file.write_text(VAULT_PASSWORD + "\n")
    common = ("--inventory", str(folder), "--known-hosts", str(tmp_path / "kh"), "--accept-new-host-key")

    refused = sambatune_cli("fleet", "survey", *common)
    assert refused.returncode != 0
    assert "vault" in refused.stderr and "--vault-password-file" in refused.stderr
    assert "Traceback" not in refused.stderr

    result = sambatune_cli("fleet", "survey", *common, "--vault-password-file", str(password_file), "--json")
    assert result.returncode == 0, result.stderr
    (host,) = json.loads(result.stdout)["results"]
    assert host["status"] == "ok", host
    assert host["config_sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    assert sudo_user.password not in result.stdout + result.stderr

    listed = sambatune_cli(
        "fleet", "hosts", "--inventory", str(folder), "--vault-password-file", str(password_file), "--json"
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["hosts"][0]["user"] == sudo_user.name
    assert sudo_user.password not in listed.stdout
