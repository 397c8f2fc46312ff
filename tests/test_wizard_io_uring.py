"""io_uring through the wizard's one-change loop, for real: on this test bed smbd has
vfs_io_uring and the kernel runs it, so the advisor suggests it, the wizard applies it
(last in the VFS stack), measures before and after, judges, and reverts byte for byte."""

from __future__ import annotations

import pytest

from sambatune.remote.transport import Transport
from sambatune.wizard.machine import TuningWizard
from sambatune.wizard.measure import COPY, MeasureSpec
from sambatune.wizard.store import WizardStore
from testbed.smbd import SmbServer


def test_io_uring_suggested_applied_last_measured_and_reverted(fresh_smbd: SmbServer, ssh: Transport) -> None:
    config = fresh_smbd.config
    original = config.read_bytes()
    spec = MeasureSpec(share=fresh_smbd.share, test=COPY, size=4 << 20, runs=3, warmup=1)
    wizard = TuningWizard.start(WizardStore(), ssh, spec, config_path=str(config))
    wizard.run_survey(ssh)
    modules = (wizard.survey.data.get("samba") or {}).get("vfs_modules") if wizard.survey else None
    if not modules or "io_uring" not in modules:
        pytest.skip("this smbd has no vfs_io_uring")
    findings = wizard.find_problems(ssh)
    index = next((i for i, f in enumerate(findings) if f["id"] == "io-uring-worth-trying"), None)
    assert index is not None, [f["id"] for f in findings]
    wizard.measure_baseline(ssh)
    chosen = wizard.choose(ssh, index)
    added = [
        line for line in chosen.data["diff"].splitlines() if line.startswith("+") and "vfs objects" in line
    ]
    assert added and added[0].rstrip().endswith("io_uring"), chosen.data["diff"]
    applied = wizard.apply(ssh)
    assert applied.data["ok"] is True, applied.data["message"]
    # smbd serves the share with io_uring in its stack: a real read through it works.
    done = fresh_smbd.smbclient("ls")
    assert done.returncode == 0, done.stdout + done.stderr
    wizard.measure_again(ssh)
    verdict = wizard.compare()
    assert {c.series for c in verdict.comparisons} == {"put", "get"}
    assert all(c.changed_lines for c in verdict.comparisons)
    wizard.decide(ssh, keep=False)
    assert config.read_bytes() == original
