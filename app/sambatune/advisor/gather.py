"""Collect the advisor's inputs from a server: the survey, and smb.conf as testparm sees it.

The rules never touch a transport; everything they judge is collected here first.

``explicit`` (what the file sets) comes from ``testparm -s`` until the smb.conf engine
(``sambatune.conf``) is on main: :func:`explicit_from_testparm` is the one function to
replace with the engine's ``conf effective`` view then. testparm drops two kinds of
lines the advisor needs, so for those names only the file's own lines are read:
``log level`` (testparm substitutes its own level while it runs) and parameters this
Samba no longer knows (which is exactly what old tuning guides leave behind).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from sambatune.advisor.config_view import GLOBAL, ConfigView, canonical_section, fold
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.measurements import Measurements
from sambatune.advisor.server_facts import ServerFacts
from sambatune.cancellation import CancelToken
from sambatune.errors import CommandFailed, InvalidInput
from sambatune.remote.agents import AgentEvent
from sambatune.remote.samba_ops import TestparmReport, parse_dump, run_testparm
from sambatune.remote.survey import run_survey
from sambatune.remote.transport import Transport

Config = dict[str, dict[str, str]]

#: What smbd uses when no log level is set (testparm cannot say: it reports its own).
DEFAULT_LOG_LEVEL = "0"
#: Spellings of `log level` in a file, folded the way Samba compares names.
_LOG_LEVEL_NAMES = {"loglevel": "log level", "debuglevel": "log level"}
_UNKNOWN = re.compile(r'Unknown parameter encountered:\s*"([^"]+)"')


def gather_inputs(
    transport: Transport,
    *,
    config_path: str | None = None,
    sudo: bool | None = None,
    measurements: Measurements | None = None,
    cancel: CancelToken | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
) -> AdvisorInput:
    """Survey the server and read its smb.conf (``config_path``, else the one in use).

    ``sudo`` None: use sudo only when this account cannot read the file.
    """
    survey = run_survey(transport, config_path=config_path, cancel=cancel, on_event=on_event)
    path = config_path or survey.config_path
    if not path:
        raise InvalidInput(f"No smb.conf was found on {transport.label}: give its path "
                           "(--config-path).")
    if not transport.file_exists(path):
        raise InvalidInput(f"{path} does not exist on {transport.label}.")
    if sudo is None:
        sudo = not transport.run(["test", "-r", path], timeout=30).ok
    if sudo:
        transport.check_sudo()
    verbose = _checked(run_testparm(transport, path, sudo=sudo, verbose=True, cancel=cancel))
    explicit = explicit_from_testparm(transport, path, sudo=sudo, cancel=cancel)
    effective = parse_dump(verbose.dump)
    effective.setdefault(GLOBAL, {})["log level"] = (
        explicit.get(GLOBAL, {}).get("log level", DEFAULT_LOG_LEVEL))
    return AdvisorInput(
        config=ConfigView(explicit, effective, path),
        server=ServerFacts.from_survey(survey),
        measurements=measurements or Measurements(),
    )


def explicit_from_testparm(
    transport: Transport, path: str, *, sudo: bool = False, cancel: CancelToken | None = None,
) -> Config:
    """What the file sets, ``{section: {canonical name: value}}``, from ``testparm -s``.

    Stands in for the smb.conf engine's view until that is on main (see the module text).
    """
    report = _checked(run_testparm(transport, path, sudo=sudo, cancel=cancel))
    explicit = parse_dump(report.dump)
    wanted = dict(_LOG_LEVEL_NAMES)
    for message in report.warnings:
        for name in _UNKNOWN.findall(message):
            wanted[fold(name)] = " ".join(name.split()).lower()
    text = transport.read_file(path, sudo=sudo).decode("utf-8", "replace")
    for section, name, value in lines_testparm_omits(text, wanted):
        explicit.setdefault(section, {})[name] = value
    return explicit


def lines_testparm_omits(text: str, wanted: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """(section, name, value) of the file's lines for the folded names in ``wanted``.

    Only for the few names testparm cannot report; everything else comes from testparm.
    Follows smb.conf's line rules (comments, continuation lines, last value wins when the
    caller stores them in order) but not ``include``: the smb.conf engine will.
    """
    section = GLOBAL
    pending = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not pending and stripped.startswith(("#", ";")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        line, pending = pending + stripped, ""
        if line.startswith("["):
            section = canonical_section(line[1:].split("]", 1)[0])
            continue
        name, equals, value = line.partition("=")
        if equals and fold(name) in wanted:
            yield section, wanted[fold(name)], " ".join(value.split())


def _checked(report: TestparmReport) -> TestparmReport:
    if not report.ok:
        raise CommandFailed(
            f"testparm rejects {report.path}: {report.errors[0] if report.errors else 'error'}",
            details="\n".join(report.errors),
            exit_code=report.exit_code,
        )
    return report
