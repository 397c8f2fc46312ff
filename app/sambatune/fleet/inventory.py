"""Fleets from what admins already keep: Ansible inventories, ``~/.ssh/config``, or hosts
typed by hand.

Inventories are read the way Ansible reads them (``ansible/plugins/inventory/ini.py``
and ``yaml.py``, ``ansible/inventory/manager.py``), so a fleet targets the hosts
``ansible-playbook -i INV --limit P`` would, with the same variables:

- INI: ``[group]``, ``[group:children]``, ``[group:vars]``, hosts before any section are
  ungrouped; a host line is split like a shell line (quotes, ``#`` comments) into the
  host and ``key=value`` pairs; every value goes through ``ast.literal_eval`` and stays
  the text it was when that fails (``port=22`` is a number, ``become=yes`` the text
  "yes"); ``host:port`` sets ``ansible_port``; ``web[01:03]`` and ``db-[a:c]`` ranges
  expand. A ``[g:vars]`` of a group no section declares, or a child no section
  declares, is an error, as in Ansible.
- YAML: groups with ``hosts``, ``vars`` and ``children``, nested; top-level groups are
  children of ``all``.
- Variables: ``all`` < parent group < child group (by depth, then
  ``ansible_group_priority``, then name) < host, each replacing the one before
  (Ansible's default ``hash_behaviour = replace``).
- ``--limit``: host or group names, ``*`` globs, ``~regex``, ``a:b`` or ``a,b`` union,
  ``&g`` intersection, ``!x`` exclusion, ``g[0]``/``g[1:3]`` subscripts, ``@file``;
  unions first, then intersections, then exclusions, as Ansible orders them. A term that
  matches nothing is an error naming it (Ansible only warns, and then runs on fewer
  hosts than the admin meant).

Not read: ``group_vars/`` and ``host_vars/`` beside the inventory, and Jinja templates
in values (a value is taken as written).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
import shlex
import string
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
                key: HIDDEN if key in SECRET_VARIABLES else _jsonable(value)
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


# --- Reading inventories -------------------------------------------------------------


@dataclass
class _Group:
    name: str
    hosts: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)


class _Inventory:
    """Groups and hosts as Ansible's InventoryData holds them while a file is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.groups: dict[str, _Group] = {ALL: _Group(ALL), UNGROUPED: _Group(UNGROUPED)}
        self.groups[ALL].children.append(UNGROUPED)
        self.groups[UNGROUPED].parents.append(ALL)
        self.host_vars: dict[str, dict[str, Any]] = {}  # in order of first appearance

    def error(self, line: int | None, message: str) -> InvalidInput:
        where = f"{self.path}:{line}" if line else str(self.path)
        return InvalidInput(f"{where}: {message}", details=f"Reading the Ansible inventory {self.path}.")

    def add_group(self, name: str) -> _Group:
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = _Group(name)
        return group

    def add_host(self, group: str, name: str, variables: Mapping[str, Any]) -> None:
        self.host_vars.setdefault(name, {}).update(variables)
        members = self.add_group(group).hosts
        if name not in members:
            members.append(name)

    def add_child(self, parent: str, child: str, line: int | None) -> None:
        if parent == child or child in self._ancestors(parent):
            raise self.error(line, f"adding group {child!r} as a child of {parent!r} makes a loop of groups.")
        if child not in self.groups[parent].children:
            self.groups[parent].children.append(child)
            self.groups[child].parents.append(parent)

    def _ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self.groups[name].parents)
        while todo:
            parent = todo.pop()
            if parent not in seen:
                seen.add(parent)
                todo.extend(self.groups[parent].parents)
        return seen

    def fleet(self) -> Fleet:
        # Every group that is nobody's child hangs under 'all', as Ansible reconciles it.
        for group in self.groups.values():
            if group.name != ALL and not group.parents:
                self.add_child(ALL, group.name, None)
        depth = self._depths()
        hosts = []
        for name, own_vars in self.host_vars.items():
            direct = [group.name for group in self.groups.values() if name in group.hosts]
            member_of = {ALL}
            for group_name in direct:
                member_of.add(group_name)
                member_of |= self._ancestors(group_name)
            if member_of <= {ALL, UNGROUPED}:
                member_of.add(UNGROUPED)
            ordered = sorted(
                member_of,
                key=lambda g: (depth[g], _group_priority(self.groups[g].variables), g),
            )
            resolved: dict[str, Any] = {}
            for group_name in ordered:
                resolved.update(self.groups[group_name].variables)
            resolved.update(own_vars)
            hosts.append(self._host(name, resolved, tuple(sorted(member_of - {ALL}))))
        return Fleet(tuple(hosts), str(self.path))

    def _depths(self) -> dict[str, int]:
        """A group's depth is its longest path from 'all' (Group.add_child in Ansible)."""
        depth = {name: 0 for name in self.groups}
        changed = True
        while changed:  # loops are refused in add_child, so this settles
            changed = False
            for group in self.groups.values():
                for child in group.children:
                    if depth[child] < depth[group.name] + 1:
                        depth[child] = depth[group.name] + 1
                        changed = True
        return depth

    def _host(self, name: str, variables: dict[str, Any], groups: tuple[str, ...]) -> FleetHost:
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
                raise self.error(None, f"host {name}: ansible_port {port_text!r} is not a number.") from None
            if not 0 < port < 65536:
                raise self.error(None, f"host {name}: ansible_port {port} is not a TCP port.")
        try:
            become = _truth(variables.get("ansible_become", False))
        except ValueError:
            raise self.error(
                None,
                f"host {name}: ansible_become {variables['ansible_become']!r} is neither true nor false.",
            ) from None
        return FleetHost(
            name=name,
            address=text("ansible_host", "ansible_ssh_host") or name,
            port=port,
            user=text("ansible_user", "ansible_ssh_user"),
            identity_file=text("ansible_ssh_private_key_file", "ansible_private_key_file"),
            become=become,
            samba_conf=text("samba_conf"),
            groups=groups,
            variables=variables,
        )


def load_inventory(path: Path) -> Fleet:
    """The fleet an Ansible inventory file describes, INI or YAML (told apart like
    Ansible: a YAML file is a mapping of groups; anything else is read as INI)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"Cannot read the inventory {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: the inventory is not UTF-8 text (byte {exc.start}).") from exc
    inventory = _Inventory(path)
    if path.suffix.lower() in (".ini", ".cfg", ".hosts") or not _read_yaml(inventory, text):
        _read_ini(inventory, text)
    return inventory.fleet()


# INI --------------------------------------------------------------------------------

_SECTION = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$")


def _read_ini(inventory: _Inventory, text: str) -> None:
    group = UNGROUPED
    state = "hosts"
    # Ansible accepts [g:vars] and children only for groups a section declares.
    declared: set[str] = {ALL, UNGROUPED}
    vars_lines: dict[str, int] = {}
    child_lines: dict[str, tuple[int, str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        section = _SECTION.match(line)
        if section:
            group, kind = section.group(1), section.group(2) or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raise inventory.error(number, f"section [{group}:{kind}] has an unknown type {kind!r}.")
            state = kind
            inventory.add_group(group)
            if state == "vars":
                vars_lines.setdefault(group, number)
            else:
                declared.add(group)
            continue
        if line.startswith("[") and line.endswith("]"):
            raise inventory.error(
                number,
                f"invalid section {line}: no spaces or other characters than a group name and ':kind'.",
            )
        if state == "hosts":
            _ini_host_line(inventory, group, line, number)
        elif state == "vars":
            key, equals, value = line.partition("=")
            if not equals or not key.strip():
                raise inventory.error(number, f"expected key=value in [{group}:vars], got {line!r}.")
            inventory.groups[group].variables[key.strip()] = _ini_value(value.strip())
        else:
            child = _shell_words(inventory, line, number)[0]
            inventory.add_group(child)
            child_lines.setdefault(child, (number, group))
            inventory.add_child(group, child, number)
    for name, number in vars_lines.items():
        if name not in declared:
            raise inventory.error(number, f"section [{name}:vars] is for a group no section declares.")
    for name, (number, parent) in child_lines.items():
        if name not in declared:
            raise inventory.error(
                number, f"section [{parent}:children] names {name!r}, a group no section declares."
            )


def _shell_words(inventory: _Inventory, line: str, number: int) -> list[str]:
    try:
        words = shlex.split(line, comments=True)
    except ValueError as exc:
        raise inventory.error(number, f"cannot split {line!r}: {exc}.") from None
    if not words:
        raise inventory.error(number, f"nothing but a comment in {line!r}.")
    return words


def _ini_host_line(inventory: _Inventory, group: str, line: str, number: int) -> None:
    words = _shell_words(inventory, line, number)
    variables: dict[str, Any] = {}
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise inventory.error(number, f"expected key=value after the host name, got {word!r}.")
        variables[key] = _ini_value(value)
    names, port = _expand_host_pattern(inventory, words[0], number)
    if port is not None:
        variables = {"ansible_port": port, **variables}
    for name in names:
        inventory.add_host(group, name, variables)


def _ini_value(text: str) -> Any:
    """Ansible's InventoryModule._parse_value: a Python literal if it is one, else the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


# Host patterns: 'web[01:03].example.com', 'db-[a:c]', with ':port' or '[v6]:port'.
_RANGE = re.compile(r"\[([a-zA-Z0-9]*):([a-zA-Z0-9]*)(?::(\d+))?\]")


def _expand_host_pattern(
    inventory: _Inventory, pattern: str, number: int | None
) -> tuple[list[str], int | None]:
    port: int | None = None
    base = pattern
    bracketed_v6 = re.fullmatch(r"\[([0-9a-fA-F:.]+)\](?::(\d+))?", pattern)
    if bracketed_v6 and bracketed_v6.group(1).count(":") >= 2:
        port_text = bracketed_v6.group(2)
        return [bracketed_v6.group(1)], int(port_text) if port_text else None
    # One colon outside brackets is a port; more is an IPv6 address without one.
    outside = _RANGE.sub("", pattern)
    if outside.count(":") == 1:
        base, _, port_text = pattern.rpartition(":")
        if not port_text.isdigit() or not base:
            raise inventory.error(number, f"{pattern!r}: what follows ':' is not a port number.")
        port = int(port_text)
    return _expand_ranges(inventory, base, number), port


def _expand_ranges(inventory: _Inventory, pattern: str, number: int | None) -> list[str]:
    found = _RANGE.search(pattern)
    if not found:
        if not pattern or any(c.isspace() for c in pattern):
            raise inventory.error(number, f"{pattern!r} is not a host name.")
        return [pattern]
    start, end, stride_text = found.group(1), found.group(2), found.group(3)
    stride = int(stride_text) if stride_text else 1
    head, tail = pattern[: found.start()], pattern[found.end() :]
    if not start or not end or stride < 1:
        raise inventory.error(number, f"{pattern!r}: a range needs a start, an end and a positive step.")
    values: list[str]
    if start.isdigit() and end.isdigit():
        if int(start) > int(end):
            raise inventory.error(number, f"{pattern!r}: the range starts after it ends.")
        width = len(start) if start.startswith("0") else 0
        values = [str(n).zfill(width) for n in range(int(start), int(end) + 1, stride)]
    elif len(start) == 1 and len(end) == 1 and start.isalpha() and end.isalpha():
        letters = string.ascii_letters
        if letters.index(start) > letters.index(end):
            raise inventory.error(number, f"{pattern!r}: the range starts after it ends.")
        values = list(letters[letters.index(start) : letters.index(end) + 1 : stride])
    else:
        raise inventory.error(number, f"{pattern!r}: a range is numbers or single letters.")
    if len(values) > 100_000:
        raise inventory.error(number, f"{pattern!r}: the range names {len(values)} hosts.")
    return [name for value in values for name in _expand_ranges(inventory, head + value + tail, number)]


# YAML -------------------------------------------------------------------------------


def _read_yaml(inventory: _Inventory, text: str) -> bool:
    """Reads ``text`` as a YAML inventory; False when it is no YAML mapping (then it is
    INI, as Ansible's yaml plugin declines and its ini plugin takes over)."""
    import yaml

    try:
        document = yaml.load(text, Loader=_line_loader())
    except yaml.YAMLError:
        return False
    if not isinstance(document, dict):
        return False
    if not document:
        return True  # an empty mapping: no hosts
    for name, group_data in document.items():
        _yaml_group(inventory, str(name), group_data, _key_line(document, name), parent=None)
    return True


def _yaml_group(inventory: _Inventory, name: str, data: Any, line: int | None, *, parent: str | None) -> None:
    inventory.add_group(name)
    if parent is not None:
        inventory.add_child(parent, name, line)
    if data is None:
        return
    if not isinstance(data, dict):
        raise inventory.error(
            line, f"group {name!r} must be a mapping (hosts, vars, children), not {data!r}."
        )
    for key, value in data.items():
        key_line = _key_line(data, key)
        if value is None:
            continue
        if key == "vars":
            if not isinstance(value, dict):
                raise inventory.error(key_line, f"vars of group {name!r} must be a mapping.")
            inventory.groups[name].variables.update(value)
        elif key == "hosts":
            if not isinstance(value, dict):
                raise inventory.error(key_line, f"hosts of group {name!r} must be a mapping of host names.")
            for pattern, host_vars in value.items():
                host_line = _key_line(value, pattern)
                if host_vars is not None and not isinstance(host_vars, dict):
                    raise inventory.error(host_line, f"the variables of host {pattern!r} must be a mapping.")
                names, port = _expand_host_pattern(inventory, str(pattern), host_line)
                variables = dict(host_vars or {})
                if port is not None:
                    variables = {"ansible_port": port, **variables}
                for host in names:
                    inventory.add_host(name, host, variables)
        elif key == "children":
            if not isinstance(value, dict):
                raise inventory.error(key_line, f"children of group {name!r} must be a mapping of groups.")
            for child, child_data in value.items():
                _yaml_group(inventory, str(child), child_data, _key_line(value, child), parent=name)
        # Ansible skips other keys with a warning; so do we, silently.


class _LineDict(dict[Any, Any]):
    """A YAML mapping that remembers the line of each key, for errors that name it."""

    lines: dict[Any, int]


def _key_line(mapping: Mapping[Any, Any], key: Any) -> int | None:
    lines = getattr(mapping, "lines", None)
    return lines.get(key) if lines is not None else None


@functools.cache
def _line_loader() -> type:
    """A SafeLoader whose mappings know their lines (built on first use: PyYAML is
    imported when an inventory is read, not when the CLI starts)."""
    import yaml

    from sambatune.fleet.ansible_yaml import UNSAFE_TAG, construct_unsafe

    class LineLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> _LineDict:
        loader.flatten_mapping(node)
        result = _LineDict()
        result.lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key that is not a name", key_node.start_mark
                ) from None
            result[key] = loader.construct_object(value_node, deep=True)
            result.lines[key] = key_node.start_mark.line + 1
        return result

    def vault(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        # An encrypted value we cannot open: it stays a value nobody here can use.
        return VAULT_ENCRYPTED

    LineLoader.add_constructor("tag:yaml.org,2002:map", mapping)
    # Ansible's "do not template": kept as such, so an export writes it !unsafe again.
    LineLoader.add_constructor(UNSAFE_TAG, construct_unsafe)
    LineLoader.add_constructor("!vault", vault)
    return LineLoader


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


def _truth(value: Any) -> bool:
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


def _group_priority(variables: Mapping[str, Any]) -> int:
    try:
        return int(variables.get("ansible_group_priority", 1))
    except (TypeError, ValueError):
        return 1


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
