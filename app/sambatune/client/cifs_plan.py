"""The Linux SMB client's plan: the options of each cifs mount this computer has written down.

Only what measurably matters and what the kernel really reads is changed; the rest is
shown with what it trades, so nobody flips a coherence switch for speed unknowingly:

- ``rsize``/``wsize``: the kernel asks for 4 MiB by itself (since 4.20) and the server
  lowers it, so a smaller value left over from an old guide is taken out; otherwise
  setting them changes nothing, and the plan says so.
- ``multichannel,max_channels=N``: only when the server offers multichannel (the
  survey's client audit reads ``server multi channel support``) and the kernel is one
  SambaTune plans it for.
- ``actimeo``, ``cache=``: shown with their trade (staleness against round trips), never
  changed: which side of it a share should be on is the owner's choice.
- ``nosharesock``: for tests only; never added.
"""

from __future__ import annotations

import re

from sambatune.client.catalog import Honour
from sambatune.client.cifs_mounts import MountEntry, cifs_mountable, remount_steps
from sambatune.client.linux_system import LinuxSystem
from sambatune.client.plan import MeasureLink, PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.settings import ValueState
from sambatune.units import format_bytes

#: What the kernel requests for rsize/wsize when the mount does not say (mount.cifs(8)).
DEFAULT_IO_SIZE = 4 * 1024 * 1024
#: Before 4.20 the kernel asked for 1 MiB (mount.cifs(8)).
DEFAULT_IO_SIZE_BEFORE_4_20 = 1024 * 1024
#: SambaWiki lists multichannel reconnect fixes for 6.7; SambaTune plans it from there.
MULTICHANNEL_KERNEL = (6, 7)
#: Channels asked for: Windows opens 4 connections per RSS interface by default
#: (ConnectionCountPerRssNetworkInterface), a tested middle between 2 and the 16 allowed.
CHANNELS = 4


def kernel_version(release: str) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _size(token: str | None) -> int | None:
    value = (token or "").partition("=")[2]
    return int(value) if value.isdigit() else None


def plan_cifs_mounts(ctx: PlanContext) -> list[PlannedChange]:
    system = ctx.system
    if not isinstance(system, LinuxSystem):
        ctx.notes.append(
            "cifs mounts: a profile has no fstab, mount units or autofs maps to read; make the "
            "plan on that machine to tune its SMB mounts."
        )
        return []
    scan = system.cifs_mounts()
    ctx.notes.extend(scan.notes)
    if not scan.entries:
        ctx.notes.append(
            f"cifs mounts: none in {system.etc.fstab}, {system.etc.systemd_dir}/*.mount or the "
            f"autofs maps of {system.etc.auto_master}."
        )
        return []
    items: list[PlannedChange] = []
    kernel = kernel_version(ctx.os.version)
    for entry in scan.entries:
        if entry.problem:
            ctx.notes.append(f"cifs mount {entry.mount_point} ({entry.path}): left alone, {entry.problem}.")
            continue
        planned = _plan_entry(ctx, entry, kernel)
        items += planned
        if any(i.changes_something for i in planned):
            ctx.after_apply += remount_steps(entry)
    if any(i.changes_something for i in items):
        blocker = cifs_mountable()
        ctx.notes.append(
            "The new mount options reach the kernel only when the share is mounted again: "
            "'mount -o remount' keeps the SMB session and its connections, so unmount and "
            "mount it (the commands are listed under 'after the apply')."
            + (f" This computer cannot do that now: {blocker}." if blocker else "")
        )
    return items


def _plan_entry(ctx: PlanContext, entry: MountEntry, kernel: tuple[int, int] | None) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    where = entry.mount_point
    bulk = MeasureLink(
        "smb-client",
        where,
        "large-file write and read through this mount: the request size and channel count show here",
    )
    small = MeasureLink(
        "files",
        where,
        "many small files through this mount: attribute and data caching show here",
    )
    default_io = DEFAULT_IO_SIZE if kernel is None or kernel >= (4, 20) else DEFAULT_IO_SIZE_BEFORE_4_20

    for catalog_id, option, direction in (("cifs-rsize", "rsize", "read"), ("cifs-wsize", "wsize", "write")):
        ref = entry.ref(option)
        current = ctx.read(ref)
        size = _size(str(current.value)) if current.state == ValueState.PRESENT else None
        if current.state == ValueState.UNKNOWN:
            items.append(ctx.item(catalog_id, ref, current, "none", None, "Could not be read.", suffix=where))
        elif current.state == ValueState.ABSENT and default_io < DEFAULT_IO_SIZE:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "set",
                    f"{option}={DEFAULT_IO_SIZE}",
                    f"This kernel asks for {format_bytes(default_io)} per {direction} by itself "
                    "(kernels from 4.20 ask for 4 MiB); asking for 4 MiB lets an SMB3 server "
                    "that allows it answer with fewer, larger requests.",
                    suffix=where,
                    measure=bulk,
                )
            )
        elif current.state == ValueState.ABSENT:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "keep",
                    None,
                    f"Not set: the kernel asks for 4 MiB per {direction} and the server lowers "
                    "it to what it allows. Setting it would change nothing.",
                    suffix=where,
                    measure=bulk,
                )
            )
        elif size is not None and size < default_io:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "delete",
                    None,
                    f"{current.value} holds each {direction} to {format_bytes(size)}, less than the "
                    f"{format_bytes(default_io)} the kernel asks for by itself; taking it out "
                    "lets the server's own limit decide (small values are left over from SMB1, "
                    "where 64 KiB was the usual maximum).",
                    suffix=where,
                    measure=bulk,
                )
            )
        else:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "keep",
                    None,
                    f"{current.value}: at least the kernel's own request; the server lowers it to "
                    "what it allows, so a larger number only helps where the server allows more.",
                    suffix=where,
                    measure=bulk,
                )
            )

    items += _multichannel(ctx, entry, kernel, bulk)

    ref = entry.ref("actimeo")
    current = ctx.read(ref)
    seconds = _size(str(current.value)) if current.state == ValueState.PRESENT else None
    if current.state == ValueState.ABSENT:
        text = (
            "Not set: attributes are trusted for 1 second. A larger value (e.g. actimeo=10 on a "
            "share only this computer writes) saves a round trip per stat in listings and builds; "
            "the price is seeing other clients' changes that much later. Left to you."
        )
    elif seconds == 0:
        text = (
            "actimeo=0: every stat asks the server (fully coherent, slowest for small files). "
            "The small-file test through this mount shows the cost. Left as chosen."
        )
    else:
        text = (
            f"{current.display()}: attributes are trusted that long; other clients' changes "
            "show up that much later. Left as chosen."
        )
    items.append(
        ctx.item(
            "cifs-actimeo",
            ref,
            current,
            "keep" if current.known else "none",
            None,
            text,
            suffix=where,
            measure=small,
        )
    )

    ref = entry.ref("cache")
    current = ctx.read(ref)
    mode = str(current.value).partition("=")[2] if current.state == ValueState.PRESENT else "strict"
    trade = {
        "strict": "strict (the default): data is cached only while the server grants a lease, "
        "so other clients' writes are always seen.",
        "loose": "loose: data is cached even without a lease; fast, but reads may be stale and "
        "write order may differ for other clients. Keep it to shares nobody else writes.",
        "none": "none: no page cache, every read and write goes to the server; coherent, but "
        "slow for small and repeated I/O (the small-file test shows it).",
    }.get(mode, f"{mode}: not one of strict, loose, none.")
    items.append(
        ctx.item(
            "cifs-cache",
            ref,
            current,
            "keep" if current.known else "none",
            None,
            trade + " Left as chosen: coherence against speed is the share owner's call.",
            suffix=where,
            measure=small,
        )
    )

    ref = entry.ref("nosharesock")
    current = ctx.read(ref)
    items.append(
        ctx.item(
            "cifs-nosharesock",
            ref,
            current,
            "keep" if current.known else "none",
            None,
            "Set: this mount opens its own connection, as a separate client would; useful to "
            "test several clients from one computer, otherwise one more connection to the server."
            if current.state == ValueState.PRESENT
            else "Not set: mounts of the same server share one connection, as they should outside tests.",
            suffix=where,
            measure=bulk,
        )
    )
    return items


def _multichannel(
    ctx: PlanContext, entry: MountEntry, kernel: tuple[int, int] | None, bulk: MeasureLink
) -> list[PlannedChange]:
    where = entry.mount_point
    ref = entry.ref("multichannel")
    refused = entry.ref("nomultichannel")
    current = ctx.read(ref)
    channels_ref = entry.ref("max_channels")
    channels = ctx.read(channels_ref)
    if kernel is None:
        honour = Honour(False, "The kernel release is not known, so SambaTune does not plan multichannel.")
    elif kernel < MULTICHANNEL_KERNEL:
        honour = Honour(
            False,
            f"Kernel {kernel[0]}.{kernel[1]}: older than 6.7, the release whose changes list the "
            "multichannel reconnect fixes (SambaWiki LinuxCIFSKernel); SambaTune does not plan it here.",
        )
    else:
        honour = Honour(True, f"Kernel {kernel[0]}.{kernel[1]}: 6.7 or later (SambaWiki LinuxCIFSKernel).")
    server = ctx.measurements.server_multichannel
    wanted: str | None = None
    settled = True
    if not current.known or not channels.known:
        reason = "Could not be read."
    elif ctx.read(refused).state == ValueState.PRESENT:
        reason = "Turned off on purpose (nomultichannel); left as chosen."
    elif current.state == ValueState.PRESENT or _size(str(channels.value)) not in (None, 0, 1):
        reason = "Already on."
    elif not honour.honoured:
        reason, settled = honour.evidence, False
    elif server is None:
        settled = False
        reason = (
            "Whether the server offers multichannel is not known: survey it (the client audit "
            "reads 'server multi channel support'), or plan with --server-multichannel yes/no."
        )
    elif not server:
        settled = False
        reason = (
            "The server does not offer multichannel ('server multi channel support' is off), "
            "so asking for it here would change nothing."
        )
    else:
        wanted = "multichannel"
        reason = (
            f"The server offers multichannel: with it this mount opens up to {CHANNELS} "
            "connections in one session and spreads reads and writes over them, which lifts the "
            "one-connection limit when the server has several interfaces or RSS queues."
        )
    items = [
        ctx.item(
            "cifs-multichannel",
            ref,
            current,
            "set" if wanted else ("keep" if current.known and settled else "none"),
            wanted,
            reason,
            suffix=where,
            honour=honour,
            measure=bulk,
        )
    ]
    if wanted and channels.state == ValueState.ABSENT:
        items.append(
            ctx.item(
                "cifs-max-channels",
                channels_ref,
                channels,
                "set",
                f"max_channels={CHANNELS}",
                f"Without it multichannel uses 2 connections; {CHANNELS} is what Windows opens "
                "per RSS interface by default (ConnectionCountPerRssNetworkInterface).",
                suffix=where,
                honour=honour,
                measure=bulk,
            )
        )
    else:
        items.append(
            ctx.item(
                "cifs-max-channels",
                channels_ref,
                channels,
                "keep" if channels.known else "none",
                None,
                f"{channels.display()}."
                if channels.state == ValueState.PRESENT
                else "Not set (2 channels when multichannel is on).",
                suffix=where,
                honour=honour,
                measure=bulk,
            )
        )
    return items
