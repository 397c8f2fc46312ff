"""Collect the advisor's inputs from a server: the survey, and smb.conf as testparm sees it.

The rules never touch a transport; everything they judge is collected here first.

``explicit`` (what the file sets) is the smb.conf engine's effective view
(:mod:`sambatune.conf`), which also keeps what testparm cannot report: the file's own
``log level`` (testparm substitutes its own while it runs) and parameters this Samba
no longer knows. ``effective`` (every value, defaults included) is ``testparm -sv``.
"""

from __future__ import annotations

from collections.abc import Callable

from sambatune.advisor.config_view import GLOBAL, ConfigView, canonical_section
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.measurements import Measurements
from sambatune.advisor.recorded import recorded_measurements, with_recorded
from sambatune.advisor.server_facts import ServerFacts
from sambatune.bench.results_db import ResultsDatabase
from sambatune.cancellation import CancelToken
from sambatune.conf.catalog_build import live_catalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import effective_view
from sambatune.conf.includes import TransportIncludes
from sambatune.conf.testparm_output import dump_by_section
from sambatune.errors import CommandFailed, InvalidInput
from sambatune.remote.agents import AgentEvent
from sambatune.remote.config_location import several_smbd
from sambatune.remote.regular_file import described
from sambatune.remote.samba_ops import TestparmReport, run_testparm
from sambatune.remote.survey import Survey, run_survey
from sambatune.remote.transport import Transport

Config = dict[str, dict[str, str]]

#: What smbd uses when no log level is set (testparm cannot say: it reports its own).
DEFAULT_LOG_LEVEL = "0"


def gather_inputs(
    transport: Transport,
    *,
    config_path: str | None = None,
    sudo: bool | None = None,
    measurements: Measurements | None = None,
    survey: Survey | None = None,
    recorded: ResultsDatabase | None = None,
    cancel: CancelToken | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    data: bytes | None = None,
) -> AdvisorInput:
    """Survey the server (unless ``survey`` is a fresh one) and read its smb.conf
    (``config_path``, else the one in use).

    ``sudo`` None: use sudo only when this account cannot read the file. ``recorded``:
    the benchmarks on record fill in the figures ``measurements`` lacks, from this
    server's sessions that ran with exactly this smb.conf. ``data``: the file's bytes when
    the caller has just read them (with ``sudo`` as it read them): not read again.
    """
    if survey is None:
        survey = run_survey(transport, config_path=config_path, cancel=cancel, on_event=on_event)
    path = config_path or survey.config_path
    if not path and survey.ambiguous:
        raise several_smbd(transport.label, survey.config_candidates, "with --config-path")
    if not path:
        raise InvalidInput(f"No smb.conf was found on {transport.label}: give its path (--config-path).")
    if data is None and not transport.file_exists(path):
        raise InvalidInput(f"{path} does not exist on {transport.label}.")
    if sudo is None:
        sudo = not transport.run(["test", "-r", path], timeout=30).ok
    if sudo:
        transport.check_sudo()
    if data is None:
        data = transport.read_file(path, sudo=sudo)
    # Read first (it never opens a FIFO or a device): testparm would wait on one for ever.
    explicit = explicit_from_file(transport, path, sudo=sudo, cancel=cancel, data=data)
    verbose = _checked(run_testparm(transport, path, sudo=sudo, verbose=True, cancel=cancel))
    effective = dump_by_section(verbose.dump)
    effective.setdefault(GLOBAL, {})["log level"] = explicit.get(GLOBAL, {}).get(
        "log level", DEFAULT_LOG_LEVEL
    )
    measurements = measurements or Measurements()
    sessions: list[int] = []
    if recorded is not None:
        on_record, sessions = recorded_measurements(recorded, transport.label, data)
        measurements = with_recorded(measurements, on_record)
    return AdvisorInput(
        config=ConfigView(explicit, effective, path),
        server=ServerFacts.from_survey(survey),
        measurements=measurements,
        recorded_sessions=tuple(sessions),
    )


#: What an include may be that Samba's programs open and then wait on or read for ever.
BLOCKING_KINDS = ("fifo", "character device", "block device", "socket")


def explicit_from_file(
    transport: Transport,
    path: str,
    *,
    sudo: bool = False,
    cancel: CancelToken | None = None,
    data: bytes | None = None,
) -> Config:
    """What the file sets, ``{section: {canonical name: value}}``, read by the smb.conf engine.

    The engine reads the file (and its includes) as Samba does, with this server's own
    parameter catalog. Names Samba ignores because this version no longer has them (or
    never had) are kept too: they are what old tuning guides leave behind, and the
    advisor says so.
    """
    catalog = live_catalog(transport, cancel=cancel)
    document = SmbConfDocument(data if data is not None else transport.read_file(path, sudo=sudo), path)
    view = effective_view(document, catalog, read_include=TransportIncludes(transport, sudo=sudo))
    for link in view.includes:
        if link.status == "not-regular" and link.detail in BLOCKING_KINDS:
            raise CommandFailed(
                f"{path} includes {link.path}, which is {described(link.detail)}, not a file: "
                "testparm and smbd would wait on it (or read it for ever). Point the include "
                "at a regular file.",
            )
    explicit = view.to_json()
    for ignored in view.ignored:
        if ignored.reason not in ("unknown", "removed") or ignored.written_value is None:
            continue
        removed = catalog.removed(ignored.written_name)
        name = removed.name if removed else " ".join(ignored.written_name.split()).lower()
        section = canonical_section(ignored.section)
        explicit.setdefault(section, {})[name] = " ".join(ignored.written_value.split())
    return explicit


def _checked(report: TestparmReport) -> TestparmReport:
    if not report.ok:
        raise CommandFailed(
            f"testparm rejects {report.path}: {report.errors[0] if report.errors else 'error'}",
            details="\n".join(report.errors),
            exit_code=report.exit_code,
        )
    return report
