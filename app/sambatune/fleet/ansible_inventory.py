"""Ansible inventories read by Ansible's own code (ansible-core, the ``fleet`` extra).

A fleet targets the hosts ``ansible-playbook -i INV`` would, with the variables a play
would see: every inventory source and plugin Ansible has (INI, YAML, a folder of them,
scripts), ``group_vars/`` and ``host_vars/`` beside the inventory, Ansible's precedence
and templating, and vault (whole files and ``!vault`` values). A hand-written reader
got the layering of group_vars wrong and connected as the wrong user.

Vault secrets come as ansible-playbook takes them: a password typed once
(``--ask-vault-pass``), ``--vault-password-file`` (a file, or a script Ansible runs),
``ANSIBLE_VAULT_PASSWORD_FILE`` or ansible.cfg's ``vault_password_file``. Decrypted
values live in memory only: every variable that came out of a vault is one of the host's
``secrets``, hidden from ``--json``, logs and exports.

ansible-core does not run on Windows (Ansible has no Windows control node), so there
the inventory is refused with a message saying so; ssh config and typed hosts remain.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sambatune.errors import InvalidInput
from sambatune.fleet.ansible_yaml import UnsafeText
from sambatune.fleet.inventory import (
    ALL,
    READ_VARIABLES,
    VAULT_ENCRYPTED,
    Fleet,
    FleetHost,
)


class VaultPasswordNeeded(InvalidInput):
    """The inventory holds vault-encrypted data SambaTune needs and no given secret opens it."""

    code = "vault-password-needed"


@dataclass(frozen=True)
class VaultPasswords:
    """Where vault secrets come from, as ansible-playbook takes them. Never written anywhere."""

    password: str | None = None  # typed (--ask-vault-pass, the window's prompt)
    files: tuple[Path, ...] = ()  # --vault-password-file: a file, or a script Ansible runs

    def __repr__(self) -> str:  # a typed password never reaches a log through repr()
        return f"VaultPasswords(password={'(given)' if self.password else None}, files={self.files})"


# ansible-core keeps process-wide state (the vault secrets of its templating, its display):
# one inventory is read at a time.
_READING = threading.Lock()


def load_inventory(path: Path, vault: VaultPasswords | None = None) -> Fleet:
    """The fleet an Ansible inventory describes (a file or a folder of them)."""
    if not path.exists():
        raise InvalidInput(f"Cannot read the inventory {path}: there is no such file or folder.")
    try:
        ansible = ansible_core()
    except ImportError as exc:
        raise InvalidInput(
            f"Reading the Ansible inventory {path} takes ansible-core 2.19 or newer, which is not "
            "installed here.",
            details="Install SambaTune's fleet extra (pip install 'sambatune[fleet]'). ansible-core "
            "runs on Linux and macOS, not on Windows: there, read the hosts from an ssh config or "
            f"type them. ({exc})",
        ) from exc
    with _READING, _warnings_collected(ansible) as warnings:
        try:
            return _read(ansible, path, vault or VaultPasswords())
        except ansible.AnsibleError as exc:
            raise _refusal(ansible, path, exc, warnings) from None


_MODULES_WITH_GETATTR = (
    "ansible.errors",
    "ansible.parsing.yaml.objects",
    "ansible.module_utils.basic",
    "ansible.module_utils.common.json",
    "ansible.module_utils.compat.datetime",
    "ansible.module_utils.compat.paramiko",
    "ansible.utils.py3compat",
)


@functools.cache
def ansible_core() -> Any:
    """ansible-core's modules, imported once and only when an inventory is read (0.2 s)."""
    import io
    import sys
    import types

    # Under Qt, PySide's import hook reads each new module's source to see whether it uses
    # PySide, and asking a module for __wrapped__ runs these modules' __getattr__, which
    # imports ansible-core's display in the middle of its constants: an import cycle. Such
    # modules are marked as not PySide's (-1) before they are imported; nothing of Qt is
    # imported here.
    pyside_features = sys.modules.get("PySide6.support.feature")
    if pyside_features is not None:
        for name in _MODULES_WITH_GETATTR:
            pyside_features.pyside_feature_dict.setdefault(name, -1)

    # Importing it makes Ansible's Display, which patches sys.stdout and sys.stderr for its
    # own forks (a lock around their writes, its own encoding error handler) and warns on
    # the terminal when it cannot (the CLI's streams show control characters visibly and
    # are not files). Those patches go to streams of their own, never SambaTune's.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO()), io.TextIOWrapper(io.BytesIO())
    try:
        # isort: off
        # ansible-core's own import order: its constants first make an import cycle.
        from ansible.parsing.dataloader import DataLoader
        from ansible import constants

        # isort: on
        from ansible._internal._datatag._tags import Origin, TrustedAsTemplate
        from ansible.errors import AnsibleError
        from ansible.inventory.manager import InventoryManager
        from ansible.parsing.vault import (
            AnsibleVaultError,
            EncryptedString,
            VaultHelper,
            VaultSecret,
            VaultSecretsContext,
            get_file_vault_secret,
            is_encrypted_file,
        )
        from ansible.template import Templar
        from ansible.utils.display import Display
        from ansible.vars.manager import VariableManager
    finally:
        sys.stdout, sys.stderr = streams

    # A source no plugin can read is an error here, not a warning and an empty fleet.
    constants.INVENTORY_ANY_UNPARSED_IS_FAILED = True
    if VaultSecretsContext.current(optional=True) is None:
        VaultSecretsContext.initialize(VaultSecretsContext([]))
    return types.SimpleNamespace(
        constants=constants,
        Origin=Origin,
        TrustedAsTemplate=TrustedAsTemplate,
        AnsibleError=AnsibleError,
        InventoryManager=InventoryManager,
        DataLoader=DataLoader,
        AnsibleVaultError=AnsibleVaultError,
        EncryptedString=EncryptedString,
        VaultHelper=VaultHelper,
        VaultSecret=VaultSecret,
        VaultSecretsContext=VaultSecretsContext,
        get_file_vault_secret=get_file_vault_secret,
        is_encrypted_file=is_encrypted_file,
        Templar=Templar,
        Display=Display,
        VariableManager=VariableManager,
    )


def _read(ansible: Any, path: Path, vault: VaultPasswords) -> Fleet:
    loader = ansible.DataLoader()
    secrets = _vault_secrets(ansible, loader, vault)
    loader.set_vault_secrets(secrets)
    ansible.VaultSecretsContext.current().secrets = secrets
    try:
        inventory = ansible.InventoryManager(loader=loader, sources=[str(path)])
        variables = ansible.VariableManager(loader=loader, inventory=inventory)
        hosts = []
        # In the order the sources first name them: Ansible's own order for 'all' follows
        # sets and changes from run to run, and a rollout's waves (its canary) must not.
        for host in inventory.hosts.values():
            found = variables.get_vars(host=host, include_hostvars=False, stage="all")
            groups = tuple(sorted(_plain(group.name) for group in host.get_groups() if group.name != ALL))
            try:
                hosts.append(_fleet_host(ansible, loader, _plain(host.name), found, groups, bool(secrets)))
            except InvalidInput as exc:
                raise type(exc)(f"{path}: {exc.message}", details=exc.details) from None
    finally:
        ansible.VaultSecretsContext.current().secrets = []
    return Fleet(tuple(hosts), str(path))


def _vault_secrets(ansible: Any, loader: Any, vault: VaultPasswords) -> list[tuple[str, Any]]:
    secrets: list[tuple[str, Any]] = []
    if vault.password:
        secrets.append(("default", ansible.VaultSecret(vault.password.encode("utf-8"))))
    files = list(vault.files)
    if not files:
        named = os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE") or ansible.constants.DEFAULT_VAULT_PASSWORD_FILE
        files = [Path(named)] if named else []
    for file in files:
        secret = ansible.get_file_vault_secret(filename=str(file), vault_id="default", loader=loader)
        secret.load()
        secrets.append(("default", secret))
    return secrets


def _fleet_host(
    ansible: Any, loader: Any, name: str, found: dict[str, Any], groups: tuple[str, ...], given: bool
) -> FleetHost:
    """Only what SambaTune reads is rendered, as a play renders a variable when it uses
    it: a lookup in any other variable never runs here. Those are kept as written, an
    ``!unsafe`` one as UnsafeText, so an export hands Ansible exactly what it read."""
    templar = ansible.Templar(loader=loader, variables=found)
    variables: dict[str, Any] = {}
    secrets: set[str] = set()
    for tagged_key, value in found.items():
        key = _plain(tagged_key)
        if key in ansible.constants.INTERNAL_STATIC_VARS or key in _MAGIC_VARIABLES:
            continue
        if _from_vault(ansible, value):
            secrets.add(key)
        if key not in READ_VARIABLES:
            variables[key] = _as_written(ansible, value)
            continue
        try:
            # What a template made is data (Ansible 2.19 does not trust it), as is an
            # !unsafe value it left alone: either stays text an export never templates.
            variables[key] = _as_written(ansible, templar.template(value))
        except ansible.AnsibleError:
            if isinstance(value, ansible.EncryptedString) or key in secrets:
                why = "the vault password given does not open it" if given else "no vault password was given"
                raise VaultPasswordNeeded(
                    f"{name}: {key} is vault-encrypted and {why}.", details=_VAULT_HELP
                ) from None
            raise
    return FleetHost.from_variables(name, variables, groups, frozenset(secrets))


def _as_written(ansible: Any, value: Any) -> Any:
    """A value as the inventory wrote it: text Ansible would not template (``!unsafe``)
    as UnsafeText, an ``!vault`` value unopened."""
    if isinstance(value, ansible.EncryptedString):
        return VAULT_ENCRYPTED
    if isinstance(value, str):
        text = str.__str__(value)
        return text if ansible.TrustedAsTemplate.is_tagged_on(value) else UnsafeText(text)
    if isinstance(value, dict):
        return {_plain(key): _as_written(ansible, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_written(ansible, item) for item in value]
    return _plain(value)


# What VariableManager adds for a play; ansible-inventory leaves them out the same way.
_MAGIC_VARIABLES = frozenset(
    {"groups", "group_names", "inventory_hostname", "inventory_hostname_short", "inventory_dir"}
    | {"inventory_file", "playbook_dir", "omit", "ansible_version", "ansible_check_mode"}
)


def _from_vault(ansible: Any, value: Any) -> bool:
    """Whether a value was vault-encrypted: an ``!vault`` value, or read from a file that
    is vault-encrypted as a whole (its origin tag names the file)."""
    if ansible.VaultHelper.get_ciphertext(value, with_tags=False) is not None:
        return True
    origin = ansible.Origin.get_tag(value)
    return origin is not None and bool(origin.path) and _encrypted_file(ansible, origin.path)


def _encrypted_file(ansible: Any, path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return bool(ansible.is_encrypted_file(handle))
    except OSError:
        return False


def _plain(value: Any) -> Any:
    """Ansible's tagged values as plain Python (strings, numbers, lists, mappings), so
    nothing of ansible-core travels beyond this module."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    return str(value)


_VAULT_HELP = (
    "Give the vault password as ansible-playbook takes it: --ask-vault-pass, "
    "--vault-password-file FILE, or ANSIBLE_VAULT_PASSWORD_FILE (the Fleet window asks for it)."
)


@contextlib.contextmanager
def _warnings_collected(ansible: Any) -> Iterator[list[str]]:
    """Ansible's warnings while reading, kept for the error message instead of stderr."""
    display = ansible.Display()
    collected: list[str] = []

    def warning(msg: str, *args: Any, **kwargs: Any) -> None:
        collected.append(str(msg))

    def error_as_warning(msg: str | None, exception: BaseException, *args: Any, **kwargs: Any) -> None:
        collected.append(f"{msg or ''} {exception}".strip())

    display.warning, display.error_as_warning = warning, error_as_warning
    try:
        yield collected
    finally:
        del display.warning, display.error_as_warning


def _refusal(ansible: Any, path: Path, exc: Exception, warnings: list[str]) -> InvalidInput:
    text = str(exc).strip()
    details = "\n".join([*warnings, text])
    if "Decryption failed" in text:
        return VaultPasswordNeeded(
            f"{path}: the vault password given does not open its vault-encrypted data.",
            details=f"{_VAULT_HELP}\n{details}",
        )
    if isinstance(exc, ansible.AnsibleVaultError) or "vault secrets" in text:
        return VaultPasswordNeeded(
            f"{path}: holds vault-encrypted data and no vault password was given.",
            details=f"{_VAULT_HELP}\n{details}",
        )
    # Every plugin that tried says why it could not; the one for this kind of file is meant.
    plugin = "'yaml' plugin" if path.suffix.lower() in (".yml", ".yaml", ".json") else "'ini' plugin"
    reason = next((w for w in warnings if plugin in w), warnings[-1] if warnings else text)
    reason = " ".join(reason.split(" plugin. ", 1)[-1].removeprefix("Failed to parse inventory: ").split())
    return InvalidInput(f"{path}: Ansible cannot read this inventory: {reason}", details=details)
