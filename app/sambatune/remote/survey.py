"""The survey: what a server is, from the sysinfo agent, plus what deserves attention."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.errors import Cancelled, SambaTuneError
from sambatune.json_fields import FieldsAsJson
from sambatune.remote.agents import AgentEvent, run_agent
from sambatune.remote.client_audit import ClientAudit, audit_clients
from sambatune.remote.smb_ports import SMB_PORTS, SMB_TRANSPORTS, tcp_ports
from sambatune.remote.transport import Transport

PROBLEM = "problem"
WARNING = "warning"
INFO = "info"


@dataclass(frozen=True)
class SurveyNote(FieldsAsJson):
    severity: str  # problem | warning | info
    subject: str  # "eth0", "smbd", "share bench", ...
    message: str


@dataclass
class Survey:
    target: str
    data: dict[str, Any]
    agent: dict[str, Any] = field(default_factory=dict)
    collected_at: str = ""

    # -- convenient views -----------------------------------------------------
    @property
    def samba(self) -> dict[str, Any]:
        samba: dict[str, Any] = self.data.get("samba") or {}
        return samba

    @property
    def samba_version(self) -> tuple[int, int, int] | None:
        version = self.samba.get("version")
        return (int(version[0]), int(version[1]), int(version[2])) if version else None

    @property
    def config_path(self) -> str | None:
        path = self.samba.get("config_path")
        return str(path) if path else None

    @property
    def nics(self) -> list[dict[str, Any]]:
        nics: list[dict[str, Any]] = self.data.get("nics") or []
        return nics

    @property
    def physical_nics(self) -> list[dict[str, Any]]:
        return [n for n in self.nics if not n.get("loopback") and not n.get("virtual")]

    @property
    def shares(self) -> list[dict[str, Any]]:
        shares: list[dict[str, Any]] = self.samba.get("shares") or []
        return shares

    @property
    def instances(self) -> list[dict[str, Any]]:
        """Every trusted smbd running on the host, one entry per main process."""
        instances: list[dict[str, Any]] = self.samba.get("instances") or []
        return instances

    @property
    def untrusted_processes(self) -> list[dict[str, Any]]:
        """Processes calling themselves smbd that SambaTune does not trust (not run by
        root, or a binary others can write): listed, never run, read or counted."""
        processes: list[dict[str, Any]] = self.samba.get("untrusted_processes") or []
        return processes

    @property
    def managed_instance(self) -> dict[str, Any] | None:
        """The smbd that serves the managed smb.conf; None when none runs for it."""
        for instance in self.instances:
            if instance.get("managed"):
                return instance
        return None

    @property
    def client_audit(self) -> ClientAudit | None:
        """Who is connected to the managed smbd, and how (None when no smbd ran for it)."""
        data = self.data.get("client_audit")
        return ClientAudit.from_json(data) if isinstance(data, dict) else None

    @property
    def ambiguous(self) -> bool:
        """Several smbd run with different files and none was chosen."""
        return self.samba.get("config_source") == "ambiguous"

    @property
    def config_candidates(self) -> list[str]:
        return [str(c) for c in self.samba.get("config_candidates") or []]

    def smb_port(self) -> int | None:
        """The port the managed smbd listens on (445 unless configured otherwise)."""
        instance = self.managed_instance
        if instance is not None:
            ports = [p["port"] for p in instance.get("listening") or []]
            if 445 in ports:
                return 445
            if ports:
                return int(ports[0])
        if self.ambiguous:
            return None
        configured = self.samba.get("globals") or {}
        if SMB_PORTS in configured or SMB_TRANSPORTS in configured:
            ports = tcp_ports(configured)
            return 445 if 445 in ports else (ports[0] if ports else None)
        return 445 if self.samba.get("running") else None

    def link_speed_bits(self, address: str | None = None) -> int | None:
        """Speed of the NIC that holds ``address`` (or the fastest physical one), bits/s."""
        candidates = self.physical_nics
        if address:
            holding = [
                n for n in self.nics if any(a.split("/")[0] == address for a in n.get("addresses") or [])
            ]
            candidates = holding or candidates
        speeds = [n["speed_mbit"] for n in candidates if n.get("speed_mbit")]
        return max(speeds) * 1_000_000 if speeds else None

    # -- what deserves attention ---------------------------------------------
    def notes(self) -> list[SurveyNote]:
        return survey_notes(self.data)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Survey:
        """The survey :meth:`to_json` wrote (its derived notes are computed again)."""
        own = {"target", "collected_at", "agent", "notes"}
        return cls(
            target=str(data.get("target", "")),
            data={k: v for k, v in data.items() if k not in own},
            agent=dict(data.get("agent") or {}),
            collected_at=str(data.get("collected_at", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "collected_at": self.collected_at,
            "agent": self.agent,
            **self.data,
            "notes": [n.to_json() for n in self.notes()],
        }


#: The survey agent reads /proc and /sys and runs testparm (60 s at most per smbd):
#: past this the server is not answering, and the survey says so.
SURVEY_TIMEOUT = 300.0


def run_survey(
    transport: Transport,
    *,
    config_path: str | None = None,
    cancel: CancelToken | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    audit_clients: bool = True,
    also_run: list[list[str]] | None = None,
) -> Survey:
    """The server's facts (one agent run), and who is connected to its managed smbd and
    how unless ``audit_clients`` is False: the audit costs four more round trips (sudo
    check, testparm, smbstatus, ss), which a benchmark's context does not need."""
    params: dict[str, Any] = {"config_path": config_path} if config_path else {}
    if also_run:
        params["also_run"] = also_run
    result = run_agent(transport, "sysinfo", params, cancel=cancel, on_event=on_event, timeout=SURVEY_TIMEOUT)
    survey = Survey(
        target=transport.label,
        data=result.data,
        agent=result.hello,
        collected_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    if audit_clients:
        add_client_audit(transport, survey, cancel)
    return survey


def add_client_audit(
    transport: Transport,
    survey: Survey,
    cancel: CancelToken | None,
    *,
    path: str | None = None,
    globals_: dict[str, str] | None = None,
) -> ClientAudit | None:
    """Who is connected to the managed smbd, and how, put into the survey's data too;
    None when no smbd runs for it. Root (directly or by sudo that needs no password or
    has one) sees every session; without it the audit lists this account's own and says
    so, rather than fail the survey. ``globals_``: the smbd's [global] when a caller has
    read them already (one ``testparm -sv`` less)."""
    path = path or survey.config_path
    if not path or survey.managed_instance is None:
        return None
    blocked = (survey.data.get("samba") or {}).get("blocking_include")
    if isinstance(blocked, dict):
        # smbstatus and testparm load the file too, and would wait on it.
        audit = ClientAudit(
            complete=False,
            notes=[f"Not audited: {path} includes {blocked.get('path')}, which is {blocked.get('kind')}."],
        )
        survey.data["client_audit"] = audit.to_json()
        return audit
    as_root = transport.can_sudo()
    try:
        audit = audit_clients(transport, path, survey.nics, sudo=as_root, cancel=cancel, globals_=globals_)
    except Cancelled:
        raise
    except SambaTuneError as exc:
        # The survey stands without the audit: say why it is missing instead of failing.
        audit = ClientAudit(complete=False, notes=[f"The client audit failed: {exc}"])
    survey.data["client_audit"] = audit.to_json()
    return audit


def untrusted_serving(samba: dict[str, Any]) -> list[dict[str, Any]]:
    """Root's smbd processes serving the managed file from a binary SambaTune does not
    trust (a path another user could write): not "not running", and never used."""
    pids = samba.get("untrusted_serving") or []
    return [p for p in samba.get("untrusted_processes") or [] if isinstance(p, dict) and p.get("pid") in pids]


def survey_notes(data: dict[str, Any]) -> list[SurveyNote]:
    notes: list[SurveyNote] = []
    samba = data.get("samba") or {}
    if not samba.get("installed"):
        notes.append(SurveyNote(PROBLEM, "samba", "Samba is not installed (no smbd found)."))
    elif samba.get("config_source") == "ambiguous":
        notes.append(
            SurveyNote(
                PROBLEM,
                "smbd",
                "Several smbd run with different smb.conf files ("
                + ", ".join(samba.get("config_candidates") or [])
                + "): choose the one SambaTune "
                "manages (Overview, or --remote-path on the command line).",
            )
        )
    elif not samba.get("running") and untrusted_serving(samba):
        for process in untrusted_serving(samba):
            notes.append(
                SurveyNote(
                    PROBLEM,
                    "smbd",
                    f"smbd (pid {process.get('pid')}) serves {samba.get('config_path')} as root, "
                    f"from {process.get('exe') or 'a binary'} that SambaTune does not trust: "
                    f"{process.get('reason')}. Whoever can write there can run code as root. "
                    "SambaTune will not reload, restart or check this smbd: make the path "
                    "root's alone (chown root, chmod go-w) or run the packaged smbd.",
                )
            )
    elif not samba.get("running"):
        others = samba.get("other_instances") or 0
        notes.append(
            SurveyNote(
                PROBLEM,
                "smbd",
                f"smbd is not running for {samba.get('config_path')}: no file "
                "service from it."
                + (f" {others} other smbd instance(s) run with other files." if others else ""),
            )
        )
    if samba.get("installed") and samba.get("config_path") and not samba.get("config_readable"):
        notes.append(
            SurveyNote(
                WARNING,
                "smb.conf",
                f"{samba['config_path']} is not readable by this account; use sudo to edit it.",
            )
        )
    described = {p.get("pid") for p in untrusted_serving(samba)} if not samba.get("running") else set()
    for impostor in samba.get("untrusted_processes") or []:
        if not isinstance(impostor, dict) or impostor.get("pid") in described:
            continue
        # Someone on the server started a program named smbd: the admin wants to know.
        notes.append(
            SurveyNote(
                WARNING,
                "smbd",
                f"A process named smbd (pid {impostor.get('pid')}, user id {impostor.get('uid')}) "
                f"is not a trusted smbd: {impostor.get('reason')}. SambaTune ignores it; "
                "find out who started it.",
            )
        )
    testparm = samba.get("testparm") or {}
    if testparm.get("exit_code"):
        notes.append(
            SurveyNote(
                PROBLEM,
                "smb.conf",
                "testparm rejects the configuration: " + "; ".join(testparm.get("messages", [])[-3:]),
            )
        )
    for message in testparm.get("messages", []):
        if message.startswith("WARNING") or "Unknown parameter" in message:
            notes.append(SurveyNote(WARNING, "smb.conf", message.strip()))

    for nic in data.get("nics") or []:
        if nic.get("loopback") or nic.get("virtual"):
            continue
        name = nic.get("name", "?")
        speed = nic.get("speed_mbit")
        if nic.get("state") == "up" and speed and speed < 1000:
            notes.append(
                SurveyNote(
                    PROBLEM,
                    name,
                    f"{name} links at {speed} Mbit/s: at most ~{speed / 8 * 0.94:.0f} MB/s. "
                    "Check the cable, the switch port and autonegotiation.",
                )
            )
        if nic.get("state") == "up" and nic.get("duplex") == "half":
            notes.append(
                SurveyNote(
                    PROBLEM,
                    name,
                    f"{name} runs at half duplex: collisions cost "
                    "throughput. A duplex mismatch with the switch is likely.",
                )
            )
    mtus = {
        n.get("mtu")
        for n in data.get("nics") or []
        if not n.get("loopback") and not n.get("virtual") and n.get("state") == "up"
    }
    if len(mtus) > 1:
        notes.append(
            SurveyNote(
                INFO,
                "network",
                "The active NICs use different MTUs: "
                + ", ".join(str(m) for m in sorted(m for m in mtus if m)),
            )
        )

    for share in samba.get("shares") or []:
        fs = share.get("filesystem")
        if not fs:
            continue
        label = f"share {share.get('name')}"
        if not fs.get("exists"):
            notes.append(SurveyNote(PROBLEM, label, f"The path {share.get('path')} does not exist."))
            continue
        total, free = fs.get("total_bytes") or 0, fs.get("free_bytes") or 0
        if total and free / total < 0.10:
            notes.append(
                SurveyNote(WARNING, label, f"Only {free / total:.0%} free on {fs.get('mount_point')}.")
            )

    cpu = data.get("cpu") or {}
    load = data.get("load") or {}
    if load and cpu.get("available") and load.get("1min", 0) > cpu["available"]:
        notes.append(
            SurveyNote(
                WARNING,
                "load",
                f"Load {load['1min']:.1f} exceeds {cpu['available']} CPUs: "
                "the server is busy, so measurements will be noisy.",
            )
        )
    tcp = data.get("tcp") or {}
    if tcp.get("net.ipv4.tcp_window_scaling") == "0":
        notes.append(
            SurveyNote(
                PROBLEM,
                "tcp",
                "TCP window scaling is off: windows stay under 64 KiB, "
                "which caps throughput on any link with latency.",
            )
        )
    return notes
