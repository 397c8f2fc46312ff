"""Build a :class:`ParameterCatalog` from a server's own testparm, through any Transport.

Three kinds of testparm run, all reading their smb.conf from stdin (``/dev/stdin``)
so nothing is written on the server:

1. ``testparm --show-all-parameters``: names, types, scope, enum spellings,
   synonyms (inverse ones marked) and the deprecated flag;
2. ``testparm -s -v -d 0`` on an empty config: every default as testparm prints
   it (``-d 0`` because testparm otherwise reports its own forced ``log level``);
3. a few probe runs that set every enum parameter to each spelling it accepts and
   read back what testparm prints: several spellings share one value (``yes``,
   ``true`` and ``1`` are all ``Yes``), and only testparm knows which.

A built catalog is cached per Samba version in the user data directory; the
cache key is the full ``testparm -V`` text.
"""

from __future__ import annotations

from collections.abc import Callable

from sambatune.cancellation import CancelToken
from sambatune.conf.catalog import (
    Parameter,
    ParameterCatalog,
    Synonym,
    load_bundled,
    load_cached,
    local_testparm,
    remember_local_catalog,
    save_cached,
)
from sambatune.conf.syntax import name_key
from sambatune.conf.testparm_output import ListedParameter, parse_dump, parse_show_all, parse_version
from sambatune.errors import CommandFailed
from sambatune.remote.transport import CommandResult, Transport

TESTPARM_CANDIDATES = ("testparm", "/usr/bin/testparm", "/usr/sbin/testparm", "/usr/local/samba/bin/testparm")
# Values testparm cannot show as they are: the probe share names must not clash.
_PROBE_SHARE = "sambatune-probe-{}"

Progress = Callable[[str], None]


def _run(
    transport: Transport, argv: list[str], stdin: bytes | None = None, cancel: CancelToken | None = None
) -> CommandResult:
    return transport.run(argv, stdin=stdin, timeout=120, cancel=cancel)


def find_testparm(transport: Transport, cancel: CancelToken | None = None) -> tuple[str, str]:
    """The testparm command on the target and its ``-V`` text; CommandFailed if there is none."""
    for candidate in TESTPARM_CANDIDATES:
        result = _run(transport, [candidate, "-V"], cancel=cancel)
        if result.exit_code == 0 and result.text.strip():
            return candidate, result.text.strip()
    raise CommandFailed(
        f"testparm is not installed on {transport.label}, so its parameter list cannot be read.",
        details="Install Samba's tools there (Debian: the samba package), or work offline with "
        "the catalog bundled with SambaTune.",
        exit_code=127,
    )


def build_catalog(
    transport: Transport,
    *,
    cancel: CancelToken | None = None,
    on_progress: Progress | None = None,
) -> ParameterCatalog:
    """Run testparm on the target and assemble its catalog (nothing cached)."""
    say = on_progress or (lambda message: None)
    testparm, version_output = find_testparm(transport, cancel)
    version_text, _ = parse_version(version_output)
    say(f"reading the parameter list of Samba {version_text}")
    listed = parse_show_all(
        _run(transport, [testparm, "--show-all-parameters"], cancel=cancel)
        .check("testparm --show-all-parameters")
        .text
    )
    say("reading the defaults")
    defaults = _global_dump(transport, testparm, b"", cancel)
    say("reading how each enum value is printed")
    enum_print = _probe_enums(transport, testparm, listed, defaults, cancel)
    parameters = _assemble(listed, defaults, enum_print)
    return ParameterCatalog(
        parameters,
        version_text,
        origin="live",
        source=f"testparm --show-all-parameters and testparm -sv on an empty smb.conf "
        f"({version_output.strip()})",
    )


def server_catalog(transport: Transport, cancel: CancelToken | None = None) -> ParameterCatalog:
    """The parameter names of the Samba on the target: the catalog read from that exact
    version before, else the bundled one of its series (CommandFailed without testparm).

    Names, synonyms and scopes are what a release series decides (4.25 reads 'smb ports'
    as 'server smb transports', 4.17 as a parameter of its own); values come from
    testparm on the target. One ``testparm -V``, where building a catalog costs some 40
    testparm runs, 15 s over SSH.
    """
    _testparm, version_output = find_testparm(transport, cancel)
    version_text, version = parse_version(version_output)
    return load_cached(version_text) or load_bundled(version)


def live_catalog(
    transport: Transport,
    *,
    refresh: bool = False,
    cancel: CancelToken | None = None,
    on_progress: Progress | None = None,
) -> ParameterCatalog:
    """The target's catalog: from the cache when this exact version was read before."""
    _testparm, version_output = find_testparm(transport, cancel)
    version_text, _ = parse_version(version_output)
    catalog = None if refresh else load_cached(version_text)
    if catalog is None:
        catalog = build_catalog(transport, cancel=cancel, on_progress=on_progress)
        save_cached(catalog)
    if transport.is_local:
        binary = local_testparm()
        if binary is not None:
            remember_local_catalog(binary, catalog)
    return catalog


def _global_dump(
    transport: Transport, testparm: str, config: bytes, cancel: CancelToken | None
) -> dict[str, str]:
    result = _run(transport, [testparm, "-s", "-v", "-d", "0", "/dev/stdin"], config, cancel)
    sections = parse_dump(result.text)
    if not sections or sections[0][0] != "global":
        result.check("testparm -sv")
        raise CommandFailed("testparm -sv printed no [global] section.", details=result.text[:2000])
    return sections[0][1]


def _probe_enums(
    transport: Transport,
    testparm: str,
    listed: list[ListedParameter],
    defaults: dict[str, str],
    cancel: CancelToken | None,
) -> dict[str, dict[str, str]]:
    """name -> {name_key(spelling): printed form} for every canonical enum parameter."""
    enums = [entry for entry in listed if entry.type == "enum" and entry.alias_of is None]
    printed: dict[str, dict[str, str]] = {entry.name: {} for entry in enums}

    # Share-level enums: one probe share per (parameter, spelling), all in one run. A
    # share lists only what differs from the default, so silence means "the default".
    shares = [
        (entry, spelling) for entry in enums if entry.scope == "share" for spelling in entry.enum_values
    ]
    lines = ["[global]"]
    for number, (entry, spelling) in enumerate(shares):
        lines += [f"[{_PROBE_SHARE.format(number)}]", "path = /tmp", f"{entry.name} = {spelling}"]
    result = _run(
        transport, [testparm, "-s", "-d", "0", "/dev/stdin"], ("\n".join(lines) + "\n").encode(), cancel
    )
    dumped = dict(parse_dump(result.text))
    for number, (entry, spelling) in enumerate(shares):
        section = dumped.get(_PROBE_SHARE.format(number), {})
        shown = section.get(entry.name, defaults.get(entry.name))
        if shown is not None:
            printed[entry.name][name_key(spelling)] = shown

    # Global enums: run k sets every global enum to its k-th spelling. A sentinel
    # set last proves the run read the whole file: a value such as
    # `config backend = registry` makes Samba drop what it read so far, and then that
    # round is repeated one parameter at a time.
    global_enums = [entry for entry in enums if entry.scope == "global"]
    rounds = max((len(entry.enum_values) for entry in global_enums), default=0)
    for k in range(rounds):
        chosen = [(entry, entry.enum_values[k]) for entry in global_enums if k < len(entry.enum_values)]
        for batch in _probe_rounds(transport, testparm, chosen, cancel):
            for entry, spelling, shown in batch:
                printed[entry.name][name_key(spelling)] = shown
    return printed


_SENTINEL = ("comment", "sambatune enum probe")


def _probe_rounds(
    transport: Transport,
    testparm: str,
    chosen: list[tuple[ListedParameter, str]],
    cancel: CancelToken | None,
) -> list[list[tuple[ListedParameter, str, str]]]:
    def attempt(group: list[tuple[ListedParameter, str]]) -> list[tuple[ListedParameter, str, str]] | None:
        config = "[global]\n" + "".join(f"{entry.name} = {value}\n" for entry, value in group)
        config += f"{_SENTINEL[0]} = {_SENTINEL[1]}\n"
        try:
            dump = _global_dump(transport, testparm, config.encode(), cancel)
        except CommandFailed:
            # As a user other than root, `config backend = registry` makes testparm
            # fail outright (it cannot open the registry): that spelling goes unprobed.
            return None
        if dump.get(_SENTINEL[0]) != _SENTINEL[1]:
            return None
        return [(entry, value, dump[entry.name]) for entry, value in group if entry.name in dump]

    together = attempt(chosen)
    if together is not None:
        return [together]
    alone = [attempt([pair]) for pair in chosen]
    return [found for found in alone if found is not None]


def _assemble(
    listed: list[ListedParameter],
    defaults: dict[str, str],
    enum_print: dict[str, dict[str, str]],
) -> dict[str, Parameter]:
    synonyms: dict[str, list[Synonym]] = {}
    for entry in listed:
        if entry.alias_of is not None:
            synonyms.setdefault(entry.alias_of, []).append(Synonym(entry.name, entry.inverse))
    parameters: dict[str, Parameter] = {}
    for entry in listed:
        if entry.alias_of is not None:
            continue
        parameters[entry.name] = Parameter(
            name=entry.name,
            type=entry.type,  # type: ignore[arg-type]
            scope=entry.scope,  # type: ignore[arg-type]
            default=defaults.get(entry.name),
            synonyms=tuple(synonyms.get(entry.name, ())),
            deprecated="FLAG_DEPRECATED" in entry.flags,
            enum_values=entry.enum_values,
            enum_print=enum_print.get(entry.name, {}),
        )
    return parameters
