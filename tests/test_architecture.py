"""Rules of the house that a machine can check."""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "app" / "sambatune"
QT_MODULES = {"PySide6", "shiboken6", "pyqtgraph", "pytestqt"}
FORBIDDEN_NAMES = {"utils.py", "helpers.py", "manager.py", "misc.py"}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_never_imports_qt() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "ui":
            continue
        qt = {name.split('.')[0] for name in _imported_modules(path)} & QT_MODULES
        if qt:
            offenders.append(f"{relative}: {sorted(qt)}")
    assert not offenders, "Qt imported outside sambatune.ui: " + "; ".join(offenders)


def test_core_never_imports_the_ui() -> None:
    """Only the two faces (cli, ui) may reach into sambatune.ui; the core never does."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("ui", "cli"):
            continue
        if any(name.startswith("sambatune.ui") for name in _imported_modules(path)):
            offenders.append(str(relative))
    assert not offenders, f"core modules reach into the UI: {offenders}"


def test_no_modules_named_for_no_job() -> None:
    bad = [p for p in [*PACKAGE.rglob("*.py"), *(REPO / "ssh_agents").glob("*.py")]
           if p.name in FORBIDDEN_NAMES]
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
