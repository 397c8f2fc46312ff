"""The bottleneck table's figures, taken from the sessions a server has on record.

Each layer's figure comes from the newest session that measured it: disk read and
write and the file-operation rate from a disk test (or the disk ceiling of an smb
test), the network from a net test in the transfer's direction, and SMB from the
client probe (it crossed the same network) or else the server-side smb test.

Sessions run with different smb.conf files measured different servers, as far as
Samba is concerned, so they are not combined unless the user chooses them: by default
only the sessions run with the same smb.conf as the newest one count
(:func:`default_selection`), and the figures say which session each came from, with
which smb.conf version and file size (:class:`SessionFacts`), and which missing layer
a left-out session did measure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sambatune.bench.bottleneck import BottleneckReport, Direction, find_bottleneck
from sambatune.bench.records import BenchResult
from sambatune.errors import InvalidInput
from sambatune.units import format_bytes

if TYPE_CHECKING:
    from sambatune.bench.results_db import ResultsDatabase, StoredSession

METADATA_SERIES = ("metadata-create", "metadata-stat", "metadata-unlink")
#: The tests a bottleneck figure can come from.
LAYER_TESTS = ("disk", "smb", "net", "smb-client")
TEST_NAMES = {
    "disk": "disk test",
    "smb": "SMB test on the server",
    "net": "network test",
    "smb-client": "SMB from this computer",
}
#: The figures' keys (:attr:`BottleneckFigures.sources`) of each table row.
ROW_SOURCES = {
    "disk read": "disk read",
    "disk write": "disk write",
    "file operations": "file operations",
    "network": "network",
    "link": "link",
    "SMB read": "SMB",
    "SMB write": "SMB",
}
NOT_RECORDED = "not recorded"
LAYER_WORDS = {
    "disk read": "the disk read throughput",
    "disk write": "the disk write throughput",
    "file operations": "the file-operation rate",
    "network": "the network throughput",
    "SMB": "the SMB throughput",
}


@dataclass(frozen=True)
class SessionFacts:
    """What names a session behind a figure: its test, when, its file and its smb.conf."""

    id: int
    test: str
    started_at: str
    #: SHA-256 of the smb.conf the session ran with; None when none was recorded.
    config: str | None
    #: The test file's size, for the tests that copy one.
    size: int | None = None
    note: str = ""
    #: The [global] ``socket options`` of that smb.conf's main file, when it sets them.
    socket_options: str | None = None

    @classmethod
    def of(cls, session: StoredSession) -> SessionFacts:
        import hashlib

        config = hashlib.sha256(session.smb_conf).hexdigest() if session.smb_conf is not None else None
        options = global_value(session.smb_conf, "socket options") if session.smb_conf is not None else None
        return cls.of_result(session.result, config, session.note, options)

    @classmethod
    def of_result(
        cls, result: BenchResult, config: str | None, note: str = "", socket_options: str | None = None
    ) -> SessionFacts:
        size = result.parameters.get("size")
        return cls(
            int(result.session_id or 0),
            result.test,
            result.started_at,
            config,
            int(size) if isinstance(size, (int, float)) and size > 0 else None,
            note,
            socket_options,
        )

    def details(self, versions: Mapping[str | None, str]) -> str:
        """``disk test, 1.0 GiB, smb.conf v2``."""
        parts = [TEST_NAMES.get(self.test, self.test)]
        if self.size is not None:
            parts.append(format_bytes(self.size))
        parts.append(f"smb.conf {versions.get(self.config, NOT_RECORDED)}")
        return ", ".join(parts)

    def describe(self, versions: Mapping[str | None, str]) -> str:
        """``session 12 (disk test, 1.0 GiB, smb.conf v2)``."""
        return f"session {self.id} ({self.details(versions)})"


def global_value(smb_conf: bytes, name: str) -> str | None:
    """What the main file's [global] sets ``name`` to (the last setting wins, as in Samba);
    includes are not followed: a recorded session keeps only the main file.

    Read the way Samba's parser reads a line (lib/util/params.c): a backslash at the end
    continues it, ``#`` and ``;`` start a comment line, names compare without case or
    blanks. (sambatune.conf has the whole parser; the engines do not import each other.)
    """
    wanted = "".join(name.split()).lower()
    in_global = True  # lines above the first section header belong to [global]
    found = None
    logical = ""
    for raw in smb_conf.decode("utf-8", "replace").splitlines():
        line = logical + raw.strip()
        if line.endswith("\\"):
            logical = line[:-1] + " "
            continue
        logical = ""
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            in_global = "".join(line[1:].partition("]")[0].split()).lower() in ("global", "globals")
        elif in_global and "=" in line:
            key, _, value = line.partition("=")
            if "".join(key.split()).lower() == wanted:
                found = " ".join(value.split())
    return found


def stored_facts(database: ResultsDatabase, results: Iterable[BenchResult]) -> dict[int, SessionFacts]:
    """The facts of stored ``results``, with the smb.conf each ran with (one small query:
    the file's hash, not its bytes)."""
    by_id = {r.session_id: r for r in results if r.session_id is not None}
    if not by_id:
        return {}
    marks = ",".join("?" * len(by_id))
    with database.connection() as db:
        rows = db.execute(
            f"SELECT id, smb_conf_sha256, note FROM sessions WHERE id IN ({marks})", list(by_id)
        ).fetchall()
    return {int(i): SessionFacts.of_result(by_id[i], sha, note or "") for i, sha, note in rows}


def sessions_with_config(
    database: ResultsDatabase,
    server: str,
    smb_conf: bytes,
    *,
    limit: int = 20,
    tests: Sequence[str] = LAYER_TESTS,
) -> list[StoredSession]:
    """The newest sessions of ``server`` of ``tests`` (those that can give a layer figure)
    that ran with exactly ``smb_conf`` (matched by hash, so only those are read in full)."""
    import hashlib

    marks = ",".join("?" * len(tests))
    with database.connection() as db:
        ids = [
            int(row[0])
            for row in db.execute(
                "SELECT sessions.id FROM sessions JOIN servers ON servers.id = sessions.server_id "
                f"WHERE servers.label = ? AND smb_conf_sha256 = ? AND test IN ({marks}) "
                "ORDER BY sessions.id DESC LIMIT ?",
                [server, hashlib.sha256(smb_conf).hexdigest(), *tests, limit],
            )
        ]
    return [database.load(i) for i in ids]


def config_versions(facts: Iterable[SessionFacts]) -> dict[str | None, str]:
    """A short name for each smb.conf the sessions ran with, oldest first: v1, v2, ..."""
    versions: dict[str | None, str] = {}
    for item in sorted(facts, key=lambda f: (f.started_at, f.id)):
        if item.config is None:
            versions[None] = NOT_RECORDED
        elif item.config not in versions:
            versions[item.config] = f"v{sum(1 for k in versions if k is not None) + 1}"
    return versions


def default_selection(facts: Mapping[int, SessionFacts]) -> set[int]:
    """The sessions combined unless the user chooses others: those that ran with the same
    smb.conf as the newest session that can give a figure."""
    usable = [f for f in facts.values() if f.test in LAYER_TESTS]
    if not usable:
        return set()
    newest = max(usable, key=lambda f: (f.started_at, f.id))
    return {f.id for f in usable if f.config == newest.config}


@dataclass
class BottleneckFigures:
    direction: Direction = "read"
    disk_read: float | None = None
    disk_write: float | None = None
    file_ops: float | None = None
    network: float | None = None
    smb: float | None = None
    link_bits: float | None = None
    #: The SMB figure's counted runs (bytes/s): their spread tells a steady ceiling
    #: from something that came and went.
    smb_runs: tuple[float, ...] = ()
    #: ``socket options`` of the smb.conf the SMB figure ran with, when it sets them.
    socket_options: str | None = None
    #: Which session each figure came from: {"disk read": 12, ...}.
    sources: dict[str, int | None] = field(default_factory=dict)
    #: Every session that could give a figure (when their smb.conf is known), by id.
    sessions: dict[int, SessionFacts] = field(default_factory=dict)
    #: The short name of each smb.conf version (see :func:`config_versions`).
    versions: dict[str | None, str] = field(default_factory=dict)
    #: The sessions the figures were taken from; None: every session given.
    selected: frozenset[int] | None = None
    #: The user chose the sessions (rather than the default of one smb.conf).
    chosen_by_user: bool = False
    #: Layers missing from the figures that a left-out session measured: {"disk read": 3}.
    elsewhere: dict[str, int] = field(default_factory=dict)

    def report(self) -> BottleneckReport:
        return find_bottleneck(
            disk_read_bytes_per_s=self.disk_read,
            disk_write_bytes_per_s=self.disk_write,
            file_ops_per_s=self.file_ops,
            network_bytes_per_s=self.network,
            smb_bytes_per_s=self.smb,
            link_bits_per_s=self.link_bits,
            direction=self.direction,
            smb_runs=self.smb_runs,
            socket_options=self.socket_options,
        )

    def session_of(self, row_name: str) -> SessionFacts | None:
        """The session behind a row of the report's table (``"disk read"``, ``"SMB read"``)."""
        session_id = self.sources.get(ROW_SOURCES.get(row_name, row_name))
        return self.sessions.get(session_id) if session_id is not None else None

    def describe_source(self, row_name: str) -> str:
        """``12: disk test, 1.0 GiB, smb.conf v2``, or the bare session number."""
        facts = self.session_of(row_name)
        if facts is not None:
            return f"{facts.id}: {facts.details(self.versions)}"
        session_id = self.sources.get(ROW_SOURCES.get(row_name, row_name))
        return str(session_id) if session_id is not None else ""

    def used_configs(self) -> dict[str | None, list[int]]:
        """The smb.conf versions behind the figures, each with its sessions."""
        used: dict[str | None, list[int]] = {}
        for session_id in sorted({s for s in self.sources.values() if s is not None}):
            facts = self.sessions.get(session_id)
            if facts is not None:
                used.setdefault(facts.config, []).append(session_id)
        return used

    @property
    def mixed(self) -> bool:
        """The figures come from sessions run with different smb.conf files."""
        return len(self.used_configs()) > 1

    def basis(self) -> str:
        """One sentence: which sessions the figures combine, and with which smb.conf."""
        used = self.used_configs()
        if not used:
            return ""

        def sessions(ids: list[int]) -> str:
            return ("session " if len(ids) == 1 else "sessions ") + ", ".join(map(str, ids))

        if len(used) == 1:
            ((config, ids),) = used.items()
            version = self.versions.get(config, NOT_RECORDED)
            text = (
                f"Figures from {sessions(ids)}, all run with smb.conf {version}"
                if config is not None
                else f"Figures from {sessions(ids)}, whose smb.conf was not recorded"
            )
            if not self.chosen_by_user:
                text += "; sessions run with another smb.conf are left out unless you tick them"
            return text + "."
        parts = "; ".join(
            f"smb.conf {self.versions.get(c, NOT_RECORDED)}: {sessions(ids)}" for c, ids in used.items()
        )
        return (
            f"As you chose, these figures combine sessions run with different smb.conf "
            f"versions ({parts}): they describe the server under different settings."
        )

    def left_out(self) -> list[str]:
        """For each left-out session that measured a missing layer: what and where."""
        by_session: dict[int, list[str]] = {}
        for layer, session_id in self.elsewhere.items():
            by_session.setdefault(session_id, []).append(LAYER_WORDS.get(layer, layer))
        lines = []
        for session_id, layers in by_session.items():
            facts = self.sessions.get(session_id)
            where = facts.describe(self.versions) if facts else f"session {session_id}"
            what = layers[0] if len(layers) == 1 else ", ".join(layers[:-1]) + " and " + layers[-1]
            lines.append(
                f"{what[0].upper()}{what[1:]} {'was' if len(layers) == 1 else 'were'} "
                f"measured only in {where}, which is left out: tick it to combine it "
                "anyway, or measure again."
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "disk_read": self.disk_read,
            "disk_write": self.disk_write,
            "file_ops_per_s": self.file_ops,
            "network": self.network,
            "smb": self.smb,
            "link_bits": self.link_bits,
            "smb_runs": list(self.smb_runs),
            "socket_options": self.socket_options,
            "sources": self.sources,
            "selected": sorted(self.selected) if self.selected is not None else None,
            "chosen_by_user": self.chosen_by_user,
            "mixed": self.mixed,
            "elsewhere": self.elsewhere,
            "sessions": {
                str(i): {
                    "test": f.test,
                    "started_at": f.started_at,
                    "smb_conf": self.versions.get(f.config, NOT_RECORDED),
                    "size": f.size,
                }
                for i, f in self.sessions.items()
            },
        }


def _runs(result: BenchResult, series: str) -> tuple[float, ...]:
    found = result.series.get(series)
    return tuple(v for v in found.values() if v > 0) if found else ()


def _mean(result: BenchResult, series: str) -> float | None:
    found = result.series.get(series)
    stats = found.stats() if found else None
    return stats.mean if stats is not None and stats.mean > 0 else None


def _newest_figures(results: Iterable[BenchResult], direction: Direction) -> BottleneckFigures:
    """The newest figure for each layer (``results`` in any order)."""
    figures = BottleneckFigures(direction=direction)
    net_series = "download" if direction == "read" else "upload"
    client_series = "read" if direction == "read" else "write"
    smb_series = "get" if direction == "read" else "put"

    def take(key: str, value: float | None, result: BenchResult, attribute: str) -> None:
        if value is not None and getattr(figures, attribute) is None:
            setattr(figures, attribute, value)
            figures.sources[key] = result.session_id

    smb_from_server: tuple[float, BenchResult] | None = None
    for result in sorted(results, key=lambda r: (r.started_at, r.session_id or 0), reverse=True):
        if result.link_speed_bits:
            take("link", float(result.link_speed_bits), result, "link_bits")
        if result.test == "disk":
            take("disk read", _mean(result, "read"), result, "disk_read")
            take("disk write", _mean(result, "write"), result, "disk_write")
            rates = [r for r in (_mean(result, name) for name in METADATA_SERIES) if r is not None]
            take("file operations", min(rates) if rates else None, result, "file_ops")
        elif result.test == "smb":
            take("disk read", _mean(result, "disk-read"), result, "disk_read")
            take("disk write", _mean(result, "disk-write"), result, "disk_write")
            rate = _mean(result, smb_series)
            if rate is not None and smb_from_server is None:
                smb_from_server = (rate, result)
        elif result.test == "net":
            take("network", _mean(result, net_series), result, "network")
        elif result.test == "smb-client":
            if figures.smb is None and _mean(result, client_series) is not None:
                figures.smb_runs = _runs(result, client_series)
            take("SMB", _mean(result, client_series), result, "smb")
    if figures.smb is None and smb_from_server is not None:
        figures.smb = smb_from_server[0]
        figures.smb_runs = _runs(smb_from_server[1], smb_series)
        figures.sources["SMB"] = smb_from_server[1].session_id
    return figures


_LAYER_KEYS = ("disk read", "disk write", "file operations", "network", "SMB", "link")


def figures_from_results(
    results: Sequence[BenchResult],
    direction: Direction = "read",
    *,
    facts: Mapping[int, SessionFacts] | None = None,
    chosen: Collection[int] | None = None,
) -> BottleneckFigures:
    """The newest figure for each layer (``results`` in any order).

    Without ``facts`` every result counts, as they come. With the facts of the sessions
    (their smb.conf) only the ``chosen`` sessions count, or by default those run with
    the newest session's smb.conf (:func:`default_selection`).
    """
    if facts is None:
        return _newest_figures(results, direction)
    known = {r.session_id: r for r in results if r.session_id is not None and r.session_id in facts}
    selected = set(chosen) if chosen is not None else default_selection(facts)
    figures = _newest_figures([r for i, r in known.items() if i in selected], direction)
    others = _newest_figures([r for i, r in known.items() if i not in selected], direction)
    figures.sessions = {i: facts[i] for i in known if facts[i].test in LAYER_TESTS}
    smb_session = figures.sources.get("SMB")
    if smb_session is not None and smb_session in facts:
        figures.socket_options = facts[smb_session].socket_options
    figures.versions = config_versions(facts.values())
    figures.selected = frozenset(selected & set(known))
    figures.chosen_by_user = chosen is not None
    figures.elsewhere = {
        key: session_id
        for key in _LAYER_KEYS
        if key not in figures.sources
        and key != "link"
        and (session_id := others.sources.get(key)) is not None
    }
    return figures


def figures_from_sessions(
    sessions: Sequence[StoredSession],
    direction: Direction | None = "read",
    chosen: Collection[int] | None = None,
) -> BottleneckFigures:
    """:func:`figures_from_results` for stored sessions, which carry their smb.conf;
    ``direction`` None: the one :func:`direction_to_show` picks."""
    facts = {s.id: SessionFacts.of(s) for s in sessions}
    results = [s.result for s in sessions]
    if direction is None:
        direction = direction_to_show(results, facts=facts, chosen=chosen)
    return figures_from_results(results, direction, facts=facts, chosen=chosen)


def direction_to_show(
    results: Sequence[BenchResult],
    *,
    facts: Mapping[int, SessionFacts] | None = None,
    chosen: Collection[int] | None = None,
) -> Direction:
    """The direction whose SMB figure falls furthest below its slowest layer: where the
    user's attention belongs (reads when nothing tells them apart)."""
    worst: tuple[float, Direction] | None = None
    for direction in ("read", "write"):
        figures = figures_from_results(results, direction, facts=facts, chosen=chosen)
        if figures.smb is None:
            continue
        try:
            report = figures.report()
        except InvalidInput:
            continue
        share = report.smb_vs_raw
        if share is None:
            # SMB measured, but no ceiling to hold it against: prefer it over nothing.
            share = float("inf")
        if worst is None or share < worst[0]:
            worst = (share, direction)
    return worst[1] if worst is not None else "read"
