"""Fleets from what admins already keep: Ansible inventories (read by Ansible's own code,
``fleet.ansible_inventory``), ``~/.ssh/config``, or hosts typed by hand.

A fleet is narrowed the way ``ansible-playbook --limit`` narrows it: host or group
names, ``*`` globs, ``~regex``, ``a:b`` or ``a,b`` union, ``&g`` intersection, ``!x``
exclusion, ``g[0]``/``g[1:3]`` subscripts, ``@file``; unions first, then intersections,
then exclusions, as Ansible orders them. A term that matches nothing is an error naming
it (Ansible only warns, and then runs on fewer hosts than the admin meant).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.errors import InvalidInput
from sambatune.remote.connection import ConnectionOptions

ALL = "all"
UNGROUPED = "ungrouped"
# Variable names that hold secrets: never printed (``fleet hosts --json``) or logged.
SECRET_VARIABLES = frozenset(
    {
        "ansible_password",
        "ansible_ssh_pass",
        "ansible_ssh_password",
        "ansible_become_password",
        "ansible_become_pass",
        "ansible_sudo_pass",
        "ansible_sudo_password",
    }
)
# What SambaTune reads of a host to reach it: a vaulted one no password opens stops the read.
CONNECTION_VARIABLES = SECRET_VARIABLES | {
    "ansible_host",
    "ansible_ssh_host",
    "ansible_port",
    "ansible_ssh_port",
    "ansible_user",
    "ansible_ssh_user",
    "ansible_ssh_private_key_file",
    "ansible_private_key_file",
    "ansible_become",
    "ansible_connection",
    "ansible_ssh_common_args",
    "ansible_ssh_extra_args",
    "ansible_python_interpreter",
    "samba_conf",
}
# Everything SambaTune reads of a host (the rollout's samba_measure_share, the drift's
# samba_overlay): only these are rendered as templates when the inventory is read.
READ_VARIABLES = CONNECTION_VARIABLES | {"samba_measure_share", "samba_overlay"}
HIDDEN = "(hidden)"
VAULT_ENCRYPTED = "(vault-encrypted)"  # an !vault value: nobody here can open it
# ansible.module_utils.parsing.convert_bool: what Ansible takes for true.
_TRUE_WORDS = frozenset({"y", "yes", "on", "1", "true", "t"})
_FALSE_WORDS = frozenset({"n", "no", "off", "0", "false", "f", ""})


@dataclass(frozen=True)
class FleetHost:
    """One server of a fleet, with everything its inventory says about it."""

    name: str  # inventory hostname
    address: str  # ansible_host or name
    port: int | None = None  # ansible_port (SSH)
    user: str | None = None  # ansible_user
    identity_file: str | None = None  # ansible_ssh_private_key_file
    become: bool = False  # ansible_become
    samba_conf: str | None = None  # host var samba_conf: which smb.conf / instance
    groups: tuple[str, ...] = ()  # Ansible's group_names: every group but 'all', sorted
    # All resolved variables (group + host). Compared, not hashed: dicts cannot be.
    variables: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # Names of variables whose values are secret: passwords, anything out of a vault.
    secrets: frozenset[str] = frozenset()

    @classmethod
    def from_variables(
        cls,
        name: str,
        variables: dict[str, Any],
        groups: tuple[str, ...],
        secrets: frozenset[str] = frozenset(),
    ) -> FleetHost:
        """A host as its resolved inventory variables describe it."""

        def text(*keys: str) -> str | None:
            for key in keys:
                value = variables.get(key)
                if value is not None and value != "":
                    return str(value)
            return None

        port_text = text("ansible_port", "ansible_ssh_port")
        port = None
        if port_text is not None:
            try:
                port = int(port_text)
            except ValueError:
                raise InvalidInput(f"host {name}: ansible_port {port_text!r} is not a number.") from None
            if not 0 < port < 65536:
                raise InvalidInput(f"host {name}: ansible_port {port} is not a TCP port.")
        try:
            become = truth(variables.get("ansible_become", False))
        except ValueError:
            raise InvalidInput(
                f"host {name}: ansible_become {variables['ansible_become']!r} is neither true nor false."
            ) from None
        return cls(
            name=name,
            address=text("ansible_host", "ansible_ssh_host") or name,
            port=port,
            user=text("ansible_user", "ansible_ssh_user"),
            identity_file=text("ansible_ssh_private_key_file", "ansible_private_key_file"),
            become=become,
            samba_conf=text("samba_conf"),
            groups=groups,
            variables=variables,
            secrets=secrets | (SECRET_VARIABLES & variables.keys()),
        )

    def is_secret(self, name: str) -> bool:
        return name in self.secrets or name in SECRET_VARIABLES

    def connection_options(
        self, *, known_hosts: Path | None = None, ssh_config: Path | None = None
    ) -> ConnectionOptions:
        """How SambaTune connects to this host: its address, port, user and key, a jump
        host named in ``ansible_ssh_common_args``/``ansible_ssh_extra_args``
        (``-J`` or ``-o ProxyJump=``), and a password the inventory holds in plain text.
        ``ansible_connection=local`` is this computer."""
        connection = str(self.variables.get("ansible_connection", "ssh"))
        if connection == "local":
            return ConnectionOptions(
                host=None, sudo_password=_plain_secret(self.variables, _BECOME_PASSWORDS)
            )
        if connection not in ("ssh", "smart", "paramiko", "paramiko_ssh", "ansible.builtin.ssh"):
            raise InvalidInput(
                f"{self.name}: ansible_connection={connection} is not SSH,"
                " the one way SambaTune reaches servers."
            )
        return ConnectionOptions(
            host=self.address,
            port=self.port,
            user=self.user,
            identity_file=self.identity_file,
            jump_host=_jump_host(self.variables),
            known_hosts=known_hosts,
            ssh_config=ssh_config,
            password=_plain_secret(self.variables, _LOGIN_PASSWORDS),
            sudo_password=_plain_secret(self.variables, _BECOME_PASSWORDS),
            python=_python_interpreter(self.variables),
        )

    @property
    def destination(self) -> str:
        """``user@address:port`` as far as the inventory says, for messages and tables."""
        text = self.address if ":" not in self.address else f"[{self.address}]"
        if self.user:
            text = f"{self.user}@{text}"
        return f"{text}:{self.port}" if self.port else text

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "port": self.port,
            "user": self.user,
            "identity_file": self.identity_file,
            "become": self.become,
            "samba_conf": self.samba_conf,
            "groups": list(self.groups),
            "variables": {
                key: HIDDEN if self.is_secret(key) else _jsonable(value)
                for key, value in self.variables.items()
            },
        }


@dataclass(frozen=True)
class Fleet:
    """The servers to work on, in inventory order."""

    hosts: tuple[FleetHost, ...]
    source: str  # the inventory path or "ssh config" / "by hand"
    # The ssh config the hosts came from (fleet_from_ssh_config): connect through it.
    ssh_config: Path | None = None

    def __len__(self) -> int:
        return len(self.hosts)

    def __iter__(self) -> Iterator[FleetHost]:
        return iter(self.hosts)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(host.name for host in self.hosts)

    def host(self, name: str) -> FleetHost:
        for host in self.hosts:
            if host.name == name:
                return host
        raise InvalidInput(f"No host named {name} in {self.source}.")

    def select(self, limit: str | None) -> Fleet:
        """The hosts Ansible's ``--limit`` would keep (see the module's text); ``None``
        or an empty limit keeps all. A term matching no host is an InvalidInput."""
        if limit is None or not limit.strip():
            return self
        chosen = _evaluate_limit(self, limit)
        return Fleet(tuple(host for host in self.hosts if host.name in chosen), self.source, self.ssh_config)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "hosts": [host.to_json() for host in self.hosts]}


# --- Other sources -------------------------------------------------------------------


def fleet_from_ssh_config(path: Path | None = None) -> Fleet:
    """Every ``Host`` of an ssh config (``~/.ssh/config`` by default, includes followed)
    that names one host: no ``*``, ``?`` or ``!``. Address, port, user and key stay
    the config's to say, as for ``ssh NAME``."""
    from sambatune.remote.sshconfig import default_ssh_config_path, load_ssh_config

    config_path = path if path is not None else default_ssh_config_path()
    config = load_ssh_config(path)
    names = sorted(name for name in config.get_hostnames() if not any(c in name for c in "*?!"))
    hosts = tuple(FleetHost(name=name, address=name, groups=(UNGROUPED,)) for name in names)
    return Fleet(hosts, "ssh config", ssh_config=config_path if path is not None else None)


def fleet_by_hand(entries: Sequence[str]) -> Fleet:
    """Hosts typed as ``[user@]host[:port]`` (``[v6]:port`` for IPv6). A host is named
    by what follows the user; the same name twice is an error."""
    hosts: list[FleetHost] = []
    seen: set[str] = set()
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        user, at, rest = text.rpartition("@")
        if at and not user:
            raise InvalidInput(f"{entry!r}: nothing before '@'.")
        port: int | None = None
        address = rest
        v6 = re.fullmatch(r"\[([^\]]+)\](?::(\d*))?", rest)
        if v6:
            address = v6.group(1)
            port_text = v6.group(2)
            if port_text is not None:
                if not port_text:
                    raise InvalidInput(f"{entry!r}: no port after ':'.")
                port = int(port_text)
        elif rest.count(":") == 1:
            address, _, port_text = rest.partition(":")
            if not port_text.isdigit():
                raise InvalidInput(f"{entry!r}: {port_text!r} is not a port number.")
            port = int(port_text)
        if not address or any(c.isspace() for c in address):
            raise InvalidInput(f"{entry!r} is not [user@]host[:port].")
        if port is not None and not 0 < port < 65536:
            raise InvalidInput(f"{entry!r}: {port} is not a TCP port.")
        name = rest
        if name in seen:
            raise InvalidInput(f"{name} is named twice.")
        seen.add(name)
        variables: dict[str, Any] = {"ansible_host": address}
        if port is not None:
            variables["ansible_port"] = port
        if user:
            variables["ansible_user"] = user
        hosts.append(
            FleetHost(
                name=name,
                address=address,
                port=port,
                user=user or None,
                groups=(UNGROUPED,),
                variables=variables,
            )
        )
    return Fleet(tuple(hosts), "by hand")


# --- --limit -------------------------------------------------------------------------


def split_limit(limit: str) -> list[str]:
    """Ansible's split_host_pattern: ',' separates if present, else ':' outside brackets
    (and whitespace)."""
    limit = limit.strip()
    terms = limit.split(",") if "," in limit else re.findall(r"(?:[^\s:\[\]]|\[[^\]]*\])+", limit)
    return [term.strip() for term in terms if term.strip()]


_SUBSCRIPT = re.compile(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$")


def _evaluate_limit(fleet: Fleet, limit: str) -> set[str]:
    limit = limit.strip()
    if limit.startswith("@"):
        limit = _limit_file(Path(limit[1:]))
    terms = split_limit(limit)
    regular = [t for t in terms if t[0] not in "!&"]
    intersect = [t for t in terms if t[0] == "&"]
    exclude = [t for t in terms if t[0] == "!"]
    chosen: list[str] = []
    for term in [*(regular or [ALL]), *intersect, *exclude]:
        matched = _match_term(fleet, term.lstrip("!&"), term)
        if term[0] == "!":
            chosen = [name for name in chosen if name not in matched]
        elif term[0] == "&":
            chosen = [name for name in chosen if name in matched]
        else:
            chosen.extend(name for name in matched if name not in chosen)
    return set(chosen)


def _limit_file(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read the limit file {path}: {exc}") from exc
    return ",".join(line.strip() for line in lines if line.strip())


def _match_term(fleet: Fleet, pattern: str, term: str) -> list[str]:
    """The host names one term names, in fleet order (Ansible's _match_one_pattern)."""
    names = fleet.names
    if pattern in names:
        return [pattern]
    subscript: tuple[int, int | None] | None = None
    found = _SUBSCRIPT.match(pattern) if not pattern.startswith("~") else None
    if found:
        pattern, index, start, _, end = found.groups()
        subscript = (int(index), None) if index else (int(start), int(end) if end else -1)
    if not pattern:
        raise InvalidInput(f"--limit: {term!r} names no host or group.")
    try:
        matcher = re.compile(pattern[1:] if pattern.startswith("~") else fnmatch.translate(pattern))
    except re.error as exc:
        raise InvalidInput(f"--limit: {term!r} is not a valid pattern: {exc}") from None
    groups = {group for host in fleet.hosts for group in host.groups} | {ALL}
    matching_groups = {group for group in groups if matcher.match(group)}
    matched = [
        host.name for host in fleet.hosts if matching_groups & {*host.groups, ALL}
    ]  # every host is in 'all'
    if not matching_groups or pattern.startswith("~") or any(c in pattern for c in ".?*["):
        matched += [name for name in names if matcher.match(name) and name not in matched]
        matched = [name for name in names if name in matched]
    if subscript is not None:
        first, last = subscript
        try:
            if last is None:
                matched = [matched[first]]
            else:
                matched = matched[first : (len(matched) if last == -1 else last + 1)]
        except IndexError:
            matched = []
    if not matched:
        raise InvalidInput(
            f"--limit: {term!r} matches no host or group of {fleet.source}.",
            details=f"The {len(names)} hosts there: "
            + ", ".join(names[:30])
            + (", ..." if len(names) > 30 else ""),
        )
    return matched


# --- Values --------------------------------------------------------------------------

_LOGIN_PASSWORDS = ("ansible_password", "ansible_ssh_pass", "ansible_ssh_password")
_BECOME_PASSWORDS = (
    "ansible_become_password",
    "ansible_become_pass",
    "ansible_sudo_pass",
    "ansible_sudo_password",
)


def _plain_secret(variables: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """A password the inventory holds as plain text; a vault-encrypted or templated one
    cannot be used here and is left out (key or agent authentication then applies)."""
    for key in keys:
        value = variables.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            text = str(value)
            if text and text != VAULT_ENCRYPTED and "{{" not in text:
                return text
    return None


def _python_interpreter(variables: Mapping[str, Any]) -> str | None:
    """The interpreter ``ansible_python_interpreter`` names; None for Ansible's discovery
    (``auto``, ``auto_silent``, ``auto_legacy``...), which SambaTune leaves to PATH."""
    value = variables.get("ansible_python_interpreter")
    if not isinstance(value, str) or not value.strip() or value.startswith("auto"):
        return None
    try:
        shlex.split(value)
    except ValueError as error:
        raise InvalidInput(f"ansible_python_interpreter={value!r} is not a command ({error}).") from None
    return value.strip()


def _jump_host(variables: Mapping[str, Any]) -> str | None:
    for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        value = variables.get(key)
        if not isinstance(value, str):
            continue
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        for index, word in enumerate(words):
            if word == "-J" and index + 1 < len(words):
                return words[index + 1]
            if word.startswith("-J") and len(word) > 2:
                return word[2:]
            option = word[2:] if word.startswith("-o") and len(word) > 2 else None
            if word == "-o" and index + 1 < len(words):
                option = words[index + 1]
            if option is not None:
                key_part, _, jump = option.replace(" ", "=", 1).partition("=")
                if key_part.lower() == "proxyjump" and jump:
                    return jump
    return None


def truth(value: Any) -> bool:
    """Ansible's boolean(): true, yes, on, 1, ... (any case); false likewise."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    word = str(value).strip().lower()
    if word in _TRUE_WORDS or word in ("1.0",):
        return True
    if word in _FALSE_WORDS or word in ("0.0",):
        return False
    raise ValueError(value)


def _jsonable(value: Any) -> Any:
    """Inventory values as JSON can hold them: literal_eval may give tuples, sets, bytes."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(item) for item in value), key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
