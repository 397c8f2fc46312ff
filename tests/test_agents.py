"""The agent launcher and the sysinfo agent, on this computer and over real SSH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sambatune.remote.agents as agents_module
from sambatune.cancellation import CancelToken
from sambatune.errors import AgentFailed, Cancelled, ConnectionFailed
from sambatune.packaged import agent_names, agents_root
from sambatune.remote.agents import AgentRun, run_agent
from sambatune.remote.survey import run_survey
from sambatune.remote.transport import Transport
from testbed.processes import processes_mentioning
from testbed.smbd import SmbServer

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def transport(any_transport: Transport) -> Transport:
    return any_transport


def test_sysinfo_agrees_with_the_machine(transport: Transport, smbd: SmbServer) -> None:
    survey = run_survey(transport, config_path=str(smbd.config))
    data = survey.data
    assert survey.agent["agent"] == "sysinfo"
    assert survey.agent["protocol"] == 1
    nproc = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    assert data["cpu"]["available"] == nproc
    lo = next(n for n in data["nics"] if n["name"] == "lo")
    assert lo["mtu"] == int(Path("/sys/class/net/lo/mtu").read_text())
    assert lo["loopback"]
    smbd_v = subprocess.run(["smbd", "-V"], capture_output=True, text=True).stdout.strip()
    assert data["samba"]["version_text"] == smbd_v
    assert survey.samba_version == tuple(int(x) for x in re.findall(r"\d+", smbd_v)[:3])
    share = next(s for s in survey.shares if s["name"] == smbd.share)
    assert share["path"] == str(smbd.share_path)
    assert share["filesystem"]["exists"]
    assert data["samba"]["running"]
    ours = [i for i in data["samba"]["instances"] if i["config"] == str(smbd.config)]
    assert ours and smbd.port in [p["port"] for p in ours[0]["listening"]]
    assert data["hostname"] == os.uname().nodename
    assert "net.ipv4.tcp_rmem" in data["tcp"]
    assert survey.to_json()["notes"] is not None


SLEEPER = """
import os, time
import agent_runtime

def main(agent, params):
    path = agent.own_path(os.path.join(params["dir"], "sambatune-test-file"))
    with open(path, "w") as handle:
        handle.write("x")
    agent.progress(0.5, "file written")
    while True:
        agent.sleep(0.05)

if __name__ == "__main__":
    agent_runtime.run("sleeper", main)
"""


@pytest.fixture
def sleeper_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    real = agents_module.agent_source

    def source(name: str) -> str:
        return SLEEPER if name == "sleeper" else real(name)

    monkeypatch.setattr(agents_module, "agent_source", source)


@pytest.mark.parametrize("how", ["cancel", "drop-connection", "sigterm"])
def test_agent_stopped_mid_run_leaves_nothing(
    transport: Transport, sleeper_agent: None, tmp_path: Path, how: str
) -> None:
    if how == "drop-connection" and transport.is_local:
        pytest.skip("no connection to drop on this computer")
    run = AgentRun(transport, "sleeper", {"dir": str(tmp_path)})
    events = run.events()
    first = next(events)
    assert first.type == "progress"
    test_file = tmp_path / "sambatune-test-file"
    assert test_file.exists()
    pid = run.hello["pid"]
    assert _alive(pid)
    if how == "cancel":
        run.cancel.cancel()
    elif how == "drop-connection":
        transport.close()  # the whole SSH connection goes away, not only the channel
    else:
        os.kill(pid, 15)
    # A dropped connection is said as such, not as an agent that failed: safe apply
    # reconnects on it to learn what the server has.
    expected = ConnectionFailed if how == "drop-connection" else (Cancelled, AgentFailed)
    with pytest.raises(expected):
        list(events)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_alive(pid) or test_file.exists()):
        time.sleep(0.05)
    assert not _alive(pid), "the agent process outlived its channel"
    assert not test_file.exists(), "the agent left its file behind"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_missing_python_gets_a_clear_message(transport: Transport) -> None:
    with pytest.raises(AgentFailed, match=r"has no /nonexistent/python3: .*Python 3.6 or newer"):
        run_agent(transport, "sysinfo", python="/nonexistent/python3")


def test_too_old_python_is_named(transport: Transport, tmp_path: Path) -> None:
    # A stand-in interpreter that reports itself as Python 3.5: the bootstrap's own
    # version check runs, under a patched sys.version_info.
    fake = tmp_path / "python3.5"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "code = sys.argv[sys.argv.index('-c') + 1]\n"
        "class V(tuple):\n"
        "    pass\n"
        "sys.version_info = V((3, 5, 9, 'final', 0))\n"
        "exec(compile(code, '<bootstrap>', 'exec'))\n"
    )
    fake.chmod(0o755)
    with pytest.raises(AgentFailed, match=r"Python 3.5.9 on .* is too old"):
        run_agent(transport, "sysinfo", python=str(fake))


def test_agent_error_is_reported(transport: Transport, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = (
        "import agent_runtime\n"
        "def main(agent, params):\n"
        "    raise agent_runtime.AgentFailure('not-enough-space', 'disk full in /srv')\n"
        "agent_runtime.run('failing', main)\n"
    )
    real = agents_module.agent_source
    monkeypatch.setattr(agents_module, "agent_source", lambda n: failing if n == "failing" else real(n))
    with pytest.raises(AgentFailed, match="disk full in /srv") as caught:
        run_agent(transport, "failing")
    assert caught.value.code == "agent-not-enough-space"


def test_agents_are_python36_compatible() -> None:
    files = sorted(str(p) for p in (REPO / "ssh_agents").glob("*.py") if p.name != "__init__.py")
    result = subprocess.run(
        [str(Path(sys.executable).parent / "vermin"), "-t=3.6-", "--no-tips", "--violations", *files],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_agents_use_only_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names) | {"agent_runtime"}
    for path in (REPO / "ssh_agents").glob("*.py"):
        for match in re.finditer(r"^\s*(?:import|from)\s+([\w.]+)", path.read_text(), re.M):
            assert match.group(1).split(".")[0] in stdlib, f"{path.name} imports {match.group(1)}"


def test_packaged_agents_are_found() -> None:
    assert "sysinfo" in agent_names()
    assert (agents_root() / "agent_runtime.py").is_file()


def test_cancel_before_result(transport: Transport, sleeper_agent: None, tmp_path: Path) -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises((Cancelled, AgentFailed)):
        run_agent(transport, "sleeper", {"dir": str(tmp_path)}, cancel=cancel)
    assert not processes_mentioning("sambatune-test-file")
