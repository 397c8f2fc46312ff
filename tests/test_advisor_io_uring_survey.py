"""The io_uring facts read for real: the sysinfo agent on this computer and over SSH
against the test bed's smbd, compared with what the machine itself says, and the advisor's
io_uring judgement that follows from them."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

import pytest

from cli_process import sambatune_cli
from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rules import rule_by_id
from sambatune.advisor.server_facts import ServerFacts
from sambatune.remote.survey import run_survey
from sambatune.remote.transport import Transport
from testbed.smbd import SmbServer


def modules_dir() -> Path:
    """MODULESDIR as this computer's smbd reports it, read here independently of the agent."""
    out = subprocess.run(["smbd", "-b"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "MODULESDIR":
            return Path(value.strip())
    raise AssertionError("smbd -b names no MODULESDIR")


def io_uring_switch() -> int | None:
    switch = Path("/proc/sys/kernel/io_uring_disabled")
    return int(switch.read_text()) if switch.exists() else None


@pytest.fixture
def transport(any_transport: Transport) -> Transport:
    return any_transport


def test_the_survey_reads_the_module_list_and_the_kernel(transport: Transport, smbd: SmbServer) -> None:
    survey = run_survey(transport, config_path=str(smbd.config))
    vfs_dir = modules_dir() / "vfs"
    shared = sorted(p.name[:-3] for p in vfs_dir.glob("*.so"))
    assert shared, f"no VFS modules in {vfs_dir}: the test bed's Samba is incomplete"

    samba = survey.to_json()["samba"]
    assert samba["vfs_modules_dir"] == str(vfs_dir)
    assert set(shared) <= set(samba["vfs_modules"])
    # vfs_default is built into smbd, never a file: it comes from "Builtin modules:".
    assert "default" in samba["vfs_modules"] and "default" not in shared
    assert survey.data["os"]["kernel"] == platform.release()
    assert survey.data["os"]["io_uring_disabled"] == io_uring_switch()

    facts = ServerFacts.from_survey(survey)
    assert facts.kernel_release == platform.release()
    assert facts.has_vfs_module("io_uring") is (vfs_dir / "io_uring.so").exists()
    assert facts.io_uring_disabled == io_uring_switch()


def test_the_advisor_judges_io_uring_from_the_real_facts(transport: Transport, smbd: SmbServer) -> None:
    facts = ServerFacts.from_survey(run_survey(transport, config_path=str(smbd.config)))
    kernel = facts.kernel_version
    assert kernel is not None
    has_module = (modules_dir() / "vfs" / "io_uring.so").exists()
    usable = (
        has_module
        and kernel >= (5, 1, 0)
        and kernel not in {(5, 4, 14), (5, 4, 15)}
        and io_uring_switch() in (None, 0)
    )
    plain = AdvisorInput(ConfigView({smbd.share: {"path": str(smbd.share_path)}}, {}), facts)
    suggested = rule_by_id("io-uring-worth-trying")(plain)
    assert bool(suggested) is usable
    if usable:
        assert suggested[0].change is not None
        assert suggested[0].change.to_json()["value"] == "io_uring"

    named = AdvisorInput(ConfigView({smbd.share: {"vfs objects": "io_uring"}}, {}), facts)
    assert bool(rule_by_id("io-uring-unusable")(named)) is not usable


def test_survey_json_on_the_command_line_carries_the_facts(smbd: SmbServer) -> None:
    result = sambatune_cli("survey", "--config-path", str(smbd.config), "--json")
    assert result.returncode == 0, result.stderr
    survey = json.loads(result.stdout)
    assert survey["os"]["kernel"] == platform.release()
    assert "io_uring_disabled" in survey["os"]
    assert survey["samba"]["vfs_modules_dir"] == str(modules_dir() / "vfs")
    assert ("io_uring" in survey["samba"]["vfs_modules"]) is (modules_dir() / "vfs" / "io_uring.so").exists()
