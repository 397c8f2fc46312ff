"""Fleet drift: the parameters Samba really uses on each host, compared (issue 20 item 3).

Each host's smb.conf is read the way its own Samba reads it: ``testparm -sv`` on the
host (every parameter, defaults included, includes followed, canonical names and
printed values), plus the file's ``log level``, which testparm replaces with its own
(read by the smb.conf engine, as the advisor does). Values are then compared per
section and canonical parameter name:

- without a golden file, against what most hosts have (the most common value, held
  by two hosts or more and by more hosts than any other value; a tie has none, and
  such a parameter is reported as differing everywhere, like per-host names and paths).
  A fleet mixes Samba releases, and their defaults differ (``usershare max shares`` is
  100 up to 4.24 and 0 from 4.25; ``server string`` names the release): where every
  host has its own release's default, as ``testparm -sv`` of an empty file prints it
  on that host, the values differ by version, not by drift, and are reported as such;
- with a golden smb.conf, against the golden file *as this host's Samba reads it*
  (testparm on the host, so defaults are that version's), after the host's overlay
  (``samba_overlay``, :func:`sambatune.fleet.change.overlay_edits`) is laid over it.

Every host that differs gets the activation class of bringing it in line
(:func:`sambatune.conf.activation.classify_parameter`: reload, new connections, or a
restart of smbd). Shares that exist on some hosts only are reported as shares, not as
hundreds of parameters. A host that cannot be reached or read is reported, never fatal.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sambatune.cancellation import CancelToken
from sambatune.conf.activation import Activation, classify_parameter
from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.catalog_build import server_catalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import effective_view
from sambatune.conf.includes import TransportIncludes
from sambatune.conf.syntax import collapse_blanks, is_global_section, section_key
from sambatune.conf.testparm_output import parse_dump
from sambatune.errors import CommandFailed
from sambatune.fleet.change import OVERLAY_VARIABLE, apply_edits, overlay_edits
from sambatune.fleet.inventory import FleetHost
from sambatune.fleet.live import Connector, HostOutcome, each_host, read_live
from sambatune.json_fields import FieldsAsJson
from sambatune.remote.samba_ops import TestparmReport, messages_of_testparm, run_testparm
from sambatune.remote.transport import Transport

GLOBAL = "global"
#: What smbd uses when no log level is set (testparm cannot say: it prints its own).
DEFAULT_LOG_LEVEL = "0"

Sections = dict[str, dict[str, str]]


@dataclass
class HostDump:
    """What Samba reads on one host, and what the golden file would give it there."""

    path: str
    sha256: str
    sections: Sections  # section key -> canonical name -> value as testparm prints it
    names: dict[str, str]  # section key -> the name as printed
    expected: Sections | None = None  # golden + overlay as this host's Samba reads it
    expected_names: dict[str, str] = field(default_factory=dict)
    # This host's Samba's defaults, as printed for an empty smb.conf there.
    defaults: dict[str, str] = field(default_factory=dict)


@dataclass
class HostDifference:
    host: str
    value: str | None  # None: the host lacks the section
    expected: str
    activation: Activation
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "value": self.value,
            "expected": self.expected,
            "activation": self.activation.value,
            "needs": "restart" if self.activation is Activation.RESTART else "reload",
            "why": self.why,
        }


@dataclass
class ParameterDrift:
    section: str
    parameter: str
    values: dict[str, str]  # host -> value, for the hosts that have the section
    reference: str | None  # the majority's value (no golden); None: no majority
    differing: list[HostDifference]
    # True: every host has its own Samba release's default; the values differ by version.
    version_defaults: bool = False

    @property
    def needs_restart(self) -> bool:
        return any(d.activation is Activation.RESTART for d in self.differing)

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "parameter": self.parameter,
            "reference": self.reference,
            "values": self.values,
            "differing": [d.to_json() for d in self.differing],
            "needs": "restart" if self.needs_restart else "reload" if self.differing else None,
            "version_defaults": self.version_defaults,
        }


@dataclass
class ShareDrift(FieldsAsJson):
    share: str
    present_on: list[str]
    missing_on: list[str]  # hosts that lack it (the golden file has it, or other hosts do)
    not_in_golden_on: list[str] = field(default_factory=list)


@dataclass
class HostStatus:
    host: str
    address: str
    reachable: bool
    error: str | None
    seconds: float
    config_path: str | None = None
    sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "address": self.address,
            "reachable": self.reachable,
            "error": self.error,
            "config_path": self.config_path,
            "sha256": self.sha256,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class DriftReport:
    golden: str | None
    hosts: list[HostStatus]
    parameters: list[ParameterDrift]
    shares: list[ShareDrift]
    seconds: float

    @property
    def unreachable(self) -> list[HostStatus]:
        return [h for h in self.hosts if not h.reachable]

    @property
    def drifts(self) -> bool:
        """Whether a parameter differs from the reference, or a share is not where it should be."""
        return bool(self.shares) or any(p.differing for p in self.parameters)

    def to_json(self) -> dict[str, Any]:
        return {
            "drifts": self.drifts,
            "golden": self.golden,
            "hosts": [h.to_json() for h in self.hosts],
            "parameters": [p.to_json() for p in self.parameters],
            "shares": [s.to_json() for s in self.shares],
            "seconds": round(self.seconds, 3),
        }


# -- reading one host ---------------------------------------------------------------------


def _checked(report: TestparmReport, what: str) -> TestparmReport:
    if not report.ok:
        raise CommandFailed(
            f"testparm rejects {what}: {report.errors[0] if report.errors else 'error'}",
            details="\n".join(report.errors),
            exit_code=report.exit_code,
        )
    return report


def _sections(dump: str) -> tuple[Sections, dict[str, str]]:
    sections: Sections = {}
    names: dict[str, str] = {}
    for name, settings in parse_dump(dump):
        key = GLOBAL if is_global_section(name) else section_key(name)
        names.setdefault(key, name)
        sections.setdefault(key, {}).update(settings)
    return sections, names


def _log_level(data: bytes, path: str, catalog: ParameterCatalog, transport: Transport, sudo: bool) -> str:
    view = effective_view(
        SmbConfDocument(data, path), catalog, read_include=TransportIncludes(transport, sudo=sudo)
    )
    value = view.global_section.value("log level")
    return collapse_blanks(value) if value else DEFAULT_LOG_LEVEL


def _golden_dump(transport: Transport, data: bytes, sudo: bool) -> str:
    """testparm -sv of a file that exists only here, fed on stdin (nothing written there);
    with no ``data``, the defaults of the host's Samba."""
    argv = ["testparm", "-s", "-v", "--suppress-prompt", "/dev/stdin"]
    result = transport.run(argv, stdin=data, sudo=sudo, timeout=120)
    if not result.ok:
        messages = [m for m in messages_of_testparm(result.error_text) if not m.startswith("Load smb")]
        raise CommandFailed(
            "testparm rejects the golden smb.conf with this host's overlay: "
            + (messages[-1] if messages else f"exit status {result.exit_code}"),
            details="\n".join(messages),
        )
    return result.text


def read_host(
    transport: Transport,
    host: FleetHost,
    *,
    golden: bytes | None = None,
    base_dir: Path | None = None,
    cancel: CancelToken | None = None,
) -> HostDump:
    """What this host's Samba reads, and (with ``golden``) what it would read from the
    golden file with the host's overlay."""
    live = read_live(transport, host, cancel)
    report = _checked(
        run_testparm(transport, live.path, sudo=live.sudo, verbose=True, cancel=cancel), live.path
    )
    catalog = server_catalog(transport, cancel)
    sections, names = _sections(report.dump)
    sections.setdefault(GLOBAL, {})["log level"] = _log_level(
        live.data, live.path, catalog, transport, live.sudo
    )
    dump = HostDump(live.path, live.sha256, sections, names)
    if golden is None:  # against the majority, a release's own default is no drift
        defaults, _ = _sections(_golden_dump(transport, b"", sudo=False))
        dump.defaults = defaults.get(GLOBAL, {})
    if golden is not None:
        edits = overlay_edits(host.variables.get(OVERLAY_VARIABLE), base_dir)
        includes = TransportIncludes(transport, sudo=live.sudo)
        candidate = apply_edits(golden, live.path, edits, catalog, includes)
        expected, expected_names = _sections(_golden_dump(transport, candidate, live.sudo))
        expected.setdefault(GLOBAL, {})["log level"] = _log_level(
            candidate, live.path, catalog, transport, live.sudo
        )
        dump.expected, dump.expected_names = expected, expected_names
    return dump


# -- comparing ----------------------------------------------------------------------------


def _majority(values: Sequence[str]) -> str | None:
    counts = Counter(values).most_common(2)
    if not counts or counts[0][1] < 2 or (len(counts) > 1 and counts[1][1] == counts[0][1]):
        return None
    return counts[0][0]


def _binds(*globals_: dict[str, str] | None) -> bool:
    return any(g is not None and g.get("bind interfaces only") == "Yes" for g in globals_)


def _difference(
    host: str,
    section: str,
    name: str,
    value: str | None,
    expected: str,
    host_global: dict[str, str] | None,
    expected_global: dict[str, str] | None,
) -> HostDifference:
    activation, why = classify_parameter(section, name, value, expected, _binds(host_global, expected_global))
    return HostDifference(host, value, expected, activation, why)


def compare(dumps: dict[str, HostDump], golden: bool) -> tuple[list[ParameterDrift], list[ShareDrift]]:
    """Per section and parameter, who differs from the majority (or from the golden file)."""
    order = list(dumps)
    section_keys = list(dict.fromkeys(k for d in dumps.values() for k in d.sections))
    if golden:
        section_keys += [k for d in dumps.values() for k in (d.expected or {}) if k not in section_keys]
    section_keys = list(dict.fromkeys(section_keys))
    parameters: list[ParameterDrift] = []
    shares: list[ShareDrift] = []
    for key in section_keys:
        having = [h for h in order if key in dumps[h].sections]
        shown = next((d.names[key] for d in dumps.values() if key in d.names), None) or next(
            (d.expected_names[key] for d in dumps.values() if key in d.expected_names), key
        )
        if key != GLOBAL:
            if golden:
                expected_on = [h for h in order if key in (dumps[h].expected or {})]
                missing = [h for h in expected_on if h not in having]
                extra = [h for h in having if h not in expected_on]
            else:
                missing, extra = [h for h in order if h not in having], []
            if missing or extra:
                shares.append(ShareDrift(shown, having, missing, extra))
        names = list(dict.fromkeys(n for h in having for n in dumps[h].sections[key]))
        for name in names:
            values = {h: dumps[h].sections[key][name] for h in having if name in dumps[h].sections[key]}
            differing: list[HostDifference] = []
            reference: str | None = None
            if golden:
                for h in having:
                    wanted = (dumps[h].expected or {}).get(key, {}).get(name)
                    if wanted is None or values.get(h) == wanted:
                        continue
                    differing.append(
                        _difference(
                            h,
                            key,
                            name,
                            values.get(h),
                            wanted,
                            dumps[h].sections.get(GLOBAL),
                            (dumps[h].expected or {}).get(GLOBAL),
                        )
                    )
                distinct = {
                    w for h in having if (w := (dumps[h].expected or {}).get(key, {}).get(name)) is not None
                }
                reference = next(iter(distinct)) if len(distinct) == 1 else None
            else:
                if len(set(values.values())) <= 1:
                    continue
                if all(dumps[h].defaults.get(name) == value for h, value in values.items()):
                    parameters.append(ParameterDrift(shown, name, values, None, [], version_defaults=True))
                    continue
                reference = _majority(list(values.values()))
                if reference is not None:
                    majority_global = next(
                        (dumps[h].sections.get(GLOBAL) for h in having if values.get(h) == reference), None
                    )
                    differing = [
                        _difference(
                            h, key, name, value, reference, dumps[h].sections.get(GLOBAL), majority_global
                        )
                        for h, value in values.items()
                        if value != reference
                    ]
            if differing or (not golden and reference is None):
                parameters.append(ParameterDrift(shown, name, values, reference, differing))
    return parameters, shares


def fleet_drift(
    hosts: Sequence[FleetHost],
    *,
    golden: bytes | None = None,
    golden_name: str | None = None,
    base_dir: Path | None = None,
    connector: Connector | None = None,
    concurrency: int = 8,
    cancel: CancelToken | None = None,
    on_host: Callable[[HostStatus], None] | None = None,
) -> DriftReport:
    """Read every host in parallel and compare them; ``on_host`` hears each as it arrives."""
    started = time.monotonic()
    dumps: dict[str, HostDump] = {}
    statuses: dict[str, HostStatus] = {}

    def work(host: FleetHost, transport: Transport) -> HostDump:
        return read_host(transport, host, golden=golden, base_dir=base_dir, cancel=cancel)

    outcomes: Iterator[HostOutcome[HostDump]] = each_host(
        hosts, work, connector=connector, concurrency=concurrency, cancel=cancel
    )
    for outcome in outcomes:
        dump = outcome.value
        status = HostStatus(
            outcome.host.name,
            outcome.host.address,
            dump is not None,
            outcome.error,
            outcome.seconds,
            dump.path if dump else None,
            dump.sha256 if dump else None,
        )
        statuses[outcome.host.name] = status
        if dump is not None:
            dumps[outcome.host.name] = dump
        if on_host is not None:
            on_host(status)
    # Inventory order, not arrival order: reports of the same fleet read alike.
    ordered = {h.name: dumps[h.name] for h in hosts if h.name in dumps}
    parameters, shares = compare(ordered, golden is not None)
    return DriftReport(
        golden_name,
        [statuses[h.name] for h in hosts if h.name in statuses],
        parameters,
        shares,
        time.monotonic() - started,
    )
