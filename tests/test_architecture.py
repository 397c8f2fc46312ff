"""Rules of the house that a machine can check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package supports 3.10 (pyproject's requires-python), whose stdlib has no tomllib
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "app" / "sambatune"
FORBIDDEN_NAMES = {"utils.py", "helpers.py", "manager.py", "misc.py"}


def test_the_import_contracts_hold() -> None:
    """The layers, Qt only in the GUI, smbprotocol only in the SMB probe: the contracts in
    pyproject.toml ([tool.importlinter]), checked by import-linter."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout, result.stdout


def test_no_modules_named_for_no_job() -> None:
    bad = [
        p for p in [*PACKAGE.rglob("*.py"), *(REPO / "ssh_agents").glob("*.py")] if p.name in FORBIDDEN_NAMES
    ]
    assert not bad


def test_every_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        "sambatune" + "".join("." + part for part in init.parent.relative_to(PACKAGE).parts)
        for init in PACKAGE.rglob("__init__.py")
    }
    missing = found - listed
    assert not missing, f"add these to [tool.setuptools] packages: {sorted(missing)}"


@pytest.mark.slow  # collects the whole suite in a child pytest
def test_the_fast_tier_leaves_out_what_needs_the_test_bed() -> None:
    """`make check` selects by markers (tests/conftest.py sets `testbed` from the fixtures
    a test uses): a test of the test bed that slipped into the fast tier would fail there
    on a machine without Samba."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not testbed and not slow and not bundle",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    chosen = [line for line in result.stdout.splitlines() if "::" in line]
    for needs_bed in (
        "tests/test_bundle.py::",
        "tests/test_parameter_facts_smbd.py::",
        "tests/test_client_netns.py::",
        "tests/test_gui_benchmarks.py::",
        "tests/test_gui_apply.py::",
        "tests/test_conf_corpus.py::test_real_file_reads_like_testparm",
    ):
        assert not [line for line in chosen if line.startswith(needs_bed)], needs_bed
    for quick in (
        "tests/test_conf_document.py::",
        "tests/test_advisor_rules.py::",
        "tests/test_lint_process.py::",
        "tests/test_units.py::",
        "tests/test_conf_corpus.py::test_real_file_saves_byte_for_byte",
    ):
        assert [line for line in chosen if line.startswith(quick)], quick
    over_ssh = [line for line in result.stdout.splitlines() if "[ssh]" in line]
    assert over_ssh == [], over_ssh[:3]


def module_level_imports(path: Path, package: str) -> set[str]:
    """The sambatune modules a module imports as it loads: not in functions, classes
    or TYPE_CHECKING blocks."""
    import ast

    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                found.add(inner.module)
                found.update(f"{inner.module}.{alias.name}" for alias in inner.names)
            elif isinstance(inner, ast.Import):
                found.update(alias.name for alias in inner.names)
    return {name for name in found if name.split(".")[0] == package}


def test_no_cycle_of_module_level_imports() -> None:
    """The window imports ahead in a thread (ui/import_ahead.py) while the GUI thread may
    import too; two threads can only block each other on a cycle of imports made as
    modules load, so there must be none."""
    app = Path(__file__).resolve().parents[1] / "app"
    modules = {
        ".".join(path.relative_to(app).with_suffix("").parts).removesuffix(".__init__"): path
        for path in (app / "sambatune").rglob("*.py")
    }
    edges = {
        name: {
            other for other in module_level_imports(path, "sambatune") if other in modules and other != name
        }
        for name, path in modules.items()
    }
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(name: str, stack: list[str]) -> None:
        state[name] = 1
        stack.append(name)
        for other in sorted(edges[name]):
            if state.get(other) == 1:
                cycles.append([*stack[stack.index(other) :], other])
            elif other not in state:
                visit(other, stack)
        stack.pop()
        state[name] = 2

    for name in sorted(modules):
        if name not in state:
            visit(name, [])
    assert cycles == []
