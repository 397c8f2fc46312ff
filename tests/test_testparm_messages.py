"""testparm's warnings reach the admin whole, as testparm wrote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sambatune.remote.local import LocalTransport
from sambatune.remote.samba_ops import messages_of_testparm, run_testparm


@pytest.mark.testbed  # runs Samba's own programs
def test_a_warning_over_two_lines_is_one_message(tmp_path: Path) -> None:
    config = tmp_path / "smb.conf"
    config.write_text("[global]\n security = ads\n realm = X.LAN\n workgroup = X\n password server = dc1\n")
    report = run_testparm(LocalTransport(), str(config))
    assert report.ok
    joined = [w for w in report.warnings if "password server" in w]
    # The second line used to be dropped: the warning ended mid-sentence.
    assert joined and joined[0].endswith("to contact automatically).")


def test_separate_messages_stay_separate() -> None:
    stderr = (
        "Load smb config files from x\nLoaded services file OK.\n\n"
        "WARNING: one\n(more of one)\n\nidmap range not specified for domain '*'\n"
        "ERROR: Invalid idmap range for domain *!\n"
    )
    assert messages_of_testparm(stderr) == [
        "Load smb config files from x",
        "Loaded services file OK.",
        "WARNING: one (more of one)",
        "idmap range not specified for domain '*'",
        "ERROR: Invalid idmap range for domain *!",
    ]
