"""The import contracts (pyproject.toml, [tool.importlinter]) catch what they promise to.

Each case copies the package, adds one import that breaks one rule of the house, and runs
import-linter with the project's own contracts on the copy: that contract, and only that
one, must be reported broken.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Proofs that the contracts catch what they promise: each runs import-linter on a copy
# of the package. tests/test_architecture.py checks the contracts themselves every time.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_copy(tmp_path: Path, module: str, line: str) -> str:
    """import-linter's report on a copy of the package with ``line`` added to ``module``."""
    copy = tmp_path / "src"
    shutil.copytree(
        REPO / "app" / "sambatune", copy / "sambatune", ignore=shutil.ignore_patterns("__pycache__")
    )
    target = copy / "sambatune" / module
    target.write_text(target.read_text() + f"\n{line}  # a deliberate violation\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(REPO / "pyproject.toml")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0, result.stdout
    return " ".join(result.stdout.split())  # long names wrap across lines


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # A lower layer importing a higher one.
        ("remote/transport.py", "import sambatune.conf.lint", "Layers"),
        ("conf/document.py", "import sambatune.advisor.advice", "Layers"),
        ("advisor/advice.py", "import sambatune.wizard.machine", "Layers"),
        ("wizard/store.py", "import sambatune.ui.session", "Layers"),
        # Two engines of one layer importing each other.
        ("bench/records.py", "import sambatune.client.plan", "Layers"),
        # The remote end importing the saved servers, which import it (a cycle).
        ("remote/connection.py", "import sambatune.profiles", "Layers"),
        # The shared bottom modules stay at the bottom.
        ("merge.py", "import sambatune.wizard.store", "The shared modules"),
        # Qt only in the GUI.
        ("conf/lint.py", "import PySide6.QtCore", "Qt only in the GUI"),
        # smbprotocol only in the SMB probe.
        ("bench/smb_client.py", "import smbprotocol.connection", "smbprotocol only"),
    ],
)
def test_a_deliberate_violation_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    report = _lint_copy(tmp_path, module, line)
    assert "Contracts: 3 kept, 1 broken." in report, report
    assert report.split("Broken contracts", 1)[1].lstrip("- ").startswith(contract), report
