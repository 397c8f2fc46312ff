"""The effective view reads smb.conf exactly as the installed Samba does: checked against testparm.

Random files (tests/smbconf_generator.py) are read by our engine and by
``testparm -s -v``. For every section and every parameter the file touches, the
value our engine resolves (set in the section, copied, inherited from the [global]
values in force when the share was created, or the default) must be what testparm
prints, compared in testparm's printed form (``testparm_form``: booleans and enums
canonical, sizes in bytes, octal with a leading 0, lists re-joined). Files that
testparm refuses must be files our lint reports an error for, and the other way
round.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sambatune.conf.catalog import ParameterCatalog
from sambatune.conf.catalog_build import build_catalog
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import effective_view
from sambatune.conf.includes import LocalIncludes
from sambatune.conf.lint import lint
from sambatune.conf.normalize import NOT_SHOWN_BY_TESTPARM, stored_form
from sambatune.conf.testparm_output import parse_dump
from sambatune.remote.local import LocalTransport
from smbconf_generator import GLOBAL_PARAMETERS, SHARE_PARAMETERS, ConfigGenerator

SEEDED_FILES = 120
# testparm prints this parametric default whatever the file says.
ALWAYS_PRINTED = {"idmap config * : backend"}


@cache
def installed_catalog() -> ParameterCatalog:
    return build_catalog(LocalTransport())


def generator(seed: int) -> ConfigGenerator:
    catalog = installed_catalog()
    enums = {p.name: p.enum_values for p in catalog if p.enum_values}
    return ConfigGenerator(seed, enums)


def catalog_types() -> dict[str, str]:
    catalog = installed_catalog()
    return {name: catalog.parameters[name].type for name in (*SHARE_PARAMETERS, *GLOBAL_PARAMETERS)}


def dump_of(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["testparm", "-s", "-v", "-d", "0", str(path)],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=60,
    )


def disagreements(text: str, path: Path) -> list[str]:
    """Where our reading of ``text`` differs from testparm's (empty: none)."""
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    catalog = installed_catalog()
    document = SmbConfDocument.read(str(path))
    view = effective_view(document, catalog, read_include=LocalIncludes())
    findings = lint(document, catalog, view=view)
    we_refuse = [f for f in findings if f.severity == "error"]
    result = dump_of(path)
    if result.returncode != 0 or "Error loading services" in result.stderr:
        if not we_refuse:
            return [f"testparm refused the file but lint found no error:\n{result.stderr[-800:]}"]
        return []
    if we_refuse:
        return [f"lint reports errors testparm does not: {we_refuse}"]
    dump = parse_dump(result.stdout)
    printed = dict(dump)
    problems: list[str] = []
    names = [section.name for section in view.sections.values()]
    if names != [name for name, _ in dump]:
        problems.append(f"sections: ours {names} testparm {[name for name, _ in dump]}")
        return problems
    touched = {setting.name for section in view.sections.values() for setting in section.settings.values()}
    touched |= {
        setting.name
        for section in view.sections.values()
        for setting in section.overridden
        if ":" not in setting.name
    }
    touched |= {name for section in view.sections.values() for name in section.copied}
    touched -= NOT_SHOWN_BY_TESTPARM
    global_dump = printed["global"]
    for section in view.sections.values():
        shown = printed[section.name]
        for name in sorted(touched):
            parameter = catalog.parameters[name]
            if parameter.scope == "global" and not section.is_global:
                continue
            resolved = view.resolve(section.name, name)
            ours = (
                parameter.default
                if resolved.source == "default"
                else (stored_form(parameter, resolved.value or ""))
            )
            theirs = shown.get(name, global_dump.get(name))
            if (
                name not in shown
                and parameter.type in ("string", "ustring")
                and ((ours or "").lower() == (theirs or "").lower())
            ):
                # A share prints a string only when it differs from [global] ignoring case.
                continue
            if ours != theirs:
                problems.append(
                    f"[{section.name}] {name}: ours {ours!r} ({resolved.source}, "
                    f"{resolved.setting}) testparm {theirs!r}"
                )
        ours_parametric = {key: setting.value for key, setting in section.parametric.items()}
        theirs_parametric = {
            key: value for key, value in shown.items() if ":" in key and key not in ALWAYS_PRINTED
        }
        if ours_parametric != theirs_parametric:
            problems.append(
                f"[{section.name}] parametric: ours {ours_parametric} testparm {theirs_parametric}"
            )
    return problems


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("batch", range(4))
def test_seeded_files_read_like_testparm(batch: int, tmp_path: Path) -> None:
    types = catalog_types()
    failures = []
    refused = 0
    for seed in range(batch * SEEDED_FILES // 4, (batch + 1) * SEEDED_FILES // 4):
        config = generator(seed).generate(types)
        problems = disagreements(config.text, tmp_path / f"seed{seed}.conf")
        if problems:
            failures.append((seed, config.text, problems))
    assert not failures, "\n\n".join(
        f"seed {seed}:\n{text}\n--> " + "\n--> ".join(problems[:5]) for seed, text, problems in failures[:3]
    )
    assert refused <= SEEDED_FILES


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.testbed  # runs Samba's own programs
@given(seed=st.integers(min_value=1000, max_value=10**9))
def test_any_seed_reads_like_testparm(seed: int, tmp_path: Path) -> None:
    config = generator(seed).generate(catalog_types())
    problems = disagreements(config.text, tmp_path / "hypothesis.conf")
    assert not problems, f"{config.text}\n--> " + "\n--> ".join(problems[:5])


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("seed", range(20))
def test_includes_read_like_testparm(seed: int, tmp_path: Path) -> None:
    """Included files are read in place: sections carry on into and out of them."""
    types = catalog_types()
    pieces = [generator(seed * 7 + part).generate(types).text for part in range(3)]
    main_lines = pieces[0].replace("\r\n", "\n").split("\n")
    rng = generator(seed).random
    for number, piece in enumerate(pieces[1:]):
        included = tmp_path / f"inc{number}.conf"
        included.write_text(piece)
        main_lines.insert(rng.randrange(len(main_lines) + 1), f"include = {included}")
    main_lines.insert(rng.randrange(len(main_lines) + 1), f"include = {tmp_path}/missing.conf")
    problems = disagreements("\n".join(main_lines) + "\n", tmp_path / "main.conf")
    assert not problems, "\n--> ".join(problems[:5])
