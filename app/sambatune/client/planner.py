"""From measurements to a plan: gather (bandwidth, RTT, path MTU), size the window, ask the
OS-specific planner what to change, and label every item honoured or ignored.

``plan_events`` is the long-running form (it may time TCP connects and probe the path
MTU): it yields ``Progress`` events and finally ``PlanReady``. ``build_plan`` is
the pure part, from measurements already at hand, cheap enough for a live GUI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.client import catalog
from sambatune.client.catalog import Honour
from sambatune.client.measure import DEFAULT_RTT_PORTS, RttMeasurement, measure_rtt
from sambatune.client.minimums import minimum_note, raise_rule
from sambatune.client.nics import NetworkInterface, choose_interface
from sambatune.client.osinfo import OsInfo
from sambatune.client.plan import ClientPlan, MeasureLink, PlanAction, PlannedChange
from sambatune.client.pmtu import PathMtuResult, probe_path_mtu
from sambatune.client.settings import Observed, SettingRef, SettingValue, ValueState
from sambatune.client.system import ClientSystem
from sambatune.client.window import WindowSizing, size_window
from sambatune.errors import InvalidInput, SambaTuneError
from sambatune.json_fields import FieldsAsJson
from sambatune.progress import Progress
from sambatune.units import format_bits, format_seconds

DEFAULT_MTU = 1500
#: IPv4 (20) + TCP (20) headers: the MSS is the MTU minus this.
TCP_IP_HEADERS = 40
#: The IPv4 total-length field is 16 bits: no probe can be larger.
MAX_IPV4_PACKET = 65535


@dataclass
class PlanRequest:
    """What the user gave: entered values, or a server to measure, or both."""

    bandwidth_bps: float | None = None
    rtt_seconds: float | None = None
    server: str | None = None
    rtt_ports: tuple[int, ...] = DEFAULT_RTT_PORTS
    rtt_samples: int = 5
    #: Bits per second and where they came from, read from a benchmark result.
    benchmark_bandwidth: tuple[float, str] | None = None
    #: An MTU the user asks for (e.g. 9000 for jumbo frames); None = decide from the probe.
    mtu: int | None = None
    probe_mtu: bool = True
    interface: str | None = None
    #: Seconds to wait for each probe's answer; None = from the RTT (4 x RTT + 0.25 s,
    #: at most 2 s), so a black-hole search on a LAN takes seconds, not half a minute.
    probe_timeout: float | None = None
    #: What the server offers, from the survey's client audit when there is one:
    #: ``server multi channel support`` (None: not known) and ``server signing``.
    server_multichannel: bool | None = None
    server_signing: str | None = None


@dataclass(frozen=True)
class PlanReady:
    plan: ClientPlan


@dataclass
class Measurements:
    bandwidth_bps: float
    bandwidth_source: str
    rtt_seconds: float
    rtt_source: str
    rtt: RttMeasurement | None = None
    path_mtu: PathMtuResult | None = None
    requested_mtu: int | None = None
    server: str | None = None
    interface: NetworkInterface | None = None
    server_multichannel: bool | None = None
    server_signing: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "bandwidth_bps": self.bandwidth_bps,
            "bandwidth": format_bits(self.bandwidth_bps),
            "bandwidth_source": self.bandwidth_source,
            "rtt_seconds": self.rtt_seconds,
            "rtt": format_seconds(self.rtt_seconds),
            "rtt_source": self.rtt_source,
            "rtt_measurement": self.rtt.to_json() if self.rtt else None,
            "requested_mtu": self.requested_mtu,
            "server": self.server,
            "server_multichannel": self.server_multichannel,
            "server_signing": self.server_signing,
        }


@dataclass
class MtuDecision(FieldsAsJson):
    current: int | None
    target: int | None
    reason: str
    black_hole: bool = False

    @property
    def effective(self) -> int:
        """The MTU the plan's other numbers (MSS multiples) are computed with."""
        return self.target or self.current or DEFAULT_MTU


@dataclass
class PlanContext:
    """What every OS planner works from."""

    system: ClientSystem
    measurements: Measurements
    sizing: WindowSizing
    mtu: MtuDecision
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    after_apply: list[str] = field(default_factory=list)

    @property
    def os(self) -> OsInfo:
        return self.system.os

    @property
    def interface(self) -> NetworkInterface | None:
        return self.measurements.interface

    @property
    def mss(self) -> int:
        return self.mtu.effective - TCP_IP_HEADERS

    def read(self, ref: SettingRef) -> Observed:
        try:
            return self.system.read(ref)
        except SambaTuneError as error:
            return Observed.unknown(error.message)
        except OSError as error:
            return Observed.unknown(str(error))

    def item(
        self,
        catalog_id: str,
        ref: SettingRef | None,
        current: Observed,
        action: PlanAction,
        recommended: SettingValue | None,
        reason: str,
        *,
        suffix: str = "",
        honour: Honour | None = None,
        alternative: str = "",
        restart: str | None = None,
        measure: MeasureLink | None = None,
    ) -> PlannedChange:
        entry = catalog.entry(catalog_id)
        honour = honour or entry.honour(self.os.generation)
        if action in ("set", "delete") and not honour.honoured:
            # Never write a value this OS would ignore: that is how tweak scripts mislead.
            raise AssertionError(f"{catalog_id} is ignored on {self.os.name}; refusing to plan it")
        if action in ("set", "delete") and not entry.planned:
            raise AssertionError(f"{catalog_id} is shown and restored, never planned")
        if action == "set" and ref is not None and recommended is not None:
            recommended = ref.check_value(recommended)
            rule = raise_rule(ref)
            if rule is not None and current.state == ValueState.UNKNOWN:
                # Another machine: the target is a minimum the apply settles there.
                reason = f"{reason} {minimum_note(rule)}"
        operations = (
            self.system.operations(ref, recommended if action == "set" else None)
            if ref is not None and action in ("set", "delete")
            else []
        )
        return PlannedChange(
            id=catalog_id + (f":{suffix}" if suffix else ""),
            catalog_id=catalog_id,
            title=entry.title,
            ref=ref,
            current=current,
            action=action,
            recommended=recommended if action == "set" else None,
            honoured=honour.honoured,
            honoured_note=honour.evidence,
            restart=restart or entry.restart,
            restart_note=entry.restart_note,
            reason=reason,
            what=entry.what,
            operations=operations,
            alternative=alternative,
            sources=entry.sources,
            measure=measure,
        )

    def label(
        self,
        catalog_id: str,
        ref: SettingRef | None,
        reason: str,
        *,
        suffix: str = "",
        honour: Honour | None = None,
    ) -> PlannedChange:
        """An item shown for its honoured/ignored label only; nothing is changed."""
        current = self.read(ref) if ref is not None else Observed.unknown("not read")
        return self.item(catalog_id, ref, current, "none", None, reason, suffix=suffix, honour=honour)


class MissingPlanInput(InvalidInput):
    """A figure the plan needs and could not find; ``field`` names the input it belongs in.

    The message speaks of the inputs, not of command-line flags (the GUI shows it next to
    the field); ``details`` names the flags for the command line.
    """

    def __init__(self, field: str, message: str, flags: str) -> None:
        super().__init__(message, details=flags)
        self.field = field


def decide_mtu(
    interface: NetworkInterface | None, probe: PathMtuResult | None, requested: int | None
) -> MtuDecision:
    current = interface.mtu if interface else None
    if requested is not None:
        if requested == current:
            return MtuDecision(current, None, f"The MTU is already {requested}, as asked.")
        reason = f"You asked for an MTU of {requested}."
        if requested > DEFAULT_MTU:
            reason += (
                " Jumbo frames only help if every hop carries them: the switch ports and "
                "the server's interface must be set to at least this size too, or large "
                "packets are dropped. A probe cannot confirm sizes above this computer's "
                "current MTU, so check the path after applying."
            )
        elif current and requested < current:
            reason += " A smaller MTU also applies to every other destination reached through this interface."
        return MtuDecision(current, requested, reason)
    if interface is not None and interface.example:
        # A probe from here measures this computer's path, not the other machine's.
        return MtuDecision(
            current,
            None,
            "This plan is for another machine: its path MTU can only be probed from there "
            "(or enter its MTU), so the MTU is left as it is.",
        )
    if probe is None:
        return MtuDecision(current, None, "No server was given to probe, so the MTU is left as it is.")
    if not probe.probed or probe.path_mtu is None:
        return MtuDecision(current, None, probe.note or "The path MTU was not probed.")
    # An IPv4 packet is at most 65,535 bytes, so that is full size on a 65,536-byte loopback.
    if current is None or probe.path_mtu >= min(current, MAX_IPV4_PACKET):
        return MtuDecision(
            current, None, f"Full-size packets ({probe.path_mtu} bytes) reach the server; nothing to change."
        )
    if probe.black_hole:
        return MtuDecision(
            current,
            probe.path_mtu,
            f"Packets larger than {probe.path_mtu} bytes silently vanish on the way to the server "
            "(no 'fragmentation needed' comes back), so TCP connections stall as soon as they send "
            f"full {current}-byte packets. Lowering this interface's MTU to {probe.path_mtu} "
            "avoids "
            "the black hole; it also applies to other destinations on this interface.",
            black_hole=True,
        )
    return MtuDecision(
        current,
        None,
        f"The path carries at most {probe.path_mtu} bytes, but the network says so "
        "('fragmentation needed' arrives), and path-MTU discovery adapts each connection. "
        "Lowering the interface MTU would shrink packets to every destination for no gain.",
    )


def build_plan(system: ClientSystem, measurements: Measurements) -> ClientPlan:
    """The plan for this system from measurements already taken (no network traffic)."""
    interface = measurements.interface
    sizing = size_window(measurements.bandwidth_bps, measurements.rtt_seconds)
    decision = decide_mtu(interface, measurements.path_mtu, measurements.requested_mtu)
    context = PlanContext(system, measurements, sizing, decision)
    if interface is not None and interface.example:
        context.warnings.append(
            f"The interface {interface.name!r} is an example: this plan is for another machine. "
            "Interface names, GUIDs and MTUs must be checked there."
        )
    if sizing.capped:
        context.warnings.append(
            "The bandwidth-delay product is larger than any TCP window (65,535 x 2^14 = "
            "1,073,725,440 bytes, RFC 7323's 1 GiB bound): one connection cannot fill this path; "
            "use several (SMB multichannel) instead."
        )
    family = system.os.family
    if family == "windows":
        from sambatune.client.windows_plan import plan_windows

        changes = plan_windows(context)
    elif family == "linux":
        from sambatune.client.posix_plan import plan_linux

        changes = plan_linux(context)
    elif family == "macos":
        from sambatune.client.posix_plan import plan_macos

        changes = plan_macos(context)
    else:  # pragma: no cover - OsInfo only has the three families
        raise InvalidInput(f"No planner for {system.os.name}.")
    changes += plan_smb_client(context)
    return ClientPlan(
        os=system.os,
        changes=changes,
        window=sizing,
        interface=interface,
        measurements=measurements.to_json(),
        mtu={
            "decision": decision.to_json(),
            "probe": measurements.path_mtu.to_json() if measurements.path_mtu else None,
        },
        notes=context.notes,
        warnings=context.warnings,
        after_apply=context.after_apply,
    )


def plan_smb_client(ctx: PlanContext) -> list[PlannedChange]:
    """The operating system's own SMB client: cifs mounts (Linux), nsmb.conf (macOS). Windows'
    SMB client values are LanmanWorkstation items of the Windows plan (windows_plan.py)."""
    family = ctx.os.family
    if family == "linux":
        from sambatune.client.cifs_plan import plan_cifs_mounts

        return plan_cifs_mounts(ctx)
    if family == "macos":
        from sambatune.client.nsmb_plan import plan_nsmb

        return plan_nsmb(ctx)
    return []


def plan_events(
    system: ClientSystem, request: PlanRequest, cancel: CancelToken | None = None
) -> Iterator[Progress | PlanReady]:
    """Measure what the request leaves open, then plan. Yields progress, then the plan."""
    cancel = cancel or CancelToken()
    yield Progress(0.05, "reading this computer's network interfaces")
    try:
        interfaces = system.interfaces()
    except SambaTuneError as error:
        interfaces = []
        yield Progress(None, f"cannot list interfaces: {error.message}")
    interface = choose_interface(interfaces, name=request.interface, server=request.server)

    rtt: RttMeasurement | None = None
    if request.rtt_seconds is not None:
        rtt_seconds, rtt_source = request.rtt_seconds, "entered"
    elif request.server:
        yield Progress(0.15, f"timing TCP connects to {request.server}")
        progress: list[str] = []
        rtt = measure_rtt(
            request.server, request.rtt_ports, request.rtt_samples, cancel=cancel, on_progress=progress.append
        )
        for message in progress:
            yield Progress(0.3, message)
        rtt_seconds = rtt.median
        rtt_source = f"median of {len(rtt.samples)} TCP connects to {rtt.address} port {rtt.port}" + (
            " (refused: the reset still costs one round trip)" if rtt.answer == "refused" else ""
        )
    else:
        raise MissingPlanInput(
            "rtt",
            "Enter the round-trip time to the server, or choose a server to measure it to.",
            "command line: --rtt 20ms, or --server HOST",
        )

    if request.bandwidth_bps is not None:
        bandwidth, bandwidth_source = request.bandwidth_bps, "entered"
    elif request.benchmark_bandwidth is not None:
        bandwidth, where = request.benchmark_bandwidth
        bandwidth_source = f"benchmark result ({where})"
    elif interface is not None and interface.speed_bps:
        bandwidth = interface.speed_bps
        bandwidth_source = (
            f"link speed of {interface.name} (an upper bound: the real path may "
            "be slower; a network benchmark gives a truer figure)"
        )
    else:
        raise MissingPlanInput(
            "bandwidth",
            "Enter the bandwidth, or take it from a benchmark result: the link "
            "speed of this computer's interface is not known.",
            "command line: --bandwidth 1gbit, or --bandwidth-from FILE",
        )

    probe: PathMtuResult | None = None
    example = interface is not None and interface.example
    if request.server and request.probe_mtu and request.mtu is None and not example:
        yield Progress(0.5, f"probing the path MTU to {request.server}")
        messages: list[str] = []
        probe = probe_path_mtu(
            request.server,
            interface.mtu if interface else None,
            timeout=request.probe_timeout or min(2.0, 4 * rtt_seconds + 0.25),
            cancel=cancel,
            on_progress=messages.append,
        )
        for message in messages:
            yield Progress(0.7, message)

    yield Progress(0.9, "planning")
    plan = build_plan(
        system,
        Measurements(
            bandwidth_bps=bandwidth,
            bandwidth_source=bandwidth_source,
            rtt_seconds=rtt_seconds,
            rtt_source=rtt_source,
            rtt=rtt,
            path_mtu=probe,
            requested_mtu=request.mtu,
            server=request.server,
            interface=interface,
            server_multichannel=request.server_multichannel,
            server_signing=request.server_signing,
        ),
    )
    yield PlanReady(plan)


def make_plan(
    system: ClientSystem,
    request: PlanRequest,
    cancel: CancelToken | None = None,
    report: Callable[[Progress], None] = lambda progress: None,
) -> ClientPlan:
    """:func:`plan_events` to its plan, its progress given to ``report``."""
    for event in plan_events(system, request, cancel):
        if isinstance(event, PlanReady):
            return event.plan
        report(event)
    raise AssertionError("plan_events ended without a plan")  # pragma: no cover
