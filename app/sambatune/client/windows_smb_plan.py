"""Windows' SMB client beyond the LanmanWorkstation sizes of windows_plan.py: multichannel,
the metadata cache lifetimes, and what the client demands of signing, encryption and guests.

What may change, and only towards Windows' own defaults:

- EnableMultiChannel off is turned on when the server offers multichannel; never off.
- ConnectionCountPerRssNetworkInterface below its default 4 is taken out (back to 4) when
  the server offers multichannel; never lowered.
- A cache lifetime below its default is taken out on a path where every round trip is
  expensive, saying it may have been shortened on purpose; never raised above the default.

Signing, encryption and guest logons are reported, never changed: they are security
decisions. Where the client requires signing and the server refuses it, the plan warns
that the fix belongs on the server.
"""

from __future__ import annotations

from sambatune.client.plan import MeasureLink, PlanAction, PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.regvalue import REG_DWORD, RegValue
from sambatune.client.settings import Observed, RegistryValueRef, SmbClientConfigRef, ValueState
from sambatune.client.window import format_rtt

LANMAN = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"
#: From this RTT on, metadata round trips cost enough for the SMB client's caches to pay.
HIGH_LATENCY_SECONDS = 0.005
#: ConnectionCountPerRssNetworkInterface when absent (file server tuning guide).
DEFAULT_CONNECTIONS_PER_RSS_INTERFACE = 4
#: Cache lifetimes in seconds when absent (file server tuning guide; TechNet ff686200).
CACHE_LIFETIMES = {
    "DirectoryCacheLifetime": (10, "listing"),
    "FileInfoCacheLifetime": (10, "question about a file's size, times or attributes"),
    "FileNotFoundCacheLifetime": (5, "look-up of a name that does not exist"),
}
#: Windows 11 24H2 and Windows Server 2025: outbound signing required by default.
SIGNING_BY_DEFAULT_BUILD = 26100
#: Samba's words for 'server signing' that make the server refuse to sign.
SERVER_REFUSES_SIGNING = ("disabled", "off", "no", "false", "0")


def registry_dword(observed: Observed) -> int | None:
    value = observed.value
    if observed.state == ValueState.PRESENT and isinstance(value, RegValue) and value.type == REG_DWORD:
        assert isinstance(value.data, int)
        return value.data
    return None


def share_path(ctx: PlanContext) -> str:
    """Where the measurement runs: the server's share as a UNC path (the share name is the
    user's to fill in; SambaTune knows the server at most)."""
    server = ctx.measurements.server
    return f"\\\\{server}\\SHARE" if server else "\\\\SERVER\\SHARE"


def _not_read(ctx: PlanContext, current: Observed) -> str:
    if not ctx.os.detected:
        return "Not read: this plan is for another machine."
    return f"Could not be read ({current.detail or 'no reason given'})."


def plan_smb_client_extras(ctx: PlanContext) -> list[PlannedChange]:
    """Multichannel, cache lifetimes and the security report, for Vista and later."""
    bulk = MeasureLink(
        "smb-client",
        share_path(ctx),
        "large-file write and read through the mapped share: multichannel, signing and the "
        "adapter's offloads show here",
    )
    small = MeasureLink(
        "files",
        share_path(ctx),
        "many small files and listings through the mapped share: the metadata caches show here",
    )
    items = _multichannel(ctx, bulk)
    items += _cache_lifetimes(ctx, small)
    items += _security_report(ctx, bulk)
    return items


def _multichannel(ctx: PlanContext, bulk: MeasureLink) -> list[PlannedChange]:
    if ctx.os.generation != "win8plus":
        return [
            ctx.label(
                "smb-client-enablemultichannel",
                None,
                "SMB multichannel came with SMB 3.0 (Windows 8 / Server 2012); this Windows has "
                "no such client.",
            ),
            ctx.label(
                "lanman-connectioncountperrssnetworkinterface",
                None,
                "A multichannel setting; this Windows's SMB client has no multichannel.",
            ),
        ]
    server = ctx.measurements.server_multichannel
    server_text = {
        True: "The server offers multichannel",
        False: "The server does not offer multichannel ('server multi channel support' is off)",
        None: "Whether the server offers multichannel is not known (survey it, or plan with "
        "--server-multichannel yes/no)",
    }[server]
    items: list[PlannedChange] = []

    ref = SmbClientConfigRef("EnableMultiChannel")
    current = ctx.read(ref)
    if not current.known or current.state == ValueState.ABSENT:
        reason = (
            _not_read(ctx, current) + " On by default since Windows 8; on that machine, "
            "'Get-SmbClientConfiguration | Select-Object EnableMultiChannel' shows it."
        )
        items.append(
            ctx.item("smb-client-enablemultichannel", ref, current, "none", None, reason, measure=bulk)
        )
    elif current.value == "true":
        items.append(
            ctx.item(
                "smb-client-enablemultichannel",
                ref,
                current,
                "keep",
                None,
                f"On (the default). {server_text}.",
                measure=bulk,
            )
        )
    elif server:
        items.append(
            ctx.item(
                "smb-client-enablemultichannel",
                ref,
                current,
                "set",
                "true",
                "Off, and the server offers multichannel: turned on, the client opens several "
                "connections in one session (over each adapter with RSS, and over several "
                "adapters) and spreads reads and writes over them, which lifts the "
                "one-connection, one-core limit. It is on by default; someone turned it off, "
                "often while chasing a network problem: if that problem is still there, keep it "
                "off. The restore sets False back.",
                alternative="PowerShell: Set-SmbClientConfiguration -EnableMultiChannel $true -Force",
                measure=bulk,
            )
        )
    else:
        items.append(
            ctx.item(
                "smb-client-enablemultichannel",
                ref,
                current,
                "keep",
                None,
                f"Off. {server_text}, so turning it on would change nothing with this server; left as it is."
                if server is False
                else f"Off. {server_text}; SambaTune turns it on only for a server that offers it.",
                measure=bulk,
            )
        )

    ref_count = RegistryValueRef(LANMAN, "ConnectionCountPerRssNetworkInterface", REG_DWORD)
    current = ctx.read(ref_count)
    have = registry_dword(current)
    default = DEFAULT_CONNECTIONS_PER_RSS_INTERFACE
    catalog_id = "lanman-connectioncountperrssnetworkinterface"
    if not current.known:
        items.append(
            ctx.item(
                catalog_id,
                ref_count,
                current,
                "none",
                None,
                _not_read(ctx, current) + f" Absent means {default} connections per adapter with "
                "RSS; SambaTune only takes out a smaller value, never lowers it.",
                measure=bulk,
            )
        )
    elif have is None:
        items.append(
            ctx.item(
                catalog_id,
                ref_count,
                current,
                "keep",
                None,
                f"Absent: {default} connections per adapter with RSS, the default.",
                measure=bulk,
            )
        )
    elif have >= default:
        items.append(
            ctx.item(
                catalog_id,
                ref_count,
                current,
                "keep",
                None,
                f"{have}: at least the default {default}; SambaTune never lowers it.",
                measure=bulk,
            )
        )
    elif server:
        items.append(
            ctx.item(
                catalog_id,
                ref_count,
                current,
                "delete",
                None,
                f"{have} holds multichannel to {have} connection(s) per adapter with RSS, fewer "
                f"than the default {default}, and the server offers multichannel. Taking the "
                f"value out brings back the default {default}; the restore writes {have} again.",
                alternative="PowerShell: Set-SmbClientConfiguration "
                f"-ConnectionCountPerRssNetworkInterface {default} -Force",
                measure=bulk,
            )
        )
    else:
        items.append(
            ctx.item(
                catalog_id,
                ref_count,
                current,
                "keep",
                None,
                f"{have}, below the default {default}. {server_text}, so it makes no "
                "difference with this server; left as it is."
                if server is False
                else f"{have}, below the default {default}. {server_text}; SambaTune takes it "
                "out only for a server that offers multichannel.",
                measure=bulk,
            )
        )
    return items


def _cache_lifetimes(ctx: PlanContext, small: MeasureLink) -> list[PlannedChange]:
    rtt = ctx.sizing.rtt_seconds
    far = rtt >= HIGH_LATENCY_SECONDS
    items: list[PlannedChange] = []
    for name, (default, question) in CACHE_LIFETIMES.items():
        catalog_id = f"lanman-{name.lower()}"
        ref = RegistryValueRef(LANMAN, name, REG_DWORD)
        current = ctx.read(ref)
        have = registry_dword(current)
        action: PlanAction
        if not current.known:
            action, reason = (
                "none",
                _not_read(ctx, current) + f" Absent means {default} s, the default, which "
                "Microsoft advises keeping for ordinary browsing.",
            )
        elif have is None:
            action, reason = "keep", f"Absent: {default} s, the default."
        elif have >= default:
            action, reason = (
                "keep",
                f"{have} s: at least the default {default} s. SambaTune never lengthens it: "
                "a longer time shows other computers' changes later.",
            )
        else:
            shorter = (
                f"0 s turns this cache off (the default is {default} s)"
                if have == 0
                else f"{have} s is shorter than the default {default} s"
            )
            if far:
                action, reason = (
                    "delete",
                    f"{shorter}: at an RTT of {format_rtt(rtt)} every {question} "
                    "the cache could have answered costs a round trip. Taking the value out "
                    f"brings back the default {default} s. It may have been set on purpose, "
                    "for an application that must see other computers' changes at once (a "
                    "shared database, files written by a build farm): if so, keep it.",
                )
            else:
                action, reason = (
                    "keep",
                    f"{shorter}, perhaps on purpose for an application that needs a "
                    f"fresh view; at an RTT of {format_rtt(rtt)} the extra round trips cost little, "
                    "so it is left as chosen.",
                )
        items.append(
            ctx.item(
                catalog_id,
                ref,
                current,
                action,
                None,
                reason,
                alternative=f"PowerShell: Set-SmbClientConfiguration -{name} {default} -Force"
                if action == "delete" and ctx.os.generation == "win8plus"
                else "",
                measure=small,
            )
        )
    return items


def _security_report(ctx: PlanContext, bulk: MeasureLink) -> list[PlannedChange]:
    build = ctx.os.build or 0
    default_required = build >= SIGNING_BY_DEFAULT_BUILD
    new_default = (
        " Windows 11 24H2 Pro, Enterprise and Education and Windows Server 2025 (build 26100 "
        "and later, as here) require signing on every outbound connection by default; Windows 11 "
        "Home does not."
        if default_required
        else ""
    )
    items: list[PlannedChange] = []
    if ctx.os.generation == "win8plus":
        ref: SmbClientConfigRef | RegistryValueRef = SmbClientConfigRef("RequireSecuritySignature")
        catalog_id = "smb-client-requiresecuritysignature"
    else:
        ref = RegistryValueRef(LANMAN, "RequireSecuritySignature", REG_DWORD)
        catalog_id = "lanman-requiresecuritysignature"
    current = ctx.read(ref)
    if isinstance(ref, SmbClientConfigRef):
        required: bool | None = current.value == "true" if current.state == ValueState.PRESENT else None
    else:
        # The registry value: absent is the classic default, not required.
        required = registry_dword(current) == 1 if current.known else None
    if required is None and default_required:
        state = "Not read here; on this build it is required unless someone turned it off."
    elif required is None:
        state = _not_read(ctx, current)
    elif required:
        state = "Required: this computer signs every SMB message, whatever the server asks."
    else:
        state = "Not required: this computer signs when the server asks for it."
    items.append(
        ctx.item(
            catalog_id,
            ref,
            current,
            "none",
            None,
            f"{state} Signing guards every message against tampering and relaying and costs "
            "CPU and some throughput, which the large-file measurement shows; whether to "
            "require it is a security decision, so SambaTune reports it and never weakens it." + new_default,
            measure=bulk,
        )
    )
    server = (ctx.measurements.server_signing or "").strip().lower()
    if server in SERVER_REFUSES_SIGNING and (required or (required is None and default_required)):
        ctx.warnings.append(
            f"This Windows requires SMB signing{'' if required else ' (the default of this build)'}, "
            f"and the server is set 'server signing = {server}': connections to it will fail "
            "(Windows reports STATUS_INVALID_SIGNATURE, 'the cryptographic signature is invalid'). "
            "The fix is on the server: set 'server signing = auto' (or mandatory) in its "
            "smb.conf. Do not weaken this client."
        )

    if ctx.os.generation != "win8plus":
        return items
    for name, catalog_id, meaning in (
        (
            "RequireEncryption",
            "smb-client-requireencryption",
            {
                "true": "Required: this computer connects only to servers that encrypt SMB; "
                "encryption costs CPU on both ends.",
                "false": "Not required: connections are encrypted only where the server or the "
                "share asks for it.",
            },
        ),
        (
            "EnableInsecureGuestLogons",
            "smb-client-enableinsecureguestlogons",
            {
                "true": "Allowed: this computer accepts a server's guest logon without "
                "credentials, a session nobody can sign, so another machine can pose as the "
                "server. Prefer a real account on the server.",
                "false": "Refused: guest logons without credentials are not accepted.",
            },
        ),
    ):
        config_ref = SmbClientConfigRef(name)
        observed = ctx.read(config_ref)
        if observed.state == ValueState.ABSENT:
            continue  # this Windows has no such property; nothing to report
        if observed.state == ValueState.UNKNOWN and name == "RequireEncryption" and not default_required:
            continue  # only 24H2 / Server 2025 have it; an unread older build most likely not
        if observed.state == ValueState.PRESENT:
            text = meaning.get(str(observed.value), "")
        else:
            text = _not_read(ctx, observed)
        items.append(
            ctx.item(
                catalog_id,
                config_ref,
                observed,
                "none",
                None,
                f"{text} A security setting: reported, never changed by SambaTune.",
                measure=bulk,
            )
        )
    return items
