"""``fleet export``: one smb.conf change as a self-contained Ansible project (issue 20 item 5).

The change is a list of edits (:mod:`sambatune.fleet.change`) made by the lossless
smb.conf engine in each host's own live file, read over SSH now, so every host gets a
minimal diff of its own bytes. The project holds, per host, the candidate file, the
SHA-256 of the live file it was made from and the diff; an inventory with the chosen
hosts and their variables; ``site.yml`` (``resources/fleet/site.yml``, only
ansible.builtin modules); ``rollout.yml`` with the wave size; and a README.

Decided here, per host, and written as host variables, because the playbook must not
guess on the server: whether a restart-class parameter changes (the activation
classes of :mod:`sambatune.conf.activation`, from testparm's view of the live file and
of the candidate), the systemd unit that runs that smbd (for a restart), and the
absolute paths of testparm and smbcontrol that only root can change.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.appdirs import private_dir
from sambatune.cancellation import CancelToken
from sambatune.conf.activation import Activation, ParameterChange, classify_changes
from sambatune.conf.catalog_build import server_catalog
from sambatune.conf.includes import TransportIncludes
from sambatune.errors import CommandFailed, InvalidInput
from sambatune.fleet.ansible_yaml import as_data, dump
from sambatune.fleet.change import Edit, apply_edits
from sambatune.fleet.inventory import VAULT_ENCRYPTED, FleetHost
from sambatune.fleet.live import Connector, each_host, find_root_tools, read_live
from sambatune.packaged import read_resource
from sambatune.remote.config_backups import DEFAULT_RETENTION
from sambatune.remote.samba_ops import find_instance, messages_of_testparm, run_testparm
from sambatune.remote.transport import Transport
from sambatune.visible_text import one_line

#: What the project's playbook runs on each host, by absolute path.
TOOLS = ("testparm", "smbcontrol")
#: Units a distribution's smbd runs under (the ones :func:`restart_smbd` knows).
SMBD_UNITS = ("smbd.service", "smb.service", "samba.service")
#: Variables that site.yml defines per host; an inventory's own are replaced.
EXPORT_VARIABLES = (
    "samba_conf",
    "samba_live_sha256",
    "samba_candidate_sha256",
    "samba_restart_needed",
    "samba_restart_reason",
    "samba_service",
    "samba_testparm",
    "samba_smbcontrol",
)
# Inventory host names become folder names; Ansible allows more than a file system does.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.:@-]+$")


@dataclass
class HostCandidate:
    """One host's part of the export."""

    host: FleetHost
    path: str
    live: bytes
    candidate: bytes
    changes: list[ParameterChange]
    tools: dict[str, str]
    service: str  # "" when no systemd unit runs this smbd
    warnings: list[str] = field(default_factory=list)
    #: The host key SambaTune verified when it connected ("ssh-ed25519 AAAA..."); "" for
    #: this computer (ansible_connection=local).
    host_key: str = ""

    @property
    def live_sha256(self) -> str:
        return hashlib.sha256(self.live).hexdigest()

    @property
    def candidate_sha256(self) -> str:
        return hashlib.sha256(self.candidate).hexdigest()

    @property
    def restart_changes(self) -> list[ParameterChange]:
        return [c for c in self.changes if c.activation is Activation.RESTART]

    @property
    def unchanged(self) -> bool:
        return self.candidate == self.live

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.live.decode("utf-8", "surrogateescape").splitlines(keepends=True),
                self.candidate.decode("utf-8", "surrogateescape").splitlines(keepends=True),
                f"{self.host.name}:{self.path} (live)",
                f"{self.host.name}:{self.path} (candidate)",
            )
        )

    def to_json(self) -> dict[str, Any]:
        restart = self.restart_changes
        return {
            "host": self.host.name,
            "config_path": self.path,
            "live_sha256": self.live_sha256,
            "candidate_sha256": self.candidate_sha256,
            "unchanged": self.unchanged,
            "needs": "restart" if restart else "reload",
            "changes": [c.to_json() for c in self.changes],
            "service": self.service or None,
            "tools": self.tools,
            "warnings": self.warnings,
        }


@dataclass
class ExportReport:
    out: Path
    edits: list[Edit]
    wave: int
    exported: list[HostCandidate]
    refused: dict[str, str]  # host -> why it is not in the project
    seconds: float
    #: The files this export wrote, relative to ``out`` (nothing else in the folder).
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused and bool(self.exported)

    def to_json(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "edits": [e.to_json() for e in self.edits],
            "wave": self.wave,
            "hosts": [c.to_json() for c in self.exported],
            "refused": [{"host": h, "error": e} for h, e in self.refused.items()],
            "seconds": round(self.seconds, 3),
        }


# -- one host -----------------------------------------------------------------------------


def _candidate_dump(transport: Transport, testparm: str, candidate: bytes, sudo: bool) -> str:
    """testparm -s of the candidate, fed on stdin from / (nothing is written on the host
    at export time); the playbook validates it again in place before installing it."""
    argv = ["sh", "-c", 'cd / && exec "$0" -s --suppress-prompt /dev/stdin', testparm]
    result = transport.run(argv, stdin=candidate, sudo=sudo, timeout=120)
    if not result.ok:
        messages = [m for m in messages_of_testparm(result.error_text) if not m.startswith("Load smb")]
        raise CommandFailed(
            "testparm rejects the candidate: " + "; ".join(messages[-3:] or [f"exit {result.exit_code}"]),
            details="\n".join(messages),
            exit_code=result.exit_code,
        )
    return result.text


def _systemd_unit(transport: Transport, path: str, sudo: bool, cancel: CancelToken | None) -> str:
    """The unit whose main process is the smbd serving ``path`` ("" when none is)."""
    instance = find_instance(transport, path, sudo=sudo, cancel=cancel)
    if instance is None:
        return ""
    for unit in SMBD_UNITS:
        shown = transport.run(["systemctl", "show", "--property=MainPID", "--value", unit], timeout=30)
        if shown.ok and shown.text.strip() == str(instance.pid):
            return unit
    return ""


def prepare_host(
    transport: Transport, host: FleetHost, edits: Sequence[Edit], cancel: CancelToken | None = None
) -> HostCandidate:
    """Read the host's live smb.conf and make its candidate; refuse what testparm refuses."""
    if not _SAFE_NAME.match(host.name):
        raise InvalidInput(f"{host.name!r} cannot name a folder of the export; rename it in the inventory.")
    live = read_live(transport, host, cancel)
    catalog = server_catalog(transport, cancel)
    includes = TransportIncludes(transport, sudo=live.sudo)
    candidate = apply_edits(live.data, live.path, edits, catalog, includes)
    tools = find_root_tools(transport, TOOLS)
    before = run_testparm(transport, live.path, sudo=live.sudo, cancel=cancel)
    warnings = []
    if not before.ok:
        warnings.append("testparm rejects the live file too: " + "; ".join(before.errors[:2]))
    after = _candidate_dump(transport, tools["testparm"], candidate, live.sudo)
    changes = classify_changes(before.dump, after)
    names = {c.name for c in changes}
    for edit in edits:
        # testparm prints its own log level, never the file's: such an edit shows in no dump.
        if edit.name.lower() == "log level" and "log level" not in names and candidate != live.data:
            changes.append(
                ParameterChange(
                    edit.section_key,
                    "log level",
                    None,
                    edit.value,
                    Activation.RELOAD,
                    "every smbd process re-reads it on reload",
                )
            )
    service = ""
    if any(c.activation is Activation.RESTART for c in changes):
        service = _systemd_unit(transport, live.path, live.sudo, cancel)
        if not service:
            warnings.append(
                "this change needs a restart and no systemd unit runs this smbd: the playbook "
                "refuses the host unless samba_service is set"
            )
    return HostCandidate(host, live.path, live.data, candidate, changes, tools, service, warnings)


# -- the project --------------------------------------------------------------------------


def _inventory_variables(host: FleetHost) -> dict[str, Any]:
    # Secrets stay out of files SambaTune writes, opened from a vault or not: Ansible asks
    # for them (--ask-pass, --ask-become-pass) or takes them from the admin's own vault.
    return {
        key: value
        for key, value in host.variables.items()
        if not host.is_secret(key) and value != VAULT_ENCRYPTED and key not in EXPORT_VARIABLES
    }


#: ssh reads the export's known_hosts (the keys SambaTune verified) before the user's:
#: Ansible then trusts the hosts SambaTune trusted, and refuses a key that changed since.
KNOWN_HOSTS = "known_hosts"
VERIFIED_KEYS_ARGS = "-o 'UserKnownHostsFile={{ inventory_dir }}/" + KNOWN_HOSTS + " ~/.ssh/known_hosts'"


def inventory_document(hosts: Sequence[FleetHost], verified: Sequence[str] = ()) -> dict[str, Any]:
    """A YAML inventory of the chosen hosts with their variables (group ones resolved
    into each host) and the groups they belong to. The ``verified`` hosts read the
    export's known_hosts, unless the inventory passes ssh arguments of its own."""
    groups: dict[str, list[str]] = {}
    for host in hosts:
        for group in host.groups:
            groups.setdefault(group, []).append(host.name)
    variables = {host.name: _inventory_variables(host) for host in hosts}
    for name in verified:
        if "ansible_ssh_extra_args" not in variables[name]:
            variables[name]["ansible_ssh_extra_args"] = VERIFIED_KEYS_ARGS
    document: dict[str, Any] = {"hosts": {name: found or None for name, found in variables.items()}}
    if groups:
        document["children"] = {group: {"hosts": dict.fromkeys(names)} for group, names in groups.items()}
    return {"all": document}


def host_variables(candidate: HostCandidate) -> dict[str, Any]:
    """What the playbook knows of one host. Every text in it came from the server (or
    was used as read from the inventory), so Ansible gets it as data, never a template."""
    restart = candidate.restart_changes
    return as_data(
        {
            "samba_conf": candidate.path,
            "samba_live_sha256": candidate.live_sha256,
            "samba_candidate_sha256": candidate.candidate_sha256,
            "samba_restart_needed": bool(restart),
            "samba_restart_reason": "; ".join(f"{c.describe()}: {c.why}" for c in restart),
            "samba_service": candidate.service,
            "samba_testparm": candidate.tools["testparm"],
            "samba_smbcontrol": candidate.tools["smbcontrol"],
        }
    )


def _known_hosts_name(host: FleetHost) -> str | None:
    """The host as ssh looks it up: ``address``, or ``[address]:port`` off port 22; None
    for an address no host name can be (blanks, line breaks: never a line of its own)."""
    if not host.address or any(c.isspace() or not c.isprintable() for c in host.address):
        return None
    port = host.port or 22
    return host.address if port == 22 else f"[{host.address}]:{port}"


def verified_host_key(transport: Transport) -> str:
    """The key the server showed on this connection, which SambaTune checked."""
    paramiko_transport = getattr(transport, "paramiko_transport", None)
    if paramiko_transport is None:
        return ""
    key = paramiko_transport.get_remote_server_key()
    return f"{key.get_name()} {key.get_base64()}"


def _write_private(path: Path, data: bytes) -> None:
    """``data`` into ``path``, readable by this user only (an earlier export's file is
    replaced and tightened; a symbolic link planted in its place is refused)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        if os.name == "posix":
            os.fchmod(handle.fileno(), 0o600)
        handle.write(data)


ANSIBLE_CFG = """\
# Read by ansible-playbook when run from this folder.
[defaults]
inventory = inventory.yml
# A host whose key is unknown is refused, as SambaTune refuses it.
host_key_checking = True
retry_files_enabled = False
interpreter_python = auto_silent

[ssh_connection]
# One SSH round trip per task instead of three (needs no "requiretty" in sudoers).
pipelining = True
"""


def write_project(
    out: Path,
    edits: Sequence[Edit],
    exported: Sequence[HostCandidate],
    refused: dict[str, str],
    *,
    wave: int,
    allow_restart: bool,
) -> list[str]:
    """Write the Ansible project into ``out`` (created; files of an earlier export of
    the same hosts are replaced, nothing else there is touched). Returns the files
    written, relative to ``out``: the folder may hold anything else of the user's.

    The project holds every host's whole smb.conf, so the folder and what it holds are
    the user's alone (0700 and 0600).
    """
    verified = {
        c.host.name: (name, c.host_key)
        for c in exported
        if c.host_key and (name := _known_hosts_name(c.host)) is not None
    }
    written: dict[str, bytes] = {
        "site.yml": read_resource("fleet", "site.yml"),
        "ansible.cfg": ANSIBLE_CFG.encode(),
        "rollout.yml": dump(
            {
                "samba_wave_size": wave,
                "samba_allow_restart": allow_restart,
                "samba_backups_kept": DEFAULT_RETENTION,
                "samba_staged": "{{ samba_conf | dirname }}/.{{ samba_conf | basename }}.sambatune-candidate",
            },
            "How the rollout goes; -e on the command line overrides each of these.",
        ).encode(),
        "inventory.yml": dump(
            inventory_document([c.host for c in exported], list(verified)),
            "The hosts of this export, as the inventory had them.",
        ).encode(),
        KNOWN_HOSTS: "".join(f"{name} {key}\n" for name, key in verified.values()).encode(),
    }
    for candidate in exported:
        name = candidate.host.name
        written[f"host_vars/{name}.yml"] = dump(
            host_variables(candidate),
            "Written by sambatune fleet export; the playbook relies on each value.",
        ).encode()
        written[f"files/{name}/smb.conf"] = candidate.candidate
        written[f"files/{name}/live.sha256"] = _sha256sum_line(candidate.live_sha256, candidate.path)
        written[f"files/{name}/change.diff"] = candidate.diff().encode("utf-8", "surrogateescape")
    summary = {
        "written_by": "sambatune fleet export",
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "edits": [e.to_json() for e in edits],
        "wave": wave,
        "allow_restart": allow_restart,
        "hosts": [c.to_json() for c in exported],
        "refused": [{"host": h, "error": e} for h, e in refused.items()],
    }
    written["sambatune-export.json"] = (json.dumps(summary, indent=2) + "\n").encode()
    written["README.md"] = readme(edits, exported, refused, wave=wave, allow_restart=allow_restart).encode()

    private_dir(out)
    private_dir(out / "host_vars")
    private_dir(out / "files")
    for candidate in exported:
        files = out / "files" / candidate.host.name
        if files.exists():
            shutil.rmtree(files)
        private_dir(files)
    for name, data in written.items():
        _write_private(out / name, data)
    return sorted(written)


def _sha256sum_line(digest: str, path: str) -> bytes:
    """sha256sum's own format, so `sha256sum -c` on the host checks the live file; a
    name with a backslash or a newline is escaped as sha256sum escapes it."""
    if "\\" in path or "\n" in path:
        escaped = path.replace("\\", "\\\\").replace("\n", "\\n")
        return f"\\{digest}  {escaped}\n".encode("utf-8", "surrogateescape")
    return f"{digest}  {path}\n".encode("utf-8", "surrogateescape")


def readme(
    edits: Sequence[Edit],
    exported: Sequence[HostCandidate],
    refused: dict[str, str],
    *,
    wave: int,
    allow_restart: bool,
) -> str:
    change = "\n".join(f"- `{e.describe()}`" for e in edits)
    rows = "\n".join(
        f"| {c.host.name} | `{c.path}` | "
        + ("no change" if c.unchanged else "restart" if c.restart_changes else "reload")
        + f" | `{c.live_sha256[:16]}…` |"
        for c in exported
    )
    left_out = (
        # Why a host was left out may quote its server's text: one line each, as data.
        "\n## Left out\n\n" + "\n".join(f"- **{h}**: {one_line(e)}" for h, e in refused.items()) + "\n"
        if refused
        else ""
    )
    restart_note = (
        "Restarts are allowed in this export (`samba_allow_restart: true`)."
        if allow_restart
        else "Restarts are not allowed: a host whose change needs one is refused before anything "
        "changes; allow them with `-e samba_allow_restart=true`."
    )
    return f"""# smb.conf rollout, written by SambaTune

The change:

{change}

| host | smb.conf | takes effect by | made from (SHA-256) |
|---|---|---|---|
{rows}
{left_out}
## Run it

With Ansible (ansible-core 2.16.1 or newer) on Linux, macOS or WSL, from this folder:

```sh
ansible-playbook site.yml --check --diff   # validate and show what would change, change nothing
ansible-playbook site.yml                  # roll it out ({wave} host(s) per wave)
```

`--check` stages and validates each candidate as a run does (the staged copy is removed
again), so a host whose candidate testparm rejects fails the check too. A second run on
hosts that already have the change reports `changed=0`.

`ansible.cfg` names `inventory.yml`. Add `--ask-pass` / `--ask-become-pass` if the hosts
need passwords: SambaTune never writes them into this folder. `sambatune fleet run DIR`
runs the same playbook through ansible-runner and shows each event as it happens.

- **AWX / Automation Controller**: put this folder in a Git repository (or a manual
  project directory), create a Project from it, an Inventory sourced from
  `inventory.yml` in that project, and a Job Template running `site.yml`. Set
  `samba_wave_size`, `samba_allow_restart` or `samba_backups_kept` as extra variables to override
  `rollout.yml`.
- **Semaphore**: a Repository pointing at this folder, an Inventory of type *File* with
  `inventory.yml`, and a Task Template with playbook `site.yml`.

## What the playbook does, per host

1. Refuses the host when its live smb.conf is not the one this change was made from:
   the SHA-256 of the live file must equal `samba_live_sha256` (or the candidate's,
   when a previous run already applied it). Export again after any other change.
2. Refuses it when the change needs a restart of smbd and restarts are not allowed.
   {restart_note}
3. Copies the candidate beside the live file (`.smb.conf.sambatune-candidate`, mode
   0600) and validates it there with testparm, run from `/` as smbd reads its file, so
   relative includes resolve as they will for smbd.
4. Installs it with `backup: true` (the live file is kept beside it as
   `smb.conf.NNNN.DATE~`), then reloads smbd (`smbcontrol --configfile=... smbd
   reload-config`), or restarts its systemd unit when a restart-class parameter
   changed (decided at export: `samba_restart_needed` in `host_vars/`), and checks that
   smbd answers.
5. If anything fails, the rescue puts the backup back, reloads, and fails the host
   with a message naming the hosts that run the change. With `max_fail_percentage: 0`
   one failed host stops the rollout: no later wave starts, and a host of the same wave
   that is mid-change ends its block first (installed and reloaded, or put back by its
   own rescue).
6. Keeps the newest `samba_backups_kept` (`rollout.yml`) of Ansible's backups of the
   file and removes older ones, as SambaTune's own apply does.

testparm and smbcontrol are named by absolute path (`host_vars/`), each a binary root
owns in a directory only root can write, found on the host at export time.

## Files

- `files/HOST/smb.conf`: the candidate for HOST; `files/HOST/change.diff`: what differs
  from the live file; `files/HOST/live.sha256`: the live file it was made from
  (`sha256sum -c` format).
- `host_vars/HOST.yml`: what the playbook needs to know about HOST.
- `known_hosts`: each host's SSH key as SambaTune checked it when it made the candidate.
  `inventory.yml` points ssh at it (before `~/.ssh/known_hosts`) through
  `ansible_ssh_extra_args`, so Ansible trusts the hosts SambaTune trusted and refuses
  a key that changed since; a host whose inventory sets its own ssh arguments keeps them.
- `sambatune-export.json`: the whole export, with each changed parameter and when smbd
  applies it.
"""


def fleet_export(
    hosts: Sequence[FleetHost],
    edits: Sequence[Edit],
    out: Path,
    *,
    wave: int = 1,
    allow_restart: bool = False,
    connector: Connector | None = None,
    concurrency: int = 8,
    cancel: CancelToken | None = None,
    on_host: Callable[[str, str | None], None] | None = None,
) -> ExportReport:
    """Make every host's candidate in parallel and write the project into ``out``.

    A host that cannot be reached or whose candidate testparm rejects is left out and
    named (``refused``); the project holds the others.
    """
    if not edits:
        raise InvalidInput("Nothing to export: give at least one --set or --unset.")
    if wave < 1:
        raise InvalidInput("--wave must be 1 or more.")
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"{out} exists and is not a folder.")
    started = time.monotonic()
    prepared: dict[str, HostCandidate] = {}
    refused: dict[str, str] = {}

    def work(host: FleetHost, transport: Transport) -> HostCandidate:
        candidate = prepare_host(transport, host, edits, cancel)
        candidate.host_key = verified_host_key(transport)
        return candidate

    for outcome in each_host(hosts, work, connector=connector, concurrency=concurrency, cancel=cancel):
        if outcome.value is not None:
            prepared[outcome.host.name] = outcome.value
        else:
            refused[outcome.host.name] = outcome.error or "failed"
        if on_host is not None:
            on_host(outcome.host.name, outcome.error)
    exported = [prepared[h.name] for h in hosts if h.name in prepared]
    files = (
        write_project(out, edits, exported, refused, wave=wave, allow_restart=allow_restart)
        if exported
        else []
    )
    return ExportReport(out, list(edits), wave, exported, refused, time.monotonic() - started, files)


def project_hosts(out: Path) -> list[str]:
    """The hosts an exported project rolls out to (from its host_vars)."""
    return (
        sorted(path.stem for path in (out / "host_vars").glob("*.yml"))
        if (out / "host_vars").is_dir()
        else []
    )


def is_project(path: Path) -> bool:
    return (
        (path / "site.yml").is_file() and (path / "inventory.yml").is_file() and os.path.isdir(path / "files")
    )
