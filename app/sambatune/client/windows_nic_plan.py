"""The network adapter under SMB on Windows 8 / Server 2012 and later: the standardized
driver keywords (Microsoft's "Standardized INF keywords") that move work off the CPU or
spread it over cores.

The plan starts from what the driver offers (one Get-NetAdapterAdvancedProperty read):
a keyword the driver does not list gets no item, only a note naming it. A keyword turned
off where on helps SMB throughput is turned on, and each reason says what turning it off
is usually done for, so whoever applies the plan can tell whether that reason holds
there. *NumRssQueues is raised only on a 10 Gbit/s link with RSS on, to a value the driver
lists and the processors can serve; it is never lowered. Every change restarts the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass

from sambatune.client.plan import MeasureLink, PlannedChange
from sambatune.client.planner import PlanContext
from sambatune.client.settings import AdapterPropertyRef, ValueState
from sambatune.client.windows_smb_plan import share_path
from sambatune.client.windows_system import AdapterKeyword, WindowsSystem, ps_quote
from sambatune.errors import SambaTuneError

#: From this link speed on, one RSS queue per core can be what holds SMB back.
FAST_LINK_BPS = 10e9


@dataclass(frozen=True)
class Offload:
    """A standardized on/off keyword: 1 enables, 0 disables."""

    keyword: str
    catalog_id: str
    gain: str
    #: Why it is usually turned off ("to ...", "for ..."), so the admin can judge.
    off_for: str
    #: The dedicated cmdlet that turns it on, {name} being the quoted adapter name.
    cmdlet: str


OFFLOADS = (
    Offload(
        "*RSS",
        "adapter-rss",
        "Receive side scaling spreads the work of receiving over several cores, and lets SMB "
        "multichannel open several connections through this one adapter.",
        "to work around a driver bug, or on a Hyper-V host whose virtual switch spreads receive "
        "work its own way (VMQ)",
        "PowerShell: Enable-NetAdapterRss -Name {name}",
    ),
    Offload(
        "*LsoV2IPv4",
        "adapter-lsov2ipv4",
        "Large send offload lets the adapter cut large sends into packets, so SMB writes cost less CPU.",
        "to work around a driver bug (stalled or corrupt sends), for packet captures that should "
        "show the real packets, or on old advice for Hyper-V virtual machines",
        "PowerShell: Enable-NetAdapterLso -Name {name} -IPv4",
    ),
    Offload(
        "*LsoV2IPv6",
        "adapter-lsov2ipv6",
        "Large send offload for IPv6 lets the adapter cut large sends into packets, so SMB "
        "writes over IPv6 cost less CPU.",
        "to work around a driver bug (stalled or corrupt sends), for packet captures that should "
        "show the real packets, or on old advice for Hyper-V virtual machines",
        "PowerShell: Enable-NetAdapterLso -Name {name} -IPv6",
    ),
    Offload(
        "*RscIPv4",
        "adapter-rscipv4",
        "Receive segment coalescing lets the adapter join received segments into larger ones, "
        "so SMB reads cost less CPU.",
        "for latency-sensitive work (a joined segment waits a moment), to work around a driver "
        "bug, or on a Hyper-V host whose virtual switch could not coalesce",
        "PowerShell: Enable-NetAdapterRsc -Name {name} -IPv4",
    ),
    Offload(
        "*RscIPv6",
        "adapter-rscipv6",
        "Receive segment coalescing for IPv6 lets the adapter join received segments into "
        "larger ones, so SMB reads over IPv6 cost less CPU.",
        "for latency-sensitive work (a joined segment waits a moment), to work around a driver "
        "bug, or on a Hyper-V host whose virtual switch could not coalesce",
        "PowerShell: Enable-NetAdapterRsc -Name {name} -IPv6",
    ),
    Offload(
        "*InterruptModeration",
        "adapter-interruptmoderation",
        "Interrupt moderation gathers several packets per interrupt, so at high packet rates "
        "the processors are not swamped by interrupts.",
        "to lower latency (every packet is handled at once) for trading, real-time audio or "
        "small-message benchmarks, at the cost of CPU at high rates",
        "Device Manager: the adapter's Advanced tab, Interrupt Moderation = Enabled "
        "(there is no dedicated cmdlet)",
    ),
)
NUM_RSS_QUEUES = "*NumRssQueues"


def commands_note(name: str) -> str:
    quoted = ps_quote(name)
    return (
        f"Network adapter offloads of {name} (RSS, RSS queues, large send offload, receive "
        "segment coalescing, interrupt moderation) are planned from what the adapter's driver "
        "offers, which SambaTune reads on the machine itself; make the plan there. PowerShell "
        f"shows them with: Get-NetAdapterAdvancedProperty -Name {quoted} -AllProperties; "
        f"Get-NetAdapterRss -Name {quoted}; Get-NetAdapterLso -Name {quoted}; "
        f"Get-NetAdapterRsc -Name {quoted}."
    )


def plan_adapter_offloads(ctx: PlanContext) -> list[PlannedChange]:
    if ctx.os.generation != "win8plus":
        return []
    nic = ctx.interface
    system = ctx.system
    if nic is None or nic.example or not isinstance(system, WindowsSystem):
        ctx.notes.append(commands_note(nic.name if nic is not None else "Ethernet"))
        return []
    try:
        offered = system.adapter_properties(nic.name)
    except SambaTuneError as error:
        ctx.notes.append(
            f"The advanced properties of {nic.name} could not be read ({error.message}); "
            + commands_note(nic.name)
        )
        return []
    bulk = MeasureLink(
        "smb-client",
        share_path(ctx),
        "large-file write and read through the mapped share: the adapter's offloads show here",
    )
    items: list[PlannedChange] = []
    missing = []
    for offload in OFFLOADS:
        found = offered.get(offload.keyword.casefold())
        if found is None:
            missing.append(offload.keyword)
            continue
        items.append(_offload_item(ctx, nic.name, offload, found, bulk))
    queues = offered.get(NUM_RSS_QUEUES.casefold())
    if queues is None:
        missing.append(NUM_RSS_QUEUES)
    else:
        rss = offered.get("*rss")
        items.append(_queues_item(ctx, nic.name, queues, rss, system.processor_count(), bulk))
    if missing:
        ctx.notes.append(
            f"The driver of {nic.name} does not offer {', '.join(missing)}, so there is nothing "
            "to plan for them."
        )
    return items


def _offload_item(
    ctx: PlanContext, interface: str, offload: Offload, found: AdapterKeyword, bulk: MeasureLink
) -> PlannedChange:
    ref = AdapterPropertyRef(interface, found.keyword)
    current = ctx.read(ref)
    value = str(current.value) if current.state == ValueState.PRESENT else None
    shown = f" ({found.display_value})" if found.display_value else ""
    if value == "0" and (not found.valid_values or "1" in found.valid_values):
        return ctx.item(
            offload.catalog_id,
            ref,
            current,
            "set",
            "1",
            f"Off{shown}. {offload.gain} Turning it off is usually done {offload.off_for}: "
            "if that reason holds on this machine, keep it off. Applying it restarts the "
            "adapter: connections over it drop for a few seconds.",
            suffix=interface,
            alternative=offload.cmdlet.format(name=ps_quote(interface)),
            measure=bulk,
        )
    if value == "1":
        reason = f"On{shown}. {offload.gain}"
    elif value == "0":
        reason = (
            f"Off{shown}, and the driver does not accept 1 "
            f"(valid: {', '.join(found.valid_values)}); left as it is."
        )
    elif value is None:
        reason = f"{current.display()}: nothing to decide from; left as it is."
    else:
        reason = f"{value}{shown}: not the standard 0 or 1; left as the driver has it."
    return ctx.item(
        offload.catalog_id,
        ref,
        current,
        "keep" if current.known else "none",
        None,
        reason,
        suffix=interface,
        measure=bulk,
    )


def _queues_item(
    ctx: PlanContext,
    interface: str,
    queues: AdapterKeyword,
    rss: AdapterKeyword | None,
    processors: int | None,
    bulk: MeasureLink,
) -> PlannedChange:
    ref = AdapterPropertyRef(interface, queues.keyword)
    current = ctx.read(ref)
    text = str(current.value) if current.state == ValueState.PRESENT else ""
    have = int(text) if text.isdigit() else None
    valid = sorted({int(v) for v in queues.valid_values if v.isdigit()})
    speed = ctx.interface.speed_bps if ctx.interface is not None else None
    listed = ", ".join(str(v) for v in valid) if valid else "a range the driver does not list"
    state = f"{current.display()} queue(s); the driver allows {listed}."
    larger = [v for v in valid if have is not None and v > have and (processors is None or v <= processors)]
    if have is None:
        why = " The current number could not be read, so nothing is planned."
    elif speed is None or speed < FAST_LINK_BPS:
        link = "unknown" if speed is None else f"{speed / 1e9:g} Gbit/s"
        why = (
            f" The link is {link}: below 10 Gbit/s the default number of queues keeps up, "
            "so SambaTune leaves it."
        )
    elif rss is None or rss.value != "1":
        why = " RSS is not on, so queues do nothing; plan again once it is."
    elif processors is None:
        why = " The number of processors is not known, so no larger value is chosen."
    elif not larger:
        why = f" No larger value the driver allows fits the {processors} logical processors; left as it is."
    else:
        target = max(larger)
        return ctx.item(
            "adapter-numrssqueues",
            ref,
            current,
            "set",
            str(target),
            f"{state} On a {speed / 1e9:g} Gbit/s link each queue is served by one core, and "
            f"{have} can hold SMB back; {target} is the largest value the driver allows that "
            f"the {processors} logical processors can each serve. SambaTune never lowers it. "
            "Applying it restarts the adapter: connections over it drop for a few seconds.",
            suffix=interface,
            alternative=(
                f"PowerShell: Set-NetAdapterRss -Name {ps_quote(interface)} -NumberOfReceiveQueues {target}"
            ),
            measure=bulk,
        )
    return ctx.item(
        "adapter-numrssqueues",
        ref,
        current,
        "keep" if current.known else "none",
        None,
        state + why,
        suffix=interface,
        measure=bulk,
    )
