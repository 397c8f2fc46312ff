"""Everything one advice run judges: the configuration, the server, the measurements."""

from __future__ import annotations

from dataclasses import dataclass, field

from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.knowledge import ParameterKnowledge, Version, load_knowledge, version_text
from sambatune.advisor.measurements import Measurements
from sambatune.advisor.server_facts import Nic, ServerFacts
from sambatune.bench.bottleneck import Direction, LayerRow, find_bottleneck
from sambatune.units import format_bits, format_rate

#: The release the parameter knowledge was checked against (testparm of Debian 12). A
#: server whose version is unknown is judged as this one, and the findings say so.
REFERENCE_VERSION: Version = (4, 17, 12)


@dataclass(frozen=True)
class AdvisorInput:
    config: ConfigView
    server: ServerFacts = field(default_factory=ServerFacts)
    measurements: Measurements = field(default_factory=Measurements)
    knowledge: ParameterKnowledge = field(default_factory=load_knowledge)
    #: The stored benchmark sessions ``measurements`` took figures from.
    recorded_sessions: tuple[int, ...] = ()

    @property
    def version(self) -> Version:
        return self.server.samba_version or REFERENCE_VERSION

    @property
    def version_known(self) -> bool:
        return self.server.samba_version is not None

    def at_least(self, version: Version) -> bool:
        return self.version >= version

    def version_label(self) -> str:
        if self.version_known:
            return f"Samba {version_text(self.version)}"
        return (
            f"an unknown Samba version (judged as {version_text(REFERENCE_VERSION)}, "
            "the release SambaTune's parameter knowledge was checked against)"
        )

    def sources(self, *parameters: str) -> tuple[str, ...]:
        return self.knowledge.sources(*parameters)

    def _fastest_link(self) -> Nic | None:
        linked = [n for n in self.server.active_physical_nics if n.speed_mbit]
        return max(linked, key=lambda n: n.speed_mbit or 0) if linked else None

    def slowest_layer(self, direction: Direction) -> LayerRow | None:
        """The layer that limits transfers in ``direction``: the bottleneck table
        (:func:`sambatune.bench.bottleneck.find_bottleneck`) fed with the measured disk and
        network figures and the fastest active link; None when none of them is known."""
        throughput = self.measurements.throughput
        disk = throughput.disk_read if direction == "read" else throughput.disk_write
        fastest = self._fastest_link()
        if disk is None and throughput.network is None and fastest is None:
            return None
        mtu = fastest.mtu if fastest is not None and fastest.mtu and fastest.mtu >= 576 else 1500
        report = find_bottleneck(
            disk_read_bytes_per_s=(
                throughput.disk_read.mean_bytes_per_second if throughput.disk_read else None
            ),
            disk_write_bytes_per_s=(
                throughput.disk_write.mean_bytes_per_second if throughput.disk_write else None
            ),
            network_bytes_per_s=(throughput.network.mean_bytes_per_second if throughput.network else None),
            link_bits_per_s=fastest.speed_mbit * 1e6 if fastest and fastest.speed_mbit else None,
            mtu=mtu,
            direction=direction,
        )
        return next((row for row in report.rows if row.limits), None)

    def layer_evidence(self, row: LayerRow) -> str:
        """What a limiting layer's figure is, in words, with where the measurement came from."""
        throughput = self.measurements.throughput
        rate = format_rate(row.ceiling_bytes_per_s)
        fastest = self._fastest_link()
        if row.name == "link" and fastest is not None and fastest.speed_mbit:
            return (
                f"{fastest.name} links at {format_bits(fastest.speed_mbit * 1e6)}, about "
                f"{rate} of TCP payload (not measured)"
            )
        measured = {
            "disk read": throughput.disk_read,
            "disk write": throughput.disk_write,
            "network": throughput.network,
        }.get(row.name)
        source = f" ({measured.source})" if measured is not None and measured.source else ""
        return f"{row.name} benchmark: {rate}{source}"
