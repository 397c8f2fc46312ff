"""Catalog entries for the SMB client itself: cifs mount options (Linux), nsmb.conf and
DSDontWriteNetworkStores (macOS).

They join the entries of resources/client/settings.json in ``catalog.load_catalog`` and
follow the same schema (``catalog_problems`` checks both). Every entry says which OS
versions honour it and where that is written; a claim without a source is not made.
"""

from __future__ import annotations

from typing import Any

MOUNT_CIFS = "mount.cifs(8), cifs-utils (github.com/smfrench/smb3-utils mount.cifs.rst @ 1ff2942)"
KERNEL_FS_CONTEXT = "Linux kernel fs/smb/client/fs_context.c (smb3_fs_context_parse_param, smb3_reconfigure)"
SAMBA_WIKI_CIFS = (
    "SambaWiki LinuxCIFSKernel, 'Changes by release' (https://wiki.samba.org/index.php/LinuxCIFSKernel)"
)

REMOUNT_NOTE = (
    "The kernel reads mount options when the share is mounted. 'mount -o remount' keeps the "
    "SMB session and its connections, so unmount and mount the share again (the plan lists "
    "the commands); an autofs share is mounted again on the next access after an unmount."
)


def _linux(option: str, title: str, what: str, evidence: str, sources: list[str]) -> dict[str, Any]:
    return {
        "id": f"cifs-{option.replace('_', '-')}",
        "title": title,
        "platform": "linux",
        "setting": {"kind": "mount-option", "option": option},
        "what": what,
        "restart": "reconnect",
        "restart_note": REMOUNT_NOTE,
        "generations": {"linux": {"honoured": True, "evidence": evidence}},
        "sources": [MOUNT_CIFS, *sources],
    }


ENTRIES: list[dict[str, Any]] = [
    _linux(
        "rsize",
        "cifs read size (rsize)",
        "The largest read the client asks for in one SMB request. The kernel requests 4 MiB "
        "by default (1 MiB before 4.20) and the server lowers it to what it allows.",
        "Read by cifs.ko at mount time; the default request is 4 MiB since kernel 4.20 (mount.cifs(8)).",
        [KERNEL_FS_CONTEXT],
    ),
    _linux(
        "wsize",
        "cifs write size (wsize)",
        "The largest write the client sends in one SMB request; the same defaults and server limit as rsize.",
        "Read by cifs.ko at mount time; the default request is 4 MiB since kernel 4.20 (mount.cifs(8)).",
        [KERNEL_FS_CONTEXT],
    ),
    _linux(
        "multichannel",
        "cifs SMB3 multichannel",
        "Opens more than one TCP connection to the server and binds them into the one SMB "
        "session, so reads and writes spread over them (two channels unless max_channels says "
        "more). It only helps when the server offers multichannel and has an interface (or RSS "
        "queues) to spread over.",
        "Parsed by cifs.ko (fs_context.c); SambaTune plans it from kernel 6.7, the release whose "
        "changes list multichannel reconnect fixes and following the server switching "
        "multichannel on or off after the mount (SambaWiki LinuxCIFSKernel).",
        [KERNEL_FS_CONTEXT, SAMBA_WIKI_CIFS],
    ),
    _linux(
        "max_channels",
        "cifs channel count (max_channels)",
        "How many connections a multichannel session may use, 1 to 16; above 1 it turns "
        "multichannel on by itself.",
        "Parsed by cifs.ko (fs_context.c: 1 to CIFS_MAX_CHANNELS, 16); planned from kernel 6.7 "
        "like multichannel.",
        [KERNEL_FS_CONTEXT, SAMBA_WIKI_CIFS],
    ),
    _linux(
        "actimeo",
        "cifs attribute cache time (actimeo)",
        "Seconds the client trusts cached file and directory attributes before asking the "
        "server again (default 1). Longer: fewer round trips for stat-heavy work such as "
        "listings and builds, but changes made by other clients are seen later. 0 turns the "
        "cache off. Ignored when acregmax or acdirmax are given.",
        "Parsed by cifs.ko (fs_context.c, Opt_actimeo); default 1 s (mount.cifs(8)).",
        [KERNEL_FS_CONTEXT],
    ),
    _linux(
        "cache",
        "cifs cache mode (cache=)",
        "strict (default since kernel 3.7): caches file data only while the server grants an "
        "oplock or lease, so other clients' writes are always seen. loose: caches even without "
        "one, faster but may read stale data or lose the order of writes with other clients. "
        "none: no page cache at all, every read and write goes to the server (coherent, slow "
        "for small or repeated I/O).",
        "Parsed by cifs.ko (fs_context.c, Opt_cache); default strict since kernel 3.7 (mount.cifs(8)).",
        [KERNEL_FS_CONTEXT],
    ),
    _linux(
        "nosharesock",
        "cifs own connection per mount (nosharesock)",
        "Gives this mount its own TCP connection instead of sharing one with other mounts of "
        "the same server. Meant for testing (it makes one computer look like several "
        "clients); SambaTune never adds it.",
        "Parsed by cifs.ko (fs_context.c); described as a way to simulate several clients (mount.cifs(8)).",
        [KERNEL_FS_CONTEXT],
    ),
]


NSMB_MAN = "nsmb.conf(5), macOS 15.4 SDK (copy: https://keith.github.io/xcode-man-pages/nsmb.conf.5.html)"
NSMB_MAN_OLD = "nsmb.conf(5), an older macOS (copy: https://man.cameronkatri.com/nsmb.conf.5)"
APPLE_MULTICHANNEL = (
    "Apple Support, Configure SMB Multichannel behavior (https://support.apple.com/en-us/HT212277)"
)
NSMB_NOTE = "macOS's SMB client reads nsmb.conf when it connects: disconnect the share and connect again."


def _macos(
    key: str, title: str, what: str, evidence: str, sources: list[str], kind: str = "conf-key"
) -> dict[str, Any]:
    setting: dict[str, Any] = {"kind": kind, "key": key}
    if kind == "defaults":
        setting["domain"] = "com.apple.desktopservices"
    return {
        "id": f"nsmb-{key.replace('_', '-').lower()}" if kind == "conf-key" else f"macos-{key.lower()}",
        "title": title,
        "platform": "macos",
        "setting": setting,
        "what": what,
        "restart": "reconnect",
        "restart_note": NSMB_NOTE
        if kind == "conf-key"
        else "Finder reads it for folders it opens afterwards; log out and in to be sure.",
        "generations": {"macos": {"honoured": True, "evidence": evidence}},
        "sources": sources,
    }


ENTRIES += [
    _macos(
        "signing_required",
        "SMB signing required by this Mac (signing_required)",
        "yes: this Mac insists on signed SMB sessions; no (the default): it signs when the server "
        "asks. Signing protects each message against tampering and costs CPU on both ends.",
        "In nsmb.conf(5)'s keyword table, [default] and [SERVER] sections, default no.",
        [NSMB_MAN, NSMB_MAN_OLD],
    ),
    _macos(
        "protocol_vers_map",
        "SMB versions this Mac offers (protocol_vers_map)",
        "A bitmap of the SMB versions offered: 1 SMB1, 2 SMB2, 4 SMB3; default 7 (all).",
        "In nsmb.conf(5)'s keyword table, default 7.",
        [NSMB_MAN, NSMB_MAN_OLD],
    ),
    _macos(
        "dir_cache_max",
        "Directory cache, longest time (dir_cache_max)",
        "The longest a directory listing is cached (default 60 s): longer means fewer listings "
        "over the network, and others' new files show up later.",
        "In nsmb.conf(5)'s keyword table, default 60s.",
        [NSMB_MAN, NSMB_MAN_OLD],
    ),
    _macos(
        "dir_cache_min",
        "Directory cache, shortest time (dir_cache_min)",
        "The shortest a directory listing is cached (default 30 s).",
        "In nsmb.conf(5)'s keyword table, default 30s.",
        [NSMB_MAN, NSMB_MAN_OLD],
    ),
    _macos(
        "streams",
        "NTFS streams (streams)",
        "yes (the default): Finder metadata and resource forks travel as named streams when the "
        "server offers them (Samba with vfs_fruit/streams_xattr).",
        "In nsmb.conf(5)'s keyword table, default yes.",
        [NSMB_MAN, NSMB_MAN_OLD],
    ),
    _macos(
        "mc_on",
        "SMB multichannel on this Mac (mc_on)",
        "yes (the default from macOS 11.3): the Mac may open several connections to a server "
        "that offers multichannel, for speed when the interfaces have the same speed, and for "
        "failover; no turns it off.",
        "Apple's support article on SMB multichannel: on by default from macOS Big Sur 11.3, "
        "mc_on=no in /etc/nsmb.conf turns it off.",
        [APPLE_MULTICHANNEL, NSMB_MAN],
    ),
    _macos(
        "mc_prefer_wired",
        "Prefer wired interfaces for multichannel (mc_prefer_wired)",
        "yes: wired interfaces carry the traffic and Wi-Fi is only the fallback, even when the "
        "Wi-Fi link reports a higher speed than the Ethernet one; no (the default): the "
        "fastest-looking interface wins.",
        "Apple's support article on SMB multichannel (macOS 11.3 and later).",
        [APPLE_MULTICHANNEL, NSMB_MAN],
    ),
    _macos(
        "DSDontWriteNetworkStores",
        "No .DS_Store files on network shares (DSDontWriteNetworkStores)",
        "true: Finder stops writing .DS_Store files (view settings) into folders on network "
        "shares, one write less per folder opened; the price is that icon positions and view "
        "options of those folders are no longer remembered.",
        "A Finder user default (com.apple.desktopservices); no Apple page confirming which "
        "macOS releases read it was read for SambaTune, so this label is not version-checked.",
        ["defaults(1): defaults write/read/delete DOMAIN KEY"],
        kind="defaults",
    ),
]
