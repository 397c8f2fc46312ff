"""Catalog entries for Windows' SMB client configuration and the network adapter settings SMB
throughput depends on (RSS, large send offload, receive segment coalescing, interrupt
moderation).

They join resources/client/settings.json in ``catalog.load_catalog`` and follow its schema
(``catalog_problems`` checks them). Each entry says which Windows generations have the
setting and where that is written; the texts are SambaTune's own summaries of the sources.
"""

from __future__ import annotations

from typing import Any

LANMAN = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\LanmanWorkstation\\Parameters"

SET_SMB_CLIENT = (
    "Set-SmbClientConfiguration / Get-SmbClientConfiguration, SmbShare module "
    "(learn.microsoft.com/powershell/module/smbshare/set-smbclientconfiguration)"
)
FILE_SERVER_TUNING = (
    "Performance tuning for file servers, client settings "
    "(learn.microsoft.com/windows-server/administration/performance-tuning/role/file-server/)"
)
REDIRECTOR_CACHES = (
    "SMB2 Client Redirector Caches Explained, Microsoft TechNet ff686200 "
    "(learn.microsoft.com/previous-versions/windows/it-pro/windows-7/ff686200(v=ws.10))"
)
SMB_SIGNING = (
    "Control SMB signing behavior, Microsoft Learn "
    "(learn.microsoft.com/windows-server/storage/file-server/smb-signing)"
)
SIGNING_BY_DEFAULT = (
    "SMB signing required by default in Windows Insider, Storage at Microsoft blog "
    "(techcommunity.microsoft.com/t5/storage-at-microsoft/"
    "smb-signing-required-by-default-in-windows-insider/ba-p/3831704)"
)
SMB_HARDENING = (
    "SMB security hardening in Windows Server 2025 & Windows 11, Storage at Microsoft blog "
    "(techcommunity.microsoft.com, 2024)"
)
GUEST_ACCESS = (
    "Guest access in SMB2 and SMB3 disabled by default in Windows, Microsoft Learn "
    "(learn.microsoft.com/troubleshoot/windows-server/networking/guest-access-in-smb2-is-disabled-by-default)"
)
SET_ADVANCED_PROPERTY = (
    "Set-NetAdapterAdvancedProperty / Get-NetAdapterAdvancedProperty, NetAdapter module "
    "(learn.microsoft.com/powershell/module/netadapter/set-netadapteradvancedproperty)"
)
RSS_KEYWORDS = (
    "Standardized INF Keywords for RSS, Windows driver docs "
    "(learn.microsoft.com/windows-hardware/drivers/network/standardized-inf-keywords-for-rss)"
)
RSC_KEYWORDS = (
    "Standardized INF Keywords for RSC, Windows driver docs "
    "(learn.microsoft.com/windows-hardware/drivers/network/standardized-inf-keywords-for-rsc)"
)
LSO_KEYWORDS = (
    "Using Registry Values to Enable and Disable Task Offloading, Windows driver docs "
    "(learn.microsoft.com/windows-hardware/drivers/network/"
    "using-registry-values-to-enable-and-disable-task-offloading)"
)
MODERATION_KEYWORDS = (
    "Standardized INF Keywords for Interrupt Moderation, Windows driver docs "
    "(learn.microsoft.com/windows-hardware/drivers/network/"
    "standardized-inf-keywords-for-interrupt-moderation)"
)

NOT_9X = "Windows 9x has no SMB 2 or 3 client."
NOT_NT5 = "2000/XP/2003 speak SMB 1 only."
NO_CMDLET_BEFORE_8 = (
    "Get/Set-SmbClientConfiguration arrived with Windows 8 / Server 2012; on Vista and 7 "
    "SambaTune reads the registry instead."
)
SMB3_ONLY = "Multichannel came with SMB 3.0 in Windows 8 / Server 2012; Vista and 7 speak SMB 2.0 and 2.1."

RECONNECT_NOTE = (
    "The SMB client uses the new value for connections it sets up afterwards: disconnect the "
    "share and connect again, or sign out and in. The Microsoft pages read say nothing more "
    "precise; a restart of the computer is sure to apply it."
)
REGISTRY_NOTE = (
    "The Microsoft pages read do not say when the Workstation service reads it; a restart is "
    "the safe assumption (Set-SmbClientConfiguration may apply it at once)."
)
ADAPTER_NOTE = (
    "Set-NetAdapterAdvancedProperty restarts the network adapter to apply it: every connection "
    "over it drops for a few seconds. Shares reconnect by themselves, but a copy running at "
    "that moment may stop with an error, so apply it when nothing is being copied."
)


def _generations(win8: str, vista7: tuple[bool, str], nt5: str = NOT_NT5) -> dict[str, Any]:
    """Every setting here is honoured from Windows 8 on; ``vista7`` says (honoured, why) for 7."""
    return {
        "win9x": {"honoured": False, "evidence": NOT_9X},
        "nt5": {"honoured": False, "evidence": nt5},
        "vista7": {"honoured": vista7[0], "evidence": vista7[1]},
        "win8plus": {"honoured": True, "evidence": win8},
    }


def _smb_config(
    name: str,
    title: str,
    what: str,
    win8: str,
    sources: list[str],
    vista7: tuple[bool, str] = (False, NO_CMDLET_BEFORE_8),
) -> dict[str, Any]:
    return {
        "id": f"smb-client-{name.lower()}",
        "title": title,
        "platform": "windows",
        "setting": {"kind": "smb-client-config", "name": name},
        "what": what,
        "restart": "reconnect",
        "restart_note": RECONNECT_NOTE,
        "generations": _generations(win8, vista7),
        "sources": [SET_SMB_CLIENT, *sources],
    }


def _lanman(
    name: str, title: str, what: str, win8: str, vista7: tuple[bool, str], sources: list[str]
) -> dict[str, Any]:
    return {
        "id": f"lanman-{name.lower()}",
        "title": title,
        "platform": "windows",
        "setting": {"kind": "registry", "key": LANMAN, "name": name, "type": "REG_DWORD"},
        "what": what,
        "restart": "reboot",
        "restart_note": REGISTRY_NOTE,
        "generations": _generations(win8, vista7),
        "sources": sources,
    }


ENTRIES: list[dict[str, Any]] = [
    _smb_config(
        "EnableMultiChannel",
        "SMB multichannel (EnableMultiChannel)",
        "Lets the SMB client open several TCP connections to a server that offers multichannel "
        "and spread one session's reads and writes over them: over several network adapters, "
        "or over the RSS queues of one. On by default since Windows 8 / Server 2012. It always "
        "has a value, so a restore sets the earlier value back.",
        "SMB 3.0 client; on by default (Get-SmbClientConfiguration shows True).",
        [FILE_SERVER_TUNING],
        vista7=(False, SMB3_ONLY),
    ),
    _lanman(
        "ConnectionCountPerRssNetworkInterface",
        "SMB connections per RSS adapter (ConnectionCountPerRssNetworkInterface)",
        "How many TCP connections SMB multichannel opens to a server through each network "
        "adapter that has RSS: 4 by default, 1 to 16. Absent from the registry means the "
        "default; a restore puts an absent value back as absent. "
        "Set-SmbClientConfiguration -ConnectionCountPerRssNetworkInterface sets the same.",
        "A multichannel setting of the SMB 3 client (file server tuning guide: default 4, range 1-16).",
        (False, SMB3_ONLY),
        [FILE_SERVER_TUNING, SET_SMB_CLIENT],
    ),
]

for _name, _title, _what, _default in (
    (
        "DirectoryCacheLifetime",
        "SMB directory cache lifetime (DirectoryCacheLifetime)",
        "How many seconds the SMB client answers directory listings from its cache before "
        "asking the server again",
        10,
    ),
    (
        "FileInfoCacheLifetime",
        "SMB file information cache lifetime (FileInfoCacheLifetime)",
        "How many seconds the SMB client answers questions about a file's size, times and "
        "attributes from its cache before asking the server again",
        10,
    ),
    (
        "FileNotFoundCacheLifetime",
        "SMB file-not-found cache lifetime (FileNotFoundCacheLifetime)",
        "How many seconds the SMB client remembers that a name does not exist on the server, "
        "so programs probing for missing files need no round trip",
        5,
    ),
):
    ENTRIES.append(
        _lanman(
            _name,
            _title,
            f"{_what}. Default {_default} s (absent from the registry); 0 turns the cache off. "
            "A shorter time shows other computers' changes sooner and costs a round trip each "
            "time the cache would have answered; Microsoft advises leaving the defaults for "
            "ordinary browsing.",
            f"SMB 2 and 3 client cache (ff686200); Set-SmbClientConfiguration -{_name} sets the same.",
            (
                True,
                "One of the three metadata caches of the SMB 2.0 client, new in Vista / Server "
                f"2008 (ff686200); default {_default} s.",
            ),
            [REDIRECTOR_CACHES, FILE_SERVER_TUNING],
        )
    )

ENTRIES += [
    {
        **_smb_config(
            "RequireSecuritySignature",
            "SMB signing required (RequireSecuritySignature)",
            "True: this computer signs every SMB message and refuses servers that will not sign "
            "(the policy 'Microsoft network client: Digitally sign communications (always)'). "
            "Signing protects each message against tampering and relay attacks and costs CPU and "
            "some throughput. Windows 11 24H2 Pro, Enterprise and Education and Windows Server "
            "2025 require it by default (Home does not). SambaTune reports it and never weakens "
            "it.",
            "Get-SmbClientConfiguration reports the value in effect, the new default of 24H2 and "
            "Server 2025 included (the registry value may be absent there).",
            [SMB_SIGNING, SIGNING_BY_DEFAULT],
        ),
        "planned": False,
    },
    {
        **_smb_config(
            "RequireEncryption",
            "SMB encryption required (RequireEncryption)",
            "True: this computer connects only to servers that encrypt SMB (SMB 3 with "
            "encryption), and refuses the others. Encryption costs CPU on both ends. "
            "SambaTune reports it and never changes it.",
            "Reported where Get-SmbClientConfiguration lists it: the client-side requirement came "
            "with Windows 11 24H2 and Windows Server 2025.",
            [SMB_HARDENING],
        ),
        "planned": False,
    },
    {
        **_smb_config(
            "EnableInsecureGuestLogons",
            "SMB insecure guest logons (EnableInsecureGuestLogons)",
            "True: the client accepts a server's guest logon without credentials; such "
            "sessions cannot be signed, so a machine in the middle can pose as the server. "
            "Windows turns it off by default in its newer editions. SambaTune reports it and "
            "never changes it.",
            "Reported where Get-SmbClientConfiguration lists it.",
            [GUEST_ACCESS],
        ),
        "planned": False,
    },
]


NO_NETADAPTER_BEFORE_8 = (
    "The NetAdapter cmdlets arrived with Windows 8 / Server 2012; on 7 the setting is in the "
    "adapter's Advanced tab in Device Manager."
)


def _adapter(
    keyword: str,
    title: str,
    what: str,
    win8: str,
    sources: list[str],
    vista7: str = NO_NETADAPTER_BEFORE_8,
) -> dict[str, Any]:
    return {
        "id": "adapter-" + keyword.lstrip("*").lower(),
        "title": title,
        "platform": "windows",
        "setting": {"kind": "adapter-property", "keyword": keyword},
        "what": what,
        "restart": "adapter-restart",
        "restart_note": ADAPTER_NOTE,
        "generations": _generations(win8, (False, vista7), nt5="No NetAdapter cmdlets on 2000/XP/2003."),
        "sources": [SET_ADVANCED_PROPERTY, *sources],
    }


ENTRIES += [
    _adapter(
        "*RSS",
        "Receive side scaling (*RSS)",
        "1 (the standard default): the adapter spreads received traffic over several processor "
        "cores instead of one, and SMB multichannel can open several connections through this "
        "one adapter. 0 leaves all receive work to one core.",
        "Standardized keyword: 0 disabled, 1 enabled (default); Enable-NetAdapterRss does the same.",
        [RSS_KEYWORDS],
    ),
    _adapter(
        "*NumRssQueues",
        "RSS queues (*NumRssQueues)",
        "How many receive queues RSS uses, each served by its own core. The valid values are "
        "the driver's; more queues than logical processors gain nothing.",
        "Standardized RSS keyword (*NumRSSQueues in Microsoft's list; drivers spell it either "
        "way); Set-NetAdapterRss -NumberOfReceiveQueues does the same.",
        [RSS_KEYWORDS],
    ),
    _adapter(
        "*InterruptModeration",
        "Interrupt moderation (*InterruptModeration)",
        "1 (the usual default): the adapter gathers several packets per interrupt, which saves "
        "CPU at high packet rates; 0 interrupts for every packet, which lowers latency and "
        "costs CPU.",
        "Standardized keyword: 0 disabled, 1 enabled; there is no dedicated cmdlet.",
        [MODERATION_KEYWORDS],
    ),
    _adapter(
        "*LsoV2IPv4",
        "Large send offload, IPv4 (*LsoV2IPv4)",
        "1: TCP hands the adapter large blocks and the adapter cuts them into packets, which "
        "saves CPU on large sends (SMB writes). Enable-NetAdapterLso -IPv4 does the same.",
        "Standardized task-offload keyword: 0 disabled, 1 enabled.",
        [LSO_KEYWORDS],
    ),
    _adapter(
        "*LsoV2IPv6",
        "Large send offload, IPv6 (*LsoV2IPv6)",
        "As *LsoV2IPv4, for IPv6 connections. Enable-NetAdapterLso -IPv6 does the same.",
        "Standardized task-offload keyword: 0 disabled, 1 enabled.",
        [LSO_KEYWORDS],
    ),
    _adapter(
        "*RscIPv4",
        "Receive segment coalescing, IPv4 (*RscIPv4)",
        "1 (the standard default): the adapter joins received segments of one connection into "
        "larger ones before Windows handles them, which saves CPU on large receives (SMB "
        "reads). Enable-NetAdapterRsc -IPv4 does the same.",
        "Standardized keyword from Windows 8 / Server 2012: 0 disabled, 1 enabled (default).",
        [RSC_KEYWORDS],
        vista7="Receive segment coalescing came with Windows 8 / Server 2012.",
    ),
    _adapter(
        "*RscIPv6",
        "Receive segment coalescing, IPv6 (*RscIPv6)",
        "As *RscIPv4, for IPv6 connections. Enable-NetAdapterRsc -IPv6 does the same.",
        "Standardized keyword from Windows 8 / Server 2012: 0 disabled, 1 enabled (default).",
        [RSC_KEYWORDS],
        vista7="Receive segment coalescing came with Windows 8 / Server 2012.",
    ),
]
