"""How the Fleet window says what happened to a host, in words an admin reads at a glance.

The core's statuses are short codes for scripts (``host-key-unknown``); a table cell
needs a word, and the line under it a sentence that says what to do next.
"""

from __future__ import annotations

from collections.abc import Sequence

from sambatune.fleet.survey import HostStatus, HostSurvey

#: The word in the Status column.
STATUS_WORDS = {
    HostStatus.OK: "surveyed",
    HostStatus.UNREACHABLE: "unreachable",
    HostStatus.AUTH_FAILED: "login refused",
    HostStatus.HOST_KEY_UNKNOWN: "unknown host key",
    HostStatus.HOST_KEY_CHANGED: "host key changed",
    HostStatus.TIMED_OUT: "no answer in time",
    HostStatus.FAILED: "survey failed",
    HostStatus.CANCELLED: "cancelled",
}

#: What to do about it, said after the core's own message.
NEXT_STEP = {
    HostStatus.UNREACHABLE: "Check that the server is on and that sshd listens on that address and port.",
    HostStatus.AUTH_FAILED: "Check ansible_user and ansible_ssh_private_key_file (or the ssh config) "
    "for this host.",
    HostStatus.HOST_KEY_UNKNOWN: "SambaTune never trusts a new key unasked: open it as a server "
    "to compare the fingerprint and trust it, then survey again.",
    HostStatus.HOST_KEY_CHANGED: "Refused: the server was reinstalled, or someone is in between. "
    "Ask whoever runs it before trusting the new key.",
    HostStatus.TIMED_OUT: "The server or the network is slow: survey again with more time per host.",
}


def status_word(result: HostSurvey) -> str:
    return STATUS_WORDS.get(result.status, str(result.status))


def status_sentence(result: HostSurvey) -> str:
    """The whole story of one host, for the Notes column and its tooltip."""
    if result.status is HostStatus.OK:
        if result.advice_error is not None:
            return f"Surveyed, but not judged: {result.advice_error.message}"
        if result.managed_instance is None and len(result.instances) > 1:
            return "Several smbd run here and none is named: set samba_conf for this host."
        return "Surveyed."
    if result.status is HostStatus.CANCELLED:
        return "Cancelled before it finished."
    message = result.error.message if result.error is not None else ""
    step = NEXT_STEP.get(result.status, "")
    return " ".join(part for part in (message, step) if part)


def smbd_text(result: HostSurvey) -> str:
    """How many smbd run, and which one SambaTune manages (its ports)."""
    if not result.reachable or result.survey is None:
        return "-"
    if not result.instances:
        return "not running"
    managed = result.managed_instance
    if managed is None:
        return f"{len(result.instances)} (none chosen)"
    # One port per listening address: say each port once.
    ports = ",".join(dict.fromkeys(str(p) for p in managed.get("ports") or [] if p))
    count = len(result.instances)
    return f"{count}, manages :{ports}" if ports else f"{count}, manages one"


def reach_summary(results: Sequence[HostSurvey]) -> str:
    """'3 of 5 hosts reachable; not: nas03 (unreachable), nas05 (unknown host key)'."""
    reached = [r for r in results if r.reachable]
    text = f"{len(reached)} of {len(results)} host{'' if len(results) == 1 else 's'} reachable"
    missing = [r for r in results if not r.reachable]
    if missing:
        text += "; not: " + ", ".join(f"{r.host.name} ({status_word(r)})" for r in missing)
    return text


def nic_text(result: HostSurvey) -> str:
    speeds = [
        # A NIC whose driver reports no speed (virtio, most VMs) is named alone.
        f"{nic['name']} {nic['speed_mbit']} Mbit/s" if nic.get("speed_mbit") else str(nic["name"])
        for nic in result.nics
        if not nic.get("loopback") and not nic.get("virtual")
    ]
    return ", ".join(speeds) or ("-" if not result.reachable else "loopback only")
