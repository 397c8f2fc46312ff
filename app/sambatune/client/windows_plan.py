"""The Windows planner: version-aware, because each generation honours different values.

- 95/98/ME: DefaultRcvWindow (text) and friends under VxD\\MSTCP, MaxMTU per binding.
- 2000/XP/2003: TcpWindowSize, GlobalMaxTcpWindowSize, Tcp1323Opts, per-interface MTU.
- Vista and later: TcpWindowSize is ignored and said so; the auto-tuning level, the
  MTU through netsh, jumbo frames, and the SMB client's LanmanWorkstation values; the
  SMB client's multichannel, cache lifetimes and security report (windows_smb_plan.py)
  and, from Windows 8, the adapter's offloads (windows_nic_plan.py).
"""

from __future__ import annotations

from sambatune.client.catalog import Honour, entry
from sambatune.client.nics import TCPIP_INTERFACES_KEY
from sambatune.client.plan import PlannedChange
from sambatune.client.planner import DEFAULT_MTU, PlanContext
from sambatune.client.regvalue import REG_DWORD, REG_SZ, RegValue
from sambatune.client.settings import (
    AdapterPropertyRef,
    InterfaceMtuRef,
    Observed,
    RegistryValueRef,
    TcpAutotuningRef,
    ValueState,
)
from sambatune.client.window import (
    MAX_SCALED_WINDOW,
    MAX_UNSCALED_WINDOW,
    format_rtt,
    largest_window,
    round_up_to_multiple,
)
from sambatune.client.windows_nic_plan import plan_adapter_offloads
from sambatune.client.windows_smb_plan import (
    HIGH_LATENCY_SECONDS,
    LANMAN,
    plan_smb_client_extras,
    registry_dword,
)
from sambatune.units import format_bits

TCPIP = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
MSTCP = "HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\VxD\\MSTCP"
MSTCP_PARAMETERS = MSTCP + "\\Parameters"
NETTRANS = "HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\Class\\NetTrans"
EXAMPLE_GUID = "{00000000-0000-0000-0000-000000000000}"

#: The largest window each auto-tuning level lets a connection advertise.
AUTOTUNING_WINDOW = {
    "disabled": MAX_UNSCALED_WINDOW,
    "highlyrestricted": largest_window(2),
    "restricted": largest_window(4),
    "normal": largest_window(8),
    "experimental": largest_window(14),
}

#: Microsoft's file-server tuning guide, "client tuning example" for high-latency networks.
HIGH_LATENCY_CACHES = {
    "FileInfoCacheEntriesMax": 32768,
    "DirectoryCacheEntriesMax": 4096,
    "FileNotFoundCacheEntriesMax": 32768,
}
#: Tcp1323Opts when absent on 2000/XP/2003: window scaling and timestamps (TechNet
#: cc938205 for 2000, cc757402 for Server 2003).
NT5_TCP1323OPTS_DEFAULT = 3


def smb1_note(name: str) -> str:
    """What it takes, and costs, for a 2000/XP/2003 client to reach a current Samba."""
    return (
        f"{name} speaks only SMB1 (the NT1 dialect). Samba 4.11 and later refuse SMB1 unless "
        "the server's smb.conf sets 'server min protocol = NT1' in [global], so this client "
        "cannot reach a current Samba without that change, whatever the window. That change "
        "re-enables SMB1 for every client of the server, with what SMB1 lacks: modern signing "
        "(SMB1 signs with MD5, SMB 2 and 3 with HMAC-SHA256 and AES) and any encryption (SMB 3 "
        "encrypts with AES). SMB1 is also the protocol WannaCry spread through (the EternalBlue "
        "flaw, MS17-010), and Microsoft has left SMB1 off "
        "by default since Windows 10 1709. Samba 4.5 and later also refuse the older NTLM "
        "logon (NTLMv1) this Windows sends by default: their default 'ntlm auth = no' is "
        "named 'ntlmv2-only' since 4.7. Set "
        "LmCompatibilityLevel to 3 on the client rather than weakening the server. Prefer "
        "retiring the machine; if it must stay, allow NT1 only on a Samba instance reachable "
        "from its network segment alone."
    )


def plan_windows(ctx: PlanContext) -> list[PlannedChange]:
    generation = ctx.os.generation
    if generation == "win9x":
        items = _plan_9x(ctx)
    elif generation == "nt5":
        items = _plan_nt5(ctx)
    else:
        items = _plan_vista_and_later(ctx)
    if not ctx.os.detected and any(i.at_least and isinstance(i.ref, RegistryValueRef) for i in items):
        ctx.notes.append(
            "The registry values above are minimums for a machine SambaTune has not read. "
            "'sambatune client apply' on that machine compares them with what it holds and only "
            "raises; the .reg file cannot compare and writes them as they are, so check first "
            "that the machine holds no larger values."
        )
    return items


def _registry(key: str, name: str, value_type: int = REG_DWORD) -> RegistryValueRef:
    return RegistryValueRef(key, name, value_type)


_dword = registry_dword


def _number_text(observed: Observed) -> int | None:
    """A Windows 9x number stored as text (or, on 95 without Winsock 2, as a DWORD)."""
    value = observed.value
    if observed.state != ValueState.PRESENT or not isinstance(value, RegValue):
        return None
    if isinstance(value.data, int):
        return value.data
    if isinstance(value.data, str) and value.data.strip().isdigit():
        return int(value.data.strip())
    return None


def _need_text(ctx: PlanContext) -> str:
    s = ctx.sizing
    return (
        f"{format_bits(s.bandwidth_bps)} x {format_rtt(s.rtt_seconds)} needs a "
        f"{s.required_window:,}-byte window"
    )


def _window_for_registry(ctx: PlanContext, scaling: bool) -> int:
    """The required window as a whole number of MSS-sized segments, within what TCP allows."""
    mss = ctx.mss
    ceiling = MAX_SCALED_WINDOW if scaling else MAX_UNSCALED_WINDOW
    ceiling -= ceiling % mss
    return min(round_up_to_multiple(ctx.sizing.required_window, mss), ceiling)


def _interface_key(ctx: PlanContext) -> str:
    nic = ctx.interface
    guid = nic.guid if nic is not None and nic.guid else None
    if guid is None or guid == EXAMPLE_GUID:
        ctx.warnings.append(
            f"The interface GUID {EXAMPLE_GUID} is a placeholder: on that machine find the key "
            "under Tcpip\\Parameters\\Interfaces whose IPAddress or DhcpIPAddress is the "
            "address facing the server, and use its GUID."
        )
        guid = EXAMPLE_GUID
    return f"{TCPIP_INTERFACES_KEY}\\{guid}"


# -- Windows 95 / 98 / ME -------------------------------------------------------------


def _plan_9x(ctx: PlanContext) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    is_95 = ctx.os.profile == "windows-95" or ctx.os.version.startswith("4.0.")
    can_scale = not is_95
    need = ctx.sizing.required_window
    window = _window_for_registry(ctx, scaling=can_scale)

    ref = _registry(MSTCP, "DefaultRcvWindow", REG_SZ)
    current = ctx.read(ref)
    have = _number_text(current)
    old_advice = (
        " Old Samba notes (Speed.txt, 1999-2000) report both big gains and 30-fold "
        "slowdowns from hand-picked values such as 3072, 8192 or 16384, without knowing "
        "why; SambaTune sizes the window from your measured bandwidth and RTT instead."
    )
    if have is not None and have >= need:
        items.append(
            ctx.item(
                "win9x-defaultrcvwindow",
                ref,
                current,
                "keep",
                None,
                f"{_need_text(ctx)}; {have:,} bytes already cover it.",
            )
        )
    else:
        reason = (
            f"{_need_text(ctx)}; {window:,} bytes is that rounded up to whole "
            f"{ctx.mss}-byte segments (MSS = MTU {ctx.mtu.effective} - 40)."
        )
        if window < need:
            reason += (
                f" Capped at {window:,}: Windows 95 has no window scaling, so one "
                "connection is limited to "
                f"{format_bits(window * 8 / ctx.sizing.rtt_seconds)}"
                " at this RTT."
            )
        if current.state == ValueState.ABSENT:
            reason += " The value is absent now (third-party sources give the default as 8192)."
        items.append(
            ctx.item(
                "win9x-defaultrcvwindow",
                ref,
                current,
                "set",
                RegValue.string(str(window)),
                reason + old_advice,
            )
        )

    scaling_needed = window > MAX_UNSCALED_WINDOW
    opts_ref = _registry(MSTCP, "Tcp1323Opts", REG_SZ)
    opts_current = ctx.read(opts_ref)
    opts = _number_text(opts_current)
    if is_95:
        items.append(
            ctx.label(
                "win9x-tcp1323opts",
                opts_ref,
                "Windows 95 cannot scale the window; the window stays at most 65,535 bytes.",
                honour=Honour(False, "Windows 95 has no RFC 1323 window scaling."),
            )
        )
    elif scaling_needed and (opts is None or not opts & 1):
        new = (opts or 0) | 1
        items.append(
            ctx.item(
                "win9x-tcp1323opts",
                opts_ref,
                opts_current,
                "set",
                RegValue.string(str(new)),
                f"A {window:,}-byte window is above 65,535 and needs window scaling "
                "(bit 0); timestamps (bit 1) are left as they were.",
            )
        )
    else:
        items.append(
            ctx.item(
                "win9x-tcp1323opts",
                opts_ref,
                opts_current,
                "keep",
                None,
                "Window scaling is not needed for this window."
                if not scaling_needed
                else "Window scaling is already on.",
            )
        )

    max_ref = _registry(MSTCP_PARAMETERS, "GlobalMaxTcpWindoSize")
    is_98 = ctx.os.profile == "windows-98" or ctx.os.version.startswith("4.10.")
    if not is_98:
        items.append(
            ctx.label(
                "win9x-globalmaxtcpwindosize",
                max_ref,
                "Only Windows 98 reads this (misspelled) value.",
                honour=Honour(False, "Documented for Windows 98/98 SE only (KB239731)."),
            )
        )
    else:
        max_current = ctx.read(max_ref)
        have_max = _dword(max_current)
        if scaling_needed and (have_max is None or have_max < window):
            items.append(
                ctx.item(
                    "win9x-globalmaxtcpwindosize",
                    max_ref,
                    max_current,
                    "set",
                    RegValue.dword(window),
                    f"Windows 98 caps windows above 64 KB with this value; it must "
                    f"allow {window:,} bytes. Note the missing 'w': Windows 98 reads "
                    "'GlobalMaxTcpWindoSize', and the correctly spelled name does "
                    "nothing there.",
                )
            )
        else:
            items.append(
                ctx.item(
                    "win9x-globalmaxtcpwindosize",
                    max_ref,
                    max_current,
                    "keep",
                    None,
                    "No window above 64 KB is planned, so no cap to lift."
                    if not scaling_needed
                    else "It already allows the window.",
                )
            )

    if ctx.mtu.target is not None:
        key = _nettrans_key(ctx)
        mtu_ref = _registry(key, "MaxMTU", REG_SZ)
        items.append(
            ctx.item(
                "win9x-maxmtu",
                mtu_ref,
                ctx.read(mtu_ref),
                "set",
                RegValue.string(str(ctx.mtu.target)),
                ctx.mtu.reason,
            )
        )
    else:
        ctx.notes.append(f"MTU: {ctx.mtu.reason}")

    items.append(
        ctx.label(
            "tcpip-tcpwindowsize",
            _registry(TCPIP, "TcpWindowSize"),
            "The NT-family name; Windows 9x does not read it, so setting it here would do nothing.",
        )
    )
    return items


def _nettrans_key(ctx: PlanContext) -> str:
    registry = getattr(ctx.system, "registry", None)
    if registry is not None:
        for sub in registry.subkeys(NETTRANS):
            desc = registry.get(f"{NETTRANS}\\{sub}", "DriverDesc")
            if desc is not None and "tcp/ip" in str(desc.data).lower():
                return f"{NETTRANS}\\{sub}"
    ctx.warnings.append(
        "MaxMTU lives in the Class\\NetTrans\\000n key of the TCP/IP binding to your adapter; "
        "000n here is 0000, a placeholder: check DriverDesc on that machine."
    )
    return f"{NETTRANS}\\0000"


# -- Windows 2000 / XP / 2003 ---------------------------------------------------------


def _plan_nt5(ctx: PlanContext) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    need = ctx.sizing.required_window
    window = _window_for_registry(ctx, scaling=True)
    scaling_needed = window > MAX_UNSCALED_WINDOW

    win_ref = _registry(TCPIP, "TcpWindowSize")
    win_current = ctx.read(win_ref)
    have = _dword(win_current)
    if have is not None and have >= need:
        items.append(
            ctx.item(
                "tcpip-tcpwindowsize",
                win_ref,
                win_current,
                "keep",
                None,
                f"{_need_text(ctx)}; {have:,} bytes already cover it.",
            )
        )
    elif win_current.state == ValueState.ABSENT and need <= MAX_UNSCALED_WINDOW:
        items.append(
            ctx.item(
                "tcpip-tcpwindowsize",
                win_ref,
                win_current,
                "keep",
                None,
                f"{_need_text(ctx)}. Absent, the window is chosen from the link "
                "speed (up to 65,535 bytes on 100 Mbit/s and faster), which covers "
                "it.",
            )
        )
    else:
        reason = (
            f"{_need_text(ctx)}. {window:,} bytes is that rounded up to whole "
            f"{ctx.mss}-byte segments (MSS = MTU {ctx.mtu.effective} - 40), as Microsoft "
            "advises for this value."
        )
        if window < need:
            reason += " Capped at the largest window TCP can advertise."
        if win_current.state == ValueState.ABSENT:
            reason += (
                " It is absent now, so Windows uses at most 65,535 bytes, "
                f"{format_bits(ctx.sizing.unscaled_throughput_bps)} at this RTT."
            )
        items.append(
            ctx.item("tcpip-tcpwindowsize", win_ref, win_current, "set", RegValue.dword(window), reason)
        )

    opts_ref = _registry(TCPIP, "Tcp1323Opts")
    opts_current = ctx.read(opts_ref)
    opts = _dword(opts_current)
    if scaling_needed and (opts is None or not opts & 1):
        need_scaling = f"A {window:,}-byte window is above 65,535 and needs window scaling (bit 0)."
        if opts is not None:
            new = opts | 1
            why = (
                f" {opts} leaves it off; {new} turns it on and keeps the other bit as it is "
                f"(timestamps, bit 1, stay {'on' if opts & 2 else 'off'})."
            )
        else:
            # Absent (or not known): TechNet documents the default as 3, scaling and
            # timestamps. Writing 1 would turn timestamps off; 3 only makes scaling explicit.
            new = NT5_TCP1323OPTS_DEFAULT | 1
            why = (
                " Absent, the value means its documented default, 3 (scaling and timestamps, "
                "TechNet cc938205 / cc757402); SambaTune writes the 3 so scaling does not "
                "depend on the default, and timestamps stay on as they were. Writing 1 "
                "would turn timestamps off."
            )
        items.append(
            ctx.item(
                "tcpip-tcp1323opts", opts_ref, opts_current, "set", RegValue.dword(new), need_scaling + why
            )
        )
    else:
        items.append(
            ctx.item(
                "tcpip-tcp1323opts",
                opts_ref,
                opts_current,
                "keep",
                None,
                "Window scaling is already allowed."
                if scaling_needed
                else "No window above 65,535 bytes is planned.",
            )
        )

    max_ref = _registry(TCPIP, "GlobalMaxTcpWindowSize")
    max_current = ctx.read(max_ref)
    have_max = _dword(max_current)
    if have_max is not None and have_max < window:
        items.append(
            ctx.item(
                "tcpip-globalmaxtcpwindowsize",
                max_ref,
                max_current,
                "set",
                RegValue.dword(window),
                f"It caps every window at {have_max:,} bytes, below the {window:,} planned.",
            )
        )
    else:
        items.append(
            ctx.item(
                "tcpip-globalmaxtcpwindowsize",
                max_ref,
                max_current,
                "keep",
                None,
                "Absent: no global cap holds the window back."
                if have_max is None
                else f"{have_max:,} bytes do not hold the planned window back.",
            )
        )

    iface_key = _interface_key(ctx) if ctx.interface is not None else None
    if iface_key is not None:
        per_ref = _registry(iface_key, "TcpWindowSize")
        per_current = ctx.read(per_ref)
        per = _dword(per_current)
        if per is not None and per < window:
            items.append(
                ctx.item(
                    "tcpip-interface-tcpwindowsize",
                    per_ref,
                    per_current,
                    "set",
                    RegValue.dword(window),
                    f"This per-interface value ({per:,}) overrides the global "
                    "TcpWindowSize, so it must carry the planned window too.",
                    suffix=ctx.interface.name if ctx.interface else "",
                )
            )
        else:
            items.append(
                ctx.item(
                    "tcpip-interface-tcpwindowsize",
                    per_ref,
                    per_current,
                    "keep",
                    None,
                    "Absent: the global TcpWindowSize applies."
                    if per is None
                    else "It already allows the planned window.",
                    suffix=ctx.interface.name if ctx.interface else "",
                )
            )
        mtu_ref = _registry(iface_key, "MTU")
        if ctx.mtu.target is not None:
            items.append(
                ctx.item(
                    "tcpip-interface-mtu",
                    mtu_ref,
                    ctx.read(mtu_ref),
                    "set",
                    RegValue.dword(ctx.mtu.target),
                    ctx.mtu.reason,
                    suffix=ctx.interface.name if ctx.interface else "",
                )
            )
        else:
            ctx.notes.append(f"MTU: {ctx.mtu.reason}")

    if ctx.mtu.black_hole:
        bh_ref = _registry(TCPIP, "EnablePMTUBHDetect")
        bh_current = ctx.read(bh_ref)
        if _dword(bh_current) != 1:
            items.append(
                ctx.item(
                    "tcpip-enablepmtubhdetect",
                    bh_ref,
                    bh_current,
                    "set",
                    RegValue.dword(1),
                    "The probe found a black hole on the way to the server; with "
                    "detection on, TCP falls back to smaller segments when large "
                    "ones vanish, for destinations the lowered MTU does not cover.",
                )
            )

    ctx.notes.append(smb1_note(ctx.os.name))
    items.append(
        ctx.label(
            "netsh-autotuninglevel",
            None,
            "Receive-window auto-tuning arrived with Vista; on this Windows the "
            "registry values above size the window.",
        )
    )
    items.append(
        ctx.label(
            "lanman-disablebandwidththrottling",
            _registry(LANMAN, "DisableBandwidthThrottling"),
            "A setting of the SMB 2 client (Vista and later); this Windows speaks SMB 1 only.",
        )
    )
    items.append(
        ctx.label(
            "win9x-defaultrcvwindow",
            _registry(MSTCP, "DefaultRcvWindow", REG_SZ),
            "The Windows 9x name; NT-family Windows does not read it.",
        )
    )
    return items


# -- Vista and later ------------------------------------------------------------------


def _plan_vista_and_later(ctx: PlanContext) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    need = ctx.sizing.required_window
    win8 = ctx.os.generation == "win8plus"

    win_ref = _registry(TCPIP, "TcpWindowSize")
    win_current = ctx.read(win_ref)
    present = (
        (
            " It is present in this registry, left over from an old tweak; it does no harm "
            "and SambaTune leaves it."
        )
        if win_current.state == ValueState.PRESENT
        else ""
    )
    items.append(
        ctx.item(
            "tcpip-tcpwindowsize",
            win_ref,
            win_current,
            "none",
            None,
            f"Ignored on {ctx.os.name}: receive-window auto-tuning sizes the window "
            "per connection, so this value changes nothing. Presets that still set "
            "it are obsolete here." + present,
        )
    )
    items.append(
        ctx.label(
            "tcpip-globalmaxtcpwindowsize",
            _registry(TCPIP, "GlobalMaxTcpWindowSize"),
            f"Ignored on {ctx.os.name}, like TcpWindowSize.",
        )
    )

    items.append(_autotuning_item(ctx, need))

    opts_ref = _registry(TCPIP, "Tcp1323Opts")
    opts_current = ctx.read(opts_ref)
    opts = _dword(opts_current)
    if opts is not None and not opts & 1 and need > MAX_UNSCALED_WINDOW:
        items.append(
            ctx.item(
                "tcpip-tcp1323opts",
                opts_ref,
                opts_current,
                "set",
                RegValue.dword(opts | 1),
                f"Tcp1323Opts = {opts} turns window scaling off, which would hold "
                f"every connection to 65,535 bytes; {_need_text(ctx)}.",
            )
        )
    else:
        items.append(
            ctx.item(
                "tcpip-tcp1323opts",
                opts_ref,
                opts_current,
                "keep",
                None,
                "Absent: auto-tuning uses window scaling by itself."
                if opts is None
                else "It does not turn window scaling off.",
            )
        )

    if ctx.os.generation == "vista7":
        items.append(
            ctx.label(
                "netsh-heuristics",
                None,
                "Shown for information: on Vista and 7 the scaling heuristics can "
                "lower the auto-tuning level by themselves; if the level keeps "
                "dropping, 'netsh int tcp set heuristics disabled' is the usual "
                "fix. SambaTune does not change it.",
            )
        )

    items += _modern_mtu_items(ctx)
    items += plan_adapter_offloads(ctx)
    nic = ctx.interface
    known_guid = nic is not None and nic.guid and nic.guid != EXAMPLE_GUID
    items.append(
        ctx.label(
            "tcpip-interface-mtu",
            _registry(f"{TCPIP_INTERFACES_KEY}\\{nic.guid}", "MTU")
            if known_guid and nic is not None
            else None,
            "SambaTune sets the MTU with netsh on this Windows, as Microsoft's current guidance does.",
            suffix=ctx.interface.name if ctx.interface else "",
        )
    )
    items += _smb_client_items(ctx, need, win8)
    return items


def _autotuning_item(ctx: PlanContext, need: int) -> PlannedChange:
    ref = TcpAutotuningRef()
    current = ctx.read(ref)
    level = str(current.value) if current.state == ValueState.PRESENT else None
    normal = AUTOTUNING_WINDOW["normal"]
    alternative = (
        "PowerShell: Set-NetTCPSetting -SettingName InternetCustom -AutoTuningLevelLocal Normal"
        if ctx.os.generation == "win8plus"
        else ""
    )
    if level is None:
        return ctx.item(
            "netsh-autotuninglevel",
            ref,
            current,
            "set",
            "normal",
            "The current level could not be read here; normal (the default, scale "
            f"factor 8, windows up to {normal:,} bytes) is what this plan asks for. "
            f"{_need_text(ctx)}.",
            alternative=alternative,
        )
    allowed = AUTOTUNING_WINDOW[level]
    if level == "normal":
        reason = f"{_need_text(ctx)}; normal allows up to {normal:,} bytes."
        if need > normal:
            reason += (
                f" That is not enough for this path (one connection tops out at "
                f"{format_bits(normal * 8 / ctx.sizing.rtt_seconds)}). 'experimental' "
                "(scale 14) would allow more, but Microsoft warns it can slow common "
                "cases down, so SambaTune leaves normal; try it as a single measured change "
                "if you want."
            )
        return ctx.item("netsh-autotuninglevel", ref, current, "keep", None, reason)
    if level == "experimental":
        if need <= normal:
            return ctx.item(
                "netsh-autotuninglevel",
                ref,
                current,
                "set",
                "normal",
                f"{_need_text(ctx)}, which normal covers ({normal:,} bytes); "
                "Microsoft describes experimental as for research, able to decrease "
                "performance in common scenarios.",
                alternative=alternative,
            )
        return ctx.item(
            "netsh-autotuninglevel",
            ref,
            current,
            "keep",
            None,
            f"{_need_text(ctx)}, more than normal's {normal:,} bytes, so experimental "
            "is the only level that covers it.",
        )
    if need > allowed:
        return ctx.item(
            "netsh-autotuninglevel",
            ref,
            current,
            "set",
            "normal",
            f"{_need_text(ctx)}, but '{level}' lets a connection advertise at most "
            f"{allowed:,} bytes "
            f"({format_bits(allowed * 8 / ctx.sizing.rtt_seconds)} at "
            f"this RTT). normal (the default) allows {normal:,}.",
            alternative=alternative,
        )
    return ctx.item(
        "netsh-autotuninglevel",
        ref,
        current,
        "keep",
        None,
        f"{_need_text(ctx)}; '{level}' already allows {allowed:,} bytes. normal (the "
        "default) would allow more should the link get faster or farther.",
    )


def _modern_mtu_items(ctx: PlanContext) -> list[PlannedChange]:
    nic = ctx.interface
    target = ctx.mtu.target
    if nic is None or target is None:
        ctx.notes.append(f"MTU: {ctx.mtu.reason}")
        return []
    items: list[PlannedChange] = []
    if target > DEFAULT_MTU:
        jumbo_ref = AdapterPropertyRef(nic.name, "*JumboPacket")
        frame = target + 14
        if ctx.os.generation == "win8plus":
            current = ctx.read(jumbo_ref)
            have = None
            if current.state == ValueState.PRESENT and str(current.value).isdigit():
                have = int(str(current.value))
            if current.state == ValueState.ABSENT:
                ctx.warnings.append(
                    f"The driver of {nic.name} has no *JumboPacket property: "
                    f"it cannot carry {target}-byte packets."
                )
            elif have is not None and have >= frame:
                items.append(
                    ctx.item(
                        "adapter-jumbopacket",
                        jumbo_ref,
                        current,
                        "keep",
                        None,
                        f"The adapter already accepts {have}-byte frames.",
                        suffix=nic.name,
                    )
                )
            else:
                items.append(
                    ctx.item(
                        "adapter-jumbopacket",
                        jumbo_ref,
                        current,
                        "set",
                        str(frame),
                        f"An MTU of {target} needs {frame}-byte Ethernet frames (MTU + 14-byte "
                        "header). The valid values depend on the driver (some use 4088 or 9014); "
                        "SambaTune asks for exactly what the MTU needs.",
                        suffix=nic.name,
                    )
                )
        else:
            items.append(
                ctx.label(
                    "adapter-jumbopacket",
                    None,
                    f"Enable jumbo frames ({frame} bytes) in Device Manager first; "
                    "there is no cmdlet for it on this Windows.",
                    suffix=nic.name,
                )
            )
    ref = InterfaceMtuRef(nic.name)
    items.append(
        ctx.item(
            "netsh-interface-mtu",
            ref,
            ctx.read(ref),
            "set",
            target,
            ctx.mtu.reason,
            suffix=nic.name,
            alternative=(
                f"PowerShell: Set-NetIPInterface -InterfaceAlias "
                f"'{nic.name}' -AddressFamily IPv4 -NlMtuBytes {target}"
            )
            if ctx.os.generation == "win8plus"
            else "",
        )
    )
    return items


def _smb_client_items(ctx: PlanContext, need: int, win8: bool) -> list[PlannedChange]:
    items: list[PlannedChange] = []
    rtt = ctx.sizing.rtt_seconds

    ref = _registry(LANMAN, "DisableBandwidthThrottling")
    current = ctx.read(ref)
    if need > MAX_UNSCALED_WINDOW and _dword(current) != 1:
        items.append(
            ctx.item(
                "lanman-disablebandwidththrottling",
                ref,
                current,
                "set",
                RegValue.dword(1),
                f"{_need_text(ctx)}: more than 64 KB in flight, the kind of link where the SMB "
                "client's throttling holds requests back. Microsoft advises turning it off for "
                "high-latency links and slow large copies.",
                alternative="PowerShell: Set-SmbClientConfiguration -EnableBandwidthThrottling $false"
                if win8
                else "",
            )
        )
    else:
        items.append(
            ctx.item(
                "lanman-disablebandwidththrottling",
                ref,
                current,
                "keep",
                None,
                "Already off."
                if _dword(current) == 1
                else f"{_need_text(ctx)}: under 64 KB in flight, throttling has nothing to hold back.",
            )
        )

    ref = _registry(LANMAN, "DisableLargeMtu")
    current = ctx.read(ref)
    if ctx.os.profile in ("windows-vista", "windows-server-2008"):
        items.append(
            ctx.label(
                "lanman-disablelargemtu",
                ref,
                "Vista and Server 2008 speak SMB 2.0, which has no large MTU.",
                honour=Honour(
                    False, "SMB 2.0 (Vista/2008) has no large MTU; it came with SMB 2.1 in Windows 7."
                ),
            )
        )
    elif _dword(current) == 1 or (current.state in (ValueState.ABSENT, ValueState.UNKNOWN) and not win8):
        # Before Windows 8 nothing read states the default, so 7 gets it written down;
        # Windows 8's "absent means on" is never shown for it.
        items.append(
            ctx.item(
                "lanman-disablelargemtu",
                ref,
                current,
                "set",
                RegValue.dword(0),
                (
                    "DisableLargeMtu = 1 limits every SMB request to 64 KB. "
                    if _dword(current) == 1
                    else ("Absent" if current.state == ValueState.ABSENT else "Not read here")
                    + "; the default before Windows 8 is not stated in the sources read, "
                    "so the plan makes it explicit. "
                )
                + "0 allows up to 1 MB per request (SMB 2.1 and later), which Microsoft advises for "
                "slow large copies.",
                alternative="PowerShell: Set-SmbClientConfiguration -EnableLargeMtu $true" if win8 else "",
            )
        )
    else:
        items.append(
            ctx.item(
                "lanman-disablelargemtu",
                ref,
                current,
                "keep",
                None,
                ("Large MTU is on (absent means 0 from Windows 8 on)." if win8 else "Large MTU is on.")
                if current.state != ValueState.UNKNOWN
                else "On from Windows 8 unless someone turned it off; the current value "
                "could not be read here.",
            )
        )

    for name, want in HIGH_LATENCY_CACHES.items():
        catalog_id = f"lanman-{name.lower()}"
        ref = _registry(LANMAN, name)
        current = ctx.read(ref)
        have = _dword(current)
        if rtt < HIGH_LATENCY_SECONDS:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "keep",
                    None,
                    f"RTT {format_rtt(rtt)}: a metadata round trip is cheap on this "
                    "path, so the default cache size is fine.",
                )
            )
        elif have is not None and have >= want:
            items.append(ctx.item(catalog_id, ref, current, "keep", None, f"{have:,} entries already."))
        else:
            items.append(
                ctx.item(
                    catalog_id,
                    ref,
                    current,
                    "set",
                    RegValue.dword(want),
                    f"RTT {format_rtt(rtt)}: every metadata question the cache cannot answer costs a "
                    f"round trip. {want:,} is the value in Microsoft's client tuning example for "
                    "high-latency networks.",
                    alternative=f"PowerShell: Set-SmbClientConfiguration -{name} {want}" if win8 else "",
                )
            )

    for catalog_id, name, reason in (
        (
            "lanman-maxcmds",
            "MaxCmds",
            "Only SMB 1 uses it; Samba today speaks SMB 2 and 3, where credits replace it.",
        ),
        ("lanman-enablesecuritysignature", "EnableSecuritySignature", "Ignored for SMB 2 and later."),
    ):
        items.append(ctx.label(catalog_id, _registry(LANMAN, name), reason))
    # RequireSecuritySignature is in the security report there, read as Windows applies it.
    items += plan_smb_client_extras(ctx)
    assert all(entry(i.catalog_id) for i in items)
    return items
