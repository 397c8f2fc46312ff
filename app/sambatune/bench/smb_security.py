"""What a test session negotiated, as the server sees it: the security comparison's evidence.

``bench smb-client --security plain,signed,encrypted`` measures one session of each
kind. What each one really got (dialect, signing algorithm, cipher) is read from the
server's own session list (``smbstatus``, :mod:`sambatune.remote.smb_sessions`), found by
the client's TCP port, because a client only knows what it asked for: a server that
requires signing signs a "plain" session anyway, and the cipher is the server's choice.
Without a way to run smbstatus on the server, the client's side is reported, and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sambatune.bench.significance import welch_t_test
from sambatune.bench.smb_wire import ENCRYPTED, PLAIN, SIGNED
from sambatune.cancellation import CancelToken
from sambatune.remote.smb_sessions import SmbSession, connected_clients
from sambatune.remote.transport import Transport
from sambatune.units import format_percent, format_rate

#: Reads the server's current sessions (blocking; one SSH round trip).
ServerSessions = Callable[[CancelToken], list[SmbSession]]
#: Below this p-value a difference between two modes counts as real.
SIGNIFICANT = 0.05


def server_sessions(transport: Transport, config_path: str, *, sudo: bool | None = None) -> ServerSessions:
    """The sessions of the smbd serving ``config_path`` (all of them as root, else the
    transport account's own, which rarely includes the test's SMB user). ``sudo`` None:
    as root when root is reachable, decided at the first read (on the caller's worker)."""
    as_root = sudo

    def read(cancel: CancelToken) -> list[SmbSession]:
        nonlocal as_root
        if as_root is None:
            as_root = transport.can_sudo()
        return connected_clients(transport, config_path, sudo=as_root, cancel=cancel).sessions

    return read


def session_on_port(sessions: Sequence[SmbSession], port: int | None) -> SmbSession | None:
    """The session whose client end is ``port`` (smbstatus: ``ipv4:ADDR:PORT``)."""
    if port is None:
        return None
    matches = [s for s in sessions if s.address.rsplit(":", 1)[-1] == str(port)]
    return matches[0] if len(matches) == 1 else None


def describe(mode: str, facts: dict[str, Any], server: SmbSession | None, why_not: str) -> str:
    """One sentence naming what the ``mode`` session negotiated, and who says so."""
    if server is not None:
        signing = (
            f"signed with {server.signing} ({server.signing_degree or 'degree not reported'})"
            if server.signing and server.signing_degree != "partial"
            else "not signed" + (" (only its logon was)" if server.signing_degree == "partial" else "")
        )
        encryption = (
            f"encrypted with {server.encryption} ({server.encryption_degree or 'degree not reported'})"
            if server.encryption
            else "not encrypted"
        )
        return (
            f"{mode.capitalize()} session: {server.dialect or 'dialect not reported'}, {signing}, "
            f"{encryption}; as the server's smbstatus reports it."
        )
    signing = f"signed with {facts['signing_algorithm']}" if facts.get("signing") else "not signed"
    encryption = f"encrypted with {facts['cipher']}" if facts.get("encryption") else "not encrypted"
    return (
        f"{mode.capitalize()} session: SMB {facts.get('dialect')}, {signing}, {encryption}; as this "
        f"computer negotiated it ({why_not})."
    )


def mismatch(mode: str, server: SmbSession | None) -> str | None:
    """Say when the server gave a session other than the one asked for."""
    if server is None:
        return None
    signed = bool(server.signing) and server.signing_degree != "partial"
    if mode == PLAIN and (signed or server.encryption):
        return (
            "The server protected the plain session anyway ("
            + ("encrypted" if server.encryption else "signed")
            + "): it requires that of every client, so plain and "
            + ("encrypted" if server.encryption else "signed")
            + " measure the same thing here."
        )
    if mode == SIGNED and server.encryption:
        return "The server encrypted the signed session: it requires encryption on this share."
    if mode == ENCRYPTED and not server.encryption:
        return "The server did not encrypt the encrypted session: its figures are not of encryption."
    return None


def cost_notes(series_by_mode: dict[str, list[float]], operation: str, baseline: str) -> list[dict[str, Any]]:
    """Each mode's rate against ``baseline``'s (the first mode asked for), with Welch's test."""
    base = series_by_mode.get(baseline) or []
    rows = []
    for mode, values in series_by_mode.items():
        if mode == baseline or len(values) < 2 or len(base) < 2:
            continue
        test = welch_t_test(base, values)
        base_mean = sum(base) / len(base)
        mean = sum(values) / len(values)
        change = (mean - base_mean) / base_mean if base_mean else 0.0
        significant = test.p_value < SIGNIFICANT
        if significant:
            verdict = (
                f"{format_percent(abs(change), 0)} {'slower' if change < 0 else 'faster'} than "
                f"{baseline} (p = {test.p_value:.3f})"
            )
        else:
            verdict = f"no significant difference from {baseline} (p = {test.p_value:.2f})"
        rows.append(
            {
                "operation": operation,
                "mode": mode,
                "baseline": baseline,
                "mean_bytes_per_s": mean,
                "baseline_mean_bytes_per_s": base_mean,
                "change": change,
                "p_value": test.p_value,
                "significant": significant,
                "text": f"{mode.capitalize()} {operation}s: {format_rate(mean)} against "
                f"{format_rate(base_mean)} {baseline}, {verdict}.",
            }
        )
    return rows
