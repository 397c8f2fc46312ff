"""The wheel works away from the checkout: built, installed in a fresh venv, self-checked."""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from testbed.wheel import REPO, build_wheel

pytestmark = pytest.mark.bundle


@pytest.mark.timeout(900)
def test_wheel_installs_and_self_checks(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    # Run from an unrelated directory so nothing can be found through the checkout.
    result = subprocess.run(
        [str(env_dir / "bin" / "sambatune"), "--self-check", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert str(env_dir) in checks["agents"]["detail"]
    assert "sysinfo" in checks["agents"]["detail"]
    assert str(env_dir) in checks["resources"]["detail"]
    assert str(REPO) not in result.stdout
