"""Samba operations on a target: testparm, reload or restart smbd, and a health check."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import AgentFailed, CommandFailed, CommandTimedOut
from sambatune.json_fields import FieldsAsJson
from sambatune.remote.transport import CommandResult, Transport

# smbd binds its sockets once, at start; a reload never re-binds them. "socket options"
# is set on the listening sockets too, and every accepted connection inherits their
# buffer sizes: after a reload that removes SO_RCVBUF=8192, a 4 MiB get still took 1.8 s
# on the test bed, after a restart 0.06 s.
_ERROR_MARKERS = (
    "error loading services",
    "invalid",
    "not boolean",
    "value is not boolean",
    "ignoring invalid value",
    "error:",
    "is not a valid",
    "unable to",
    "does not exist",
)


@dataclass
class TestparmReport:
    path: str
    exit_code: int
    errors: list[str]
    warnings: list[str]
    dump: str  # testparm -s output: canonical names, normalised values (-v: defaults too)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exit_code": self.exit_code,
            "ok": self.ok,
            "errors": self.errors,
            "warnings": self.warnings,
        }


def run_testparm(
    transport: Transport,
    path: str,
    *,
    sudo: bool = False,
    verbose: bool = False,
    cancel: CancelToken | None = None,
) -> TestparmReport:
    """``testparm -s`` on ``path``; with ``verbose`` (``-v``) the dump has every default too."""
    argv = ["testparm", "-s", *(["-v"] if verbose else []), "--suppress-prompt", path]
    result = transport.run(argv, sudo=sudo, timeout=120, cancel=cancel)
    if result.exit_code == 127:
        raise CommandFailed(
            f"testparm is not installed on {transport.label}: SambaTune will not install a "
            "configuration it cannot validate.",
            exit_code=127,
        )
    errors: list[str] = []
    warnings: list[str] = []
    failed = result.exit_code != 0
    for text in messages_of_testparm(result.error_text):
        lower = text.lower()
        if not text or text.startswith(("Load smb config", "Loaded services", "Server role")):
            continue
        if "weak crypto is allowed" in lower:
            continue
        if failed and any(marker in lower for marker in _ERROR_MARKERS):
            errors.append(text)
        elif "warning" in lower or "unknown parameter" in lower or "ignoring unknown" in lower:
            warnings.append(text)
        elif failed:
            errors.append(text)
    # The specific reason first, testparm's generic last words at the end.
    errors.sort(key=lambda e: e.lower().startswith("error loading services"))
    if failed and not errors:
        errors.append(f"testparm exited with status {result.exit_code}")
    return TestparmReport(path, result.exit_code, errors, warnings, result.text)


# How a new testparm message starts; any other line carries on the one before it.
_MESSAGE_START = re.compile(
    r"^(WARNING|ERROR|NOTE|Unknown|Ignoring|Invalid|Load smb|Loaded|"
    r"Server role|Weak crypto|Error|rlimit|[A-Za-z_]+(\([^)]*\))?: )"
)


def messages_of_testparm(stderr: str) -> list[str]:
    """testparm's stderr as whole messages: a warning over two or three lines (the
    "(by default Samba will discover ...)" that follows one) is one message, not a
    first line cut mid-sentence."""
    messages: list[str] = []
    previous_blank = True
    for line in stderr.splitlines():
        text = line.strip()
        if not text:
            previous_blank = True
            continue
        if (
            messages
            and not previous_blank
            and not _MESSAGE_START.match(text)
            and messages[-1].startswith(("WARNING", "ERROR", "NOTE"))
        ):
            messages[-1] += " " + text
        else:
            messages.append(text)
        previous_blank = False
    return messages


@dataclass
class SmbdInstance:
    """A running smbd the agent verified: owned by root, running root's own binary."""

    pid: int
    config: str
    ports: list[int]
    addresses: list[str]
    exe: str = ""  # empty when it could not be verified (the agent was not root)
    argv: list[str] = field(default_factory=list)


@dataclass
class SmbdProcesses:
    """What the agent saw: trusted instances, the impostors, and a binary to start."""

    instances: list[dict[str, Any]]
    untrusted: list[dict[str, Any]]
    trusted_binary: str | None


#: How long the agent that lists smbd processes may take: it reads /proc and runs
#: testparm once per smbd (30 s at most each), on a busy server a few seconds in all.
SMBD_PROCESSES_TIMEOUT = 60.0


def smbd_processes(
    transport: Transport,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    timeout: float = SMBD_PROCESSES_TIMEOUT,
) -> SmbdProcesses:
    from sambatune.remote.agents import run_agent

    result = run_agent(transport, "sysinfo", {"only": "smbd"}, sudo=sudo, cancel=cancel, timeout=timeout)
    samba = result.data.get("samba")
    samba = samba if isinstance(samba, dict) else {}

    def dicts(value: Any) -> list[dict[str, Any]]:
        return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []

    binary = samba.get("trusted_binary")
    return SmbdProcesses(
        instances=dicts(samba.get("instances")),
        untrusted=dicts(samba.get("untrusted_processes")),
        trusted_binary=binary if isinstance(binary, str) and binary else None,
    )


def find_instance(
    transport: Transport,
    config_path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    seen: SmbdProcesses | None = None,
    timeout: float = SMBD_PROCESSES_TIMEOUT,
) -> SmbdInstance | None:
    """The trusted running smbd that serves ``config_path`` (its parent process), if any.

    With ``sudo`` the agent runs as root, which is what lets it see root's sockets and
    check which binary each smbd runs; without root no smbd can be verified.
    """
    processes = seen or smbd_processes(transport, sudo=sudo, cancel=cancel, timeout=timeout)
    instances = processes.instances
    # An smbd started without -s serves the built-in default config file.
    default = default_config_path(transport) if any(not i.get("config") for i in instances) else None
    for instance in instances:
        if (instance.get("config") or default) == config_path:
            try:
                listening = [p for p in instance.get("listening") or [] if isinstance(p, dict)]
                return SmbdInstance(
                    pid=_whole_number(instance["pid"]),
                    config=config_path,
                    ports=sorted({_whole_number(p["port"]) for p in listening}),
                    addresses=sorted({str(p["address"]) for p in listening}),
                    exe=str(instance.get("exe") or "") if instance.get("verified") is True else "",
                    argv=[str(a) for a in instance.get("argv") or []],
                )
            except (KeyError, TypeError, ValueError) as error:
                raise AgentFailed(
                    f"SambaTune cannot read the list of smbd processes on {transport.label}.",
                    details=repr(error),
                ) from error
    return None


def _whole_number(value: Any) -> int:
    """A pid or a port from an agent's answer: an int, nothing else (not a bool, not text)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise ValueError(f"not a whole number: {str(value)[:40]!r}")
    return value


def default_config_path(transport: Transport) -> str | None:
    result = transport.run(["smbd", "-b"], timeout=30)
    if result.exit_code == 127:
        result = transport.run(["/usr/sbin/smbd", "-b"], timeout=30)
    match = re.search(r"CONFIGFILE:\s*(\S+)", result.text)
    return match.group(1) if match else None


def reload_smbd(
    transport: Transport,
    config_path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
) -> str:
    """Ask the smbd serving ``config_path`` to re-read it. Returns the command run."""
    argv = ["smbcontrol"]
    default = default_config_path(transport)
    if config_path != default:
        argv.append(f"--configfile={config_path}")
    argv += ["smbd", "reload-config"]
    result = transport.run(argv, sudo=sudo, timeout=60, cancel=cancel)
    output = (result.text + result.error_text).strip()
    if not result.ok or "can't find pid" in output.lower() or "failed" in output.lower():
        raise CommandFailed(
            f"smbd did not take the reload: {output or f'exit status {result.exit_code}'}",
            details=f"command: {' '.join(argv)}",
            exit_code=result.exit_code,
        )
    return " ".join(argv)


def restart_smbd(
    transport: Transport,
    config_path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
) -> str:
    """Restart the smbd that serves ``config_path``. Returns how it was done.

    Through systemd when a unit runs that smbd; otherwise the verified smbd is stopped
    and its verified binary started again as a daemon with this config. Nothing read
    from a process (its command line, a binary a user could have planted) is ever run:
    a process called smbd that is not root's own is not smbd (see the sysinfo agent).
    """
    seen = smbd_processes(transport, sudo=sudo, cancel=cancel)
    instance = find_instance(transport, config_path, sudo=sudo, cancel=cancel, seen=seen)
    if instance is not None:
        for unit in ("smbd.service", "smb.service", "samba.service"):
            shown = transport.run(["systemctl", "show", "--property=MainPID", "--value", unit], timeout=30)
            if shown.ok and shown.text.strip() == str(instance.pid):
                transport.run(["systemctl", "restart", unit], sudo=sudo, timeout=120).check(
                    f"systemctl restart {unit}"
                )
                return f"systemctl restart {unit}"
        if not instance.exe:
            raise CommandFailed(
                "smbd was not restarted: without root rights SambaTune cannot verify which "
                "binary the running smbd is, and it restarts only a verified one.",
                details=f"smbd pid {instance.pid}; use sudo (or connect as root).",
            )
        binary = instance.exe
        transport.run(["kill", "-TERM", str(instance.pid)], sudo=sudo, timeout=30)
        _wait_gone(transport, instance.pid)
    else:
        binary = seen.trusted_binary or ""
    if not binary:
        raise CommandFailed(
            "smbd could not be started: no smbd binary that only root can change was found "
            "(checking that needs root rights).",
            details="SambaTune starts only an smbd binary that root owns and only root can "
            "write to, never one named by a running process.",
        )
    argv = [binary, "-D", f"--configfile={config_path}"]
    transport.run(argv, sudo=sudo, timeout=60).check("Starting smbd")
    return "stopped smbd and started it again: " + " ".join(argv)


# Exit 0 while the process lives; a zombie (waiting for its parent to reap it) has
# released its sockets and counts as gone.
_ALIVE_SCRIPT = (
    'state=$(sed -n "s/.*) \\(.\\).*/\\1/p" "/proc/$1/stat" 2>/dev/null); '
    '[ -n "$state" ] && [ "$state" != Z ]'
)


def _wait_gone(transport: Transport, pid: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not transport.run(["sh", "-c", _ALIVE_SCRIPT, "alive", str(pid)], timeout=10).ok:
            return
        time.sleep(0.1)


@dataclass
class HealthReport(FieldsAsJson):
    ok: bool
    smbd_running: bool
    ports: list[int] = field(default_factory=list)
    shares_listed: list[str] | None = None
    message: str = ""


#: The whole health check, every attempt together.
HEALTH_CHECK_BUDGET = 120.0


def health_check(
    transport: Transport,
    config_path: str,
    *,
    expected_shares: list[str] | None = None,
    attempts: int = 10,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    budget: float = HEALTH_CHECK_BUDGET,
) -> HealthReport:
    """smbd alive for this config, listening, and (where anonymous listing works) listing
    the shares the config defines. All attempts together take at most ``budget``
    seconds: a server whose tools stop answering fails the check, it never hangs it."""
    last = HealthReport(False, False, message="smbd for this configuration is not running")
    missing_seen = 0
    deadline = time.monotonic() + budget

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left < 1:
            raise CommandTimedOut(f"The health check found no answer within {budget:g} s.")
        return left

    for attempt in range(attempts):
        if attempt:
            (cancel.wait(0.5) if cancel else time.sleep(0.5))
        instance = find_instance(
            transport, config_path, sudo=sudo, cancel=cancel, timeout=min(SMBD_PROCESSES_TIMEOUT, remaining())
        )
        if instance is None:
            continue
        if not instance.ports:
            last = HealthReport(False, True, message="smbd runs but listens on no TCP port")
            continue
        port = _port(instance)
        listed = _share_listing(transport, instance, min(60, remaining()))
        text = listed.text + listed.error_text
        if listed.ok:
            shares = _disk_shares(listed.text)
            missing = [s for s in (expected_shares or []) if s.lower() not in {n.lower() for n in shares}]
            if missing:
                last = HealthReport(
                    False,
                    True,
                    instance.ports,
                    shares,
                    "smbd answers but does not list: " + ", ".join(missing),
                )
                # A reload reaches smbd a moment after smbcontrol returns: look twice
                # more, not ten times, when smbd itself is clearly up.
                missing_seen += 1
                if missing_seen >= 3:
                    return last
                continue
            return HealthReport(
                True,
                True,
                instance.ports,
                shares,
                f"smbd answers on port {port} and lists {len(shares)} shares",
            )
        if "NT_STATUS_ACCESS_DENIED" in text or "NT_STATUS_LOGON_FAILURE" in text:
            # Anonymous listing is off: smbd answered, which is what we can prove.
            return HealthReport(
                True,
                True,
                instance.ports,
                None,
                f"smbd answers on port {port} (anonymous share listing is off)",
            )
        last = HealthReport(
            False, True, instance.ports, None, f"smbd does not answer on port {port}: {text.strip()[-200:]}"
        )
    return last


def _port(instance: SmbdInstance) -> int:
    return 445 if 445 in instance.ports else instance.ports[0]


def _share_listing(transport: Transport, instance: SmbdInstance, timeout: float) -> CommandResult:
    address = serving_address(instance.addresses)
    return transport.run(
        ["smbclient", "-N", "-g", "-p", str(_port(instance)), "-L", f"//{address}"], timeout=timeout
    )


def _disk_shares(listing: str) -> list[str]:
    return [
        line.split("|")[1] for line in listing.splitlines() if line.startswith("Disk|") and "|" in line[5:]
    ]


def served_shares(transport: Transport, instance: SmbdInstance, *, timeout: float = 60) -> list[str] | None:
    """The file shares smbd lists to an anonymous client now; None when it lists none to
    anonymous clients (or does not answer): then no one can tell from here."""
    if not instance.ports:
        return None
    listed = _share_listing(transport, instance, timeout)
    return _disk_shares(listed.text) if listed.ok else None


def serving_address(addresses: list[str]) -> str:
    """Where a client on the server itself reaches an smbd listening on ``addresses``:
    loopback when it listens on every address, else one of its own (with ``bind
    interfaces only`` it may not listen on loopback at all)."""
    for address in addresses:
        if address in ("0.0.0.0", "::"):
            return "127.0.0.1"
    for address in addresses:
        if ":" not in address:
            return address
    return f"[{addresses[0]}]" if addresses else "127.0.0.1"
