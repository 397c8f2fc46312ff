"""Which layer limits a Samba server: the book's bottleneck table, fed with measured numbers.

Using Samba (1999, appendix B) follows the data from the disk, through the CPU, to
the network, gives each layer a ceiling in KB/s, and says the server can go no
faster than the smallest. We keep that method and replace its 1999 tables with
what the benchmark agents measure on the server in front of us:

* disk: sequential read or write throughput, whichever the transfer direction uses;
* file operations: measured metadata operations per second times 8 KiB, the book's
  rule for its CPU row ("file I/O operations per second x 8K average request").
  That row only limits small-file work today: SMB2/3 moves up to 8 MiB per
  request (Samba's ``smb2 max read``/``write`` default since 4.2), so a large copy
  needs few operations;
* network: raw TCP throughput between the two machines, or, when it was not
  measured, what the link speed can carry (see ``tcp_payload_share``);
* SMB: the throughput of a real SMB transfer, compared with the smallest ceiling.

The book found Samba at 68-80% of FTP over the same path. FTP was a stand-in for
"the path without Samba's own work", so we compare SMB with the smallest measured
ceiling instead. With SMB2/3 that overhead is small: the SMB2 header is 64 bytes
per request of up to 8 MiB, and credits keep many requests in flight, so a healthy
server reaches 85% or more of the ceiling. Below 70% (the book's own low end, which
was normal for SMB1 in 1999) Samba's processing, or the CPU doing it, is the limit.
These two thresholds are our judgement from the protocol, not a published figure;
the benchmarks let the user check them on their own server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Any, Literal, NamedTuple

from sambatune.errors import InvalidInput
from sambatune.units import format_bits, format_bytes, format_percent, format_rate

Direction = Literal["read", "write"]
Workload = Literal["large files", "small files"]
Layer = Literal["disk", "network", "cpu", "smb processing", "unknown"]

#: The book's average request: "8KB I/O operations" in its disk and CPU tables.
BOOK_REQUEST_BYTES = 8 * 1024
SMB_HEALTHY_SHARE = 0.85
SMB_WELL_BELOW_SHARE = 0.70
#: A core this busy (median of the samples taken during the SMB run) is saturated.
CPU_SATURATED_PERCENT = 90.0
#: SMB faster than a ceiling by more than this means the two tests did not measure
#: the same path (usually: the SMB read came from the server's page cache).
FASTER_THAN_CEILING = 1.10
#: Runs whose fastest is more than this many times their slowest did not meet one
#: steady ceiling: something came and went while they ran.
UNSTEADY_SPREAD = 2.0
#: The round trip a fixed socket buffer is judged at when none was measured: a LAN's.
LAN_ROUND_TRIP_S = 0.001
#: What smbd's set_socket_options() reads as a buffer size (lib/util/util_net.c).
BUFFER_FLAGS = ("SO_SNDBUF", "SO_RCVBUF")


def tcp_payload_share(mtu: int = 1500) -> float:
    """Share of an Ethernet link's bit rate that TCP payload can use.

    Per frame: IPv4 (20) + TCP (20) + TCP timestamps (12) come out of the MTU, and
    Ethernet adds header (14), FCS (4), preamble (8) and the inter-frame gap (12).
    At MTU 1500: 1448 / 1538 = 94.1% (1 Gbit/s -> 117.7 MB/s); at 9000: 99.0%. The
    book's "10 Mb/s Ethernet handles around 1100 KB/s" is 88% of the same line rate.
    """
    if mtu < 576:
        raise InvalidInput(f"An MTU of {mtu} bytes is below the IPv4 minimum of 576.")
    return (mtu - 52) / (mtu + 38)


@dataclass(frozen=True)
class LayerRow:
    """One line of the bottleneck table."""

    name: str
    #: "disk", "cpu", "network" or "smb".
    kind: str
    ceiling_bytes_per_s: float
    ceiling_bits_per_s: float
    #: Of the link's raw bit rate, as the book's "% of 10 Mb/s" column.
    percent_of_link: float | None
    #: How the figure was obtained.
    source: str
    #: Part of the minimum for this direction and workload.
    counted: bool
    #: The counted layer with the smallest ceiling (the book's "total throughput").
    limits: bool

    @property
    def ceiling_mb_per_s(self) -> float:
        return self.ceiling_bytes_per_s / 1e6

    @property
    def ceiling_mbit_per_s(self) -> float:
        return self.ceiling_bits_per_s / 1e6

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ceiling_mb_per_s"] = self.ceiling_mb_per_s
        data["ceiling_mbit_per_s"] = self.ceiling_mbit_per_s
        return data


@dataclass(frozen=True)
class BottleneckReport:
    limiting: Layer
    #: Why: one or two plain sentences with the numbers.
    reason: str
    rows: tuple[LayerRow, ...]
    #: The smallest counted ceiling: what the server should reach (the book's "total throughput").
    expected_bytes_per_s: float | None
    #: SMB throughput / expected (the book's "Samba vs FTP"); None without an SMB measurement.
    smb_vs_raw: float | None
    #: What that ratio means today.
    smb_vs_raw_meaning: str | None
    advice: tuple[str, ...]
    direction: Direction
    workload: Workload
    #: The table row the verdict names: the slowest layer when SMB comes close to it,
    #: the SMB row when Samba's side holds it back; None while a layer is missing.
    limit_row: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "limiting": self.limiting,
            "limit_row": self.limit_row,
            "reason": self.reason,
            "rows": [row.to_json() for row in self.rows],
            "expected_bytes_per_s": _json_number(self.expected_bytes_per_s),
            "smb_vs_raw": _json_number(self.smb_vs_raw),
            "smb_vs_raw_meaning": self.smb_vs_raw_meaning,
            "advice": list(self.advice),
            "direction": self.direction,
            "workload": self.workload,
        }


def _json_number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _checked_rate(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    return _required_rate(value, what)


def _required_rate(value: float, what: str) -> float:
    if not _is_number(value):
        raise InvalidInput(f"The {what} is not a usable number: {value!r}.")
    if value <= 0:
        raise InvalidInput(
            f"The {what} must be above zero, not {value}.",
            "A measurement of zero means the test failed; repeat it or leave the figure out.",
        )
    return float(value)


_ADVICE = {
    "disk": (
        "Tuning smb.conf will not make the disk faster: look at the storage first.",
        "More or faster disks help: SSDs, or striping (RAID 10) across several disks; RAID 5 and 6 "
        "pay for every small write with extra reads and writes.",
        "For repeated reads, memory for the page cache is the cheapest speed-up.",
    ),
    "network": (
        "Samba cannot go faster than the wire: check the negotiated speed and duplex on both ends "
        "(ethtool on Linux), the cables and the switch ports.",
        "The way up is a faster link (2.5, 10 Gbit/s) or SMB multichannel over several links "
        "(server multi channel support, on by default since Samba 4.15 on Linux).",
        "Do not set SO_SNDBUF or SO_RCVBUF in socket options: a fixed size switches off Linux's "
        "automatic TCP buffer tuning and usually makes things slower.",
    ),
    "smb processing": (
        "Look at the work Samba does for every request: log level should be 0 or 1 in production.",
        "Signing and encryption cost time for every byte and switch off zero-copy sendfile/recvfile; "
        "check server signing and smb encrypt, and whether the share really needs them.",
        "sync always, strict sync on clients that ask for sync, and many hide/veto file patterns slow "
        "things down; an SMB1 client (NT1) cannot use large requests at all.",
    ),
    "file operations": (
        "Small-file work is limited by how many file operations per second the server completes: "
        "a fast CPU core and low-latency storage (SSD) help most.",
        "Directories with tens of thousands of files slow every name lookup; the directory-scaling "
        "test shows whether this server suffers from it.",
    ),
    "cpu": (
        "Each client connection is served by one smbd process, so one core's speed caps one client.",
        "Signing and encryption are the usual CPU cost; a CPU with AES instructions does them far faster.",
        "More clients spread over more cores; a single client can use more cores with SMB multichannel.",
    ),
}


class _Ceiling(NamedTuple):
    name: str
    kind: str
    rate: float
    source: str
    counted: bool


def _ceiling_rows(
    disk_read: float | None,
    disk_write: float | None,
    file_ops: float | None,
    network: float | None,
    link_bits: float | None,
    mtu: int,
    direction: Direction,
    workload: Workload,
) -> list[_Ceiling]:
    """Every layer we have a figure for."""
    rows = []
    if disk_read is not None:
        rows.append(_Ceiling("disk read", "disk", disk_read, "measured", direction == "read"))
    if disk_write is not None:
        rows.append(_Ceiling("disk write", "disk", disk_write, "measured", direction == "write"))
    if file_ops is not None:
        rows.append(
            _Ceiling(
                "file operations",
                "cpu",
                file_ops * BOOK_REQUEST_BYTES,
                "measured ops/s × 8 KiB",
                workload == "small files",
            )
        )
    carried = link_bits / 8 * tcp_payload_share(mtu) if link_bits is not None else None
    # A raw TCP figure above what the link can carry did not cross that link (a
    # loopback test, another interface): then the link is the network's ceiling.
    beyond_link = network is not None and carried is not None and network > carried * FASTER_THAN_CEILING
    if network is not None:
        source = "measured raw TCP, not across this link" if beyond_link else "measured raw TCP"
        rows.append(_Ceiling("network", "network", network, source, not beyond_link))
    if carried is not None:
        source = f"link speed, TCP payload at MTU {mtu}"
        rows.append(_Ceiling("link", "network", carried, source, network is None or beyond_link))
    return rows


def find_bottleneck(
    *,
    disk_read_bytes_per_s: float | None = None,
    disk_write_bytes_per_s: float | None = None,
    file_ops_per_s: float | None = None,
    network_bytes_per_s: float | None = None,
    smb_bytes_per_s: float | None = None,
    cpu_busy_percent: Sequence[float] = (),
    link_bits_per_s: float | None = None,
    mtu: int = 1500,
    direction: Direction = "read",
    workload: Workload = "large files",
    smb_runs: Sequence[float] = (),
    socket_options: str | None = None,
) -> BottleneckReport:
    """Name the layer that limits transfers in ``direction`` ("read": clients read from the server).

    ``cpu_busy_percent`` are samples (0-100) of the busiest core, or of smbd's own
    CPU use, taken while the SMB transfer ran. ``smb_runs`` are the SMB test's
    counted runs (bytes/s), whose spread the verdict reports; ``socket_options`` is
    the ``socket options`` value of the smb.conf the SMB test ran with, named in the
    advice when it fixes the buffer sizes.
    """
    disk_read = _checked_rate(disk_read_bytes_per_s, "disk read throughput")
    disk_write = _checked_rate(disk_write_bytes_per_s, "disk write throughput")
    file_ops = _checked_rate(file_ops_per_s, "file operation rate")
    network = _checked_rate(network_bytes_per_s, "network throughput")
    smb = _checked_rate(smb_bytes_per_s, "SMB throughput")
    link_bits = _checked_rate(link_bits_per_s, "link speed")
    for sample in cpu_busy_percent:
        if not (_is_number(sample) and 0 <= sample <= 100):
            raise InvalidInput(f"A CPU busy sample must be a percentage from 0 to 100, not {sample!r}.")
    if direction not in ("read", "write"):
        raise InvalidInput(f"The direction must be read or write, not {direction!r}.")
    if workload not in ("large files", "small files"):
        raise InvalidInput(f"The workload must be 'large files' or 'small files', not {workload!r}.")

    raw = _ceiling_rows(disk_read, disk_write, file_ops, network, link_bits, mtu, direction, workload)
    counted = [row for row in raw if row.counted]
    limiting_row = min(counted, key=lambda row: row.rate) if counted else None
    expected = limiting_row.rate if limiting_row else None
    line_rate = link_bits / 8 if link_bits else None

    def table_row(name: str, kind: str, rate: float, source: str, is_counted: bool) -> LayerRow:
        return LayerRow(
            name=name,
            kind=kind,
            ceiling_bytes_per_s=rate,
            ceiling_bits_per_s=rate * 8,
            percent_of_link=rate / line_rate * 100 if line_rate else None,
            source=source,
            counted=is_counted,
            limits=limiting_row is not None and name == limiting_row.name,
        )

    rows = [table_row(*row) for row in raw]
    if smb is not None:
        rows.append(table_row(f"SMB {direction}", "smb", smb, "measured", False))

    smb_share = smb / expected if smb is not None and expected else None
    limiting, reason = _verdict(raw, counted, limiting_row, smb, smb_share, cpu_busy_percent, direction)
    runs = [float(r) for r in smb_runs if _is_number(r) and r > 0]
    if smb is not None and expected and len(runs) >= 2 and max(runs) > min(runs) * UNSTEADY_SPREAD:
        reason += " " + _spread_sentence(runs, expected, limiting)
    limit_row = None
    if limiting in ("smb processing", "cpu") and smb is not None:
        limit_row = f"SMB {direction}"
    elif limiting != "unknown" and limiting_row is not None:
        limit_row = limiting_row.name
    advice_key = "file operations" if limiting_row and limiting_row.name == "file operations" else limiting
    advice = list(_ADVICE.get(advice_key, ()))
    if smb_share is not None and SMB_WELL_BELOW_SHARE <= smb_share < SMB_HEALTHY_SHARE:
        advice.append(_ADVICE["smb processing"][0])
    if limiting == "unknown":
        advice = [_next_measurement(raw, smb, direction)]
    slowest_share = min(runs) / expected if runs and expected else None
    slow_smb = (smb_share is not None and smb_share < SMB_HEALTHY_SHARE) or (
        slowest_share is not None and slowest_share < SMB_WELL_BELOW_SHARE
    )
    fixed = _fixed_buffers(socket_options)
    if fixed is not None and (slow_smb or limiting == "network"):
        advice.insert(0, fixed)
    if network is not None and link_bits is not None:
        share = network / (link_bits / 8 * tcp_payload_share(mtu))
        if share > FASTER_THAN_CEILING:
            advice.insert(
                0,
                f"Raw TCP ({format_rate(network)}) is faster than a {format_bits(link_bits)} link can carry: "
                "the network test did not cross that link (loopback, or another interface).",
            )
        elif share < SMB_WELL_BELOW_SHARE:
            advice.insert(
                0,
                f"Raw TCP reaches only {_share(share)} of what the {format_bits(link_bits)} "
                "link can carry: look at the network itself first (duplex, cable, switch, or a TCP window "
                "too small for the round-trip time; see the client tuning page).",
            )
    return BottleneckReport(
        limiting=limiting,
        reason=reason,
        rows=tuple(rows),
        expected_bytes_per_s=expected,
        smb_vs_raw=smb_share,
        smb_vs_raw_meaning=_smb_share_meaning(smb_share),
        advice=tuple(advice),
        direction=direction,
        workload=workload,
        limit_row=limit_row,
    )


def row_mark(report: BottleneckReport, row: LayerRow) -> str:
    """What a table row is to the verdict, the same in every view: ``limits`` on the row
    it names, ``slowest layer`` on the smallest ceiling when that is not the limit
    (``slowest so far`` while a layer is still unmeasured), else nothing."""
    if row.name == report.limit_row:
        return "limits"
    if row.limits:
        return "slowest layer" if report.limiting != "unknown" else "slowest so far"
    return ""


def percent_digits(percent: float) -> int:
    """Digits for a share of the link: 1.5 MB/s of 10 Gbit/s is 0.1%, not 0."""
    return 1 if percent < 10 else 0


def _share(share: float) -> str:
    """A share in per cent with the digits it needs: 0.15%, 3.2%, 85% (never "0%")."""
    return format_percent(share, 0 if share >= 0.1 else 1 if share >= 0.01 else 2)


def _spread_sentence(runs: Sequence[float], ceiling: float, limiting: Layer) -> str:
    slowest, fastest = min(runs), max(runs)
    text = f"SMB's runs ranged from {format_rate(slowest)} to {format_rate(fastest)}"
    if limiting in ("disk", "network") and slowest / ceiling < SMB_WELL_BELOW_SHARE:
        return (
            f"{text}: the slowest reached only {_share(slowest / ceiling)} of that layer, "
            "which a steady ceiling does not explain; something else held those runs back."
        )
    return f"{text}: a steady ceiling does not swing like that, so look for what came and went."


def fixed_buffer_bytes(socket_options: str | None) -> int | None:
    """The smallest SO_SNDBUF/SO_RCVBUF a ``socket options`` value sets, or None.

    smbd reads each number with atoi: leading digits, no K/M suffix (``64K`` is 64).
    (sambatune.conf.values.parse_decimal is the full atoi; the engines do not import
    each other, and a buffer size needs only the digits.)
    """
    if not socket_options:
        return None
    sizes = []
    for token in socket_options.replace(",", " ").split():
        name, _, number = token.partition("=")
        digits = re.match(r"\s*\+?(\d+)", number)
        if name.strip().upper() in BUFFER_FLAGS and digits and int(digits.group(1)) > 0:
            sizes.append(int(digits.group(1)))
    return min(sizes) if sizes else None


def _fixed_buffers(socket_options: str | None) -> str | None:
    size = fixed_buffer_bytes(socket_options)
    if size is None or socket_options is None:
        return None
    cap = format_rate(size / LAN_ROUND_TRIP_S)
    return (
        f"The smb.conf these figures ran with fixes smbd's socket buffers (socket options = "
        f"{' '.join(socket_options.split())}): with {format_bytes(size)} a connection keeps at most "
        f"that much data in flight, about {cap} at a 1 ms round trip, and Linux's automatic "
        "buffer sizing is off. Remove SO_SNDBUF and SO_RCVBUF from socket options, change "
        "nothing else, and measure again."
    )


def _verdict(
    raw: Sequence[_Ceiling],
    counted: Sequence[_Ceiling],
    limiting_row: _Ceiling | None,
    smb: float | None,
    smb_share: float | None,
    cpu_busy_percent: Sequence[float],
    direction: Direction,
) -> tuple[Layer, str]:
    kinds = {row.kind for row in counted}
    needed = ((f"disk {direction}", "disk"), ("network", "network"))
    missing = [name for name, kind in needed if kind not in kinds]
    if limiting_row is None or missing:
        have = ", ".join(row.name for row in raw) or "nothing"
        return "unknown", f"Measured so far: {have}; the {' and '.join(missing)} throughput is still needed."
    kind = limiting_row.kind
    slowest = f"the {limiting_row.name} ({format_rate(limiting_row.rate)})"
    if smb is None or smb_share is None:
        return _layer_of(kind), (
            f"The slowest layer is {slowest}: no faster transfer is possible until it changes."
        )
    if smb_share > FASTER_THAN_CEILING:
        return "unknown", (
            f"SMB ({format_rate(smb)}) ran faster than {slowest}, so the two tests did not measure the same "
            "path: the SMB data probably came from the server's memory. Repeat the SMB test with a file "
            "larger than the server's RAM."
        )
    if smb_share >= SMB_WELL_BELOW_SHARE:
        return _layer_of(kind), (
            f"SMB reaches {_share(smb_share)} of {slowest}, the slowest layer: that layer is the limit."
        )
    busy = sorted(cpu_busy_percent)
    busy_median = busy[len(busy) // 2] if busy else None
    below = f"SMB reaches only {_share(smb_share)} of {slowest}, the slowest layer"
    if busy_median is not None and busy_median >= CPU_SATURATED_PERCENT:
        return "cpu", (
            f"{below}, and one CPU core was {busy_median:.0f}% busy meanwhile: the CPU is the limit."
        )
    if busy_median is not None:
        return "smb processing", (
            f"{below}, and no CPU core was saturated ({busy_median:.0f}% busy): Samba's handling of "
            "requests, or its configuration, is the limit."
        )
    return "smb processing", f"{below}: Samba's processing, or the CPU doing it, is the limit."


def _layer_of(kind: str) -> Layer:
    return "cpu" if kind == "cpu" else "disk" if kind == "disk" else "network"


def _next_measurement(raw: Sequence[_Ceiling], smb: float | None, direction: Direction) -> str:
    kinds = {row.kind for row in raw if row.counted}
    if "disk" not in kinds:
        return f"Run the disk test ({direction}) on the server."
    if "network" not in kinds:
        return "Run the network test, or survey the server so the link speed is known."
    if smb is not None:
        return (
            "Repeat the SMB test with a file larger than the server's memory, or drop the page cache first."
        )
    return "Run the SMB test to see how close Samba comes to the slowest layer."


def _smb_share_meaning(share: float | None) -> str | None:
    if share is None:
        return None
    shown = _share(share)
    if share > FASTER_THAN_CEILING:
        return f"SMB at {shown} of the slowest layer: the tests did not measure the same path (cache)."
    if share >= SMB_HEALTHY_SHARE:
        return f"SMB at {shown} of the slowest layer: healthy; SMB2/3 should come this close."
    if share >= SMB_WELL_BELOW_SHARE:
        return (
            f"SMB at {shown} of the slowest layer: the range the book called normal in 1999 (68-80%), "
            "but SMB2/3 on a current Samba usually reaches 85% or more; some overhead is left to find."
        )
    return f"SMB at {shown} of the slowest layer: well below what the measured layers allow."


@dataclass(frozen=True)
class ClientsEstimate:
    clients: int
    ceiling_bytes_per_s: float
    per_client_bytes_per_s: float
    #: Share of the ceiling kept free.
    headroom: float
    usable_bytes_per_s: float
    assumption: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


#: Keep 30% spare. A shared resource's waiting time grows like 1 / (1 - load) (M/M/1
#: queue): at 70% load a request waits about 3 times its own service time, at 90%
#: 10 times; users notice the steep part, so sizing stops at 70%.
DEFAULT_HEADROOM = 0.3


def clients_supported(
    ceiling_bytes_per_s: float, per_client_bytes_per_s: float, *, headroom: float = DEFAULT_HEADROOM
) -> ClientsEstimate:
    """How many clients a server can serve when each moves ``per_client_bytes_per_s`` on average.

    The book's example: office clients doing 2.3 transfers/s of 12 KB each ask for
    27.6 KB/s, so a server that delivers 1 MB/s carries 36 of them (with no headroom;
    the book's 36 x 2.3 x 12 KB is 994 KB/s, which it rounds to 1 MB/s).
    """
    ceiling = _required_rate(ceiling_bytes_per_s, "server's throughput ceiling")
    demand = _required_rate(per_client_bytes_per_s, "throughput each client needs")
    if not (isinstance(headroom, Real) and 0.0 <= headroom < 1.0):
        raise InvalidInput(f"The headroom must be a share from 0 up to (not including) 1, not {headroom!r}.")
    usable = ceiling * (1.0 - headroom)
    # A hair of tolerance so that 0.7 * 100 / 7 counts as 10, not 9.999999.
    clients = math.floor(usable / demand * (1 + 1e-12))
    assumption = (
        f"Assumes each client moves {format_rate(demand)} on average, all at the same time, and that "
        f"{format_percent(headroom, 0)} of the server's {format_rate(ceiling)} is kept spare for bursts: "
        f"{format_rate(usable)} / {format_rate(demand)} = {clients} clients. Clients that are mostly idle "
        "allow more; measure what a busy client really moves before buying hardware."
    )
    return ClientsEstimate(
        clients=clients,
        ceiling_bytes_per_s=ceiling,
        per_client_bytes_per_s=demand,
        headroom=float(headroom),
        usable_bytes_per_s=usable,
        assumption=assumption,
    )


def per_client_demand(transfers_per_second: float, bytes_per_transfer: float) -> float:
    """Bytes/s one client asks for, the book's way (2.3 transfers/s x 12 KB)."""
    rate = _required_rate(transfers_per_second, "number of transfers per second")
    size = _required_rate(bytes_per_transfer, "size of a transfer")
    return rate * size


def demand_from_existing_server(ceiling_bytes_per_s: float, clients_it_serves_well: int) -> float:
    """Bytes/s per client inferred from a server that is "about right" with so many clients.

    The book's example: a server limited to 375 KB/s that serves 25 clients well
    means each client asks for about 15 KB/s.
    """
    ceiling = _required_rate(ceiling_bytes_per_s, "server's throughput ceiling")
    if isinstance(clients_it_serves_well, bool) or not isinstance(clients_it_serves_well, int):
        raise InvalidInput(f"The number of clients must be a whole number, not {clients_it_serves_well!r}.")
    if clients_it_serves_well < 1:
        raise InvalidInput("The number of clients must be at least 1.")
    return ceiling / clients_it_serves_well
