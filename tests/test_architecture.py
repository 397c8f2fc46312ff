"""Rules of the house that a machine can check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "app" / "sambatune"
FORBIDDEN_NAMES = {"utils.py", "helpers.py", "manager.py", "misc.py"}


def test_the_import_contracts_hold() -> None:
    """The layers, Qt only in the GUI, smbprotocol only in the SMB probe: the contracts in
    pyproject.toml ([tool.importlinter]), checked by import-linter."""
    result = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout, result.stdout


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
