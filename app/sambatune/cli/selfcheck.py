"""``sambatune --self-check``: is this installation complete and usable?

Checks what an installed wheel or a bundled app must carry (agents, resources,
libraries) without touching the network. With ``--gui`` it also opens the main
window offscreen, which proves the Qt platform plugin loads.
"""

from __future__ import annotations

import importlib
import platform
import shutil
import sys
from dataclasses import dataclass

from sambatune.cli.output import print_json
from sambatune.json_fields import FieldsAsJson


@dataclass
class Check(FieldsAsJson):
    name: str
    ok: bool
    detail: str


def check_agents() -> Check:
    from sambatune.packaged import agent_names, agent_source, agents_root

    names = agent_names()
    if not names:
        return Check("agents", False, f"no agents found in {agents_root()}")
    for name in [*names, "agent_runtime"]:
        try:
            compile(agent_source(name), f"{name}.py", "exec")
        except (OSError, SyntaxError) as exc:
            return Check("agents", False, f"{name}: {exc}")
    return Check("agents", True, f"{len(names)} agents in {agents_root()}: {', '.join(names)}")


def check_resources() -> Check:
    from sambatune.packaged import resources_root

    root = resources_root()
    names = sorted(entry.name for entry in root.iterdir() if not entry.name.startswith("_"))
    if not names:
        return Check("resources", False, f"no resources in {root}")
    return Check("resources", True, f"{root}: {', '.join(names)}")


def check_module(name: str) -> Check:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        return Check(name, False, f"cannot import: {exc}")
    version = getattr(module, "__version__", "")
    return Check(name, True, f"version {version}" if version else "importable")


def check_advisor_rules() -> Check:
    """The advisor finds its rule modules by listing its package: a bundle that left
    one out would advise silently less. Every topic has computed rules or data entries."""
    try:
        from sambatune.advisor.rules import RULES, TOPICS
    except Exception as exc:
        return Check("advisor rules", False, f"cannot load: {exc}")
    empty = [topic for topic in TOPICS if not any(r.topic == topic for r in RULES)]
    if empty:
        return Check("advisor rules", False, f"no rules for: {', '.join(empty)}")
    return Check("advisor rules", True, f"{len(RULES)} rules in {len(TOPICS)} topics")


def check_benchmark_kinds() -> Check:
    """The benchmark kinds are found by listing their package, as the advisor's rules."""
    try:
        from sambatune.bench.kinds import KINDS
    except Exception as exc:
        return Check("benchmark kinds", False, f"cannot load: {exc}")
    if not KINDS:
        return Check("benchmark kinds", False, "none found")
    return Check("benchmark kinds", True, ", ".join(KINDS))


def check_smb_client() -> Check:
    """The SMB probe's libraries, used as the probe uses them (no network)."""
    try:
        import spnego

        from sambatune.bench.smb_bulk import (
            AES_CMAC,
            AES_GMAC,
            HMAC_SHA256,
            Signer,
            probe_connection_class,
        )

        probe_connection_class()
        token = spnego.client("sambatune-guest", "guest", protocol="ntlm").step()
        for algorithm in (HMAC_SHA256, AES_CMAC, AES_GMAC):
            Signer(algorithm, bytes(16)).sign(bytes(64), bytes(16), message_id=1, response=True)
    except Exception as exc:
        return Check("smb client", False, f"smbprotocol cannot work here: {type(exc).__name__}: {exc}")
    return Check(
        "smb client",
        True,
        f"smbprotocol with NTLM (a {len(token or b'')}-byte logon "
        "token) and HMAC-SHA256, AES-CMAC and AES-GMAC signing",
    )


def check_lint_process() -> Check:
    """The editor's check runs in a child of this program: start one and lint a line."""
    from sambatune.conf.catalog import load_bundled
    from sambatune.conf.lint_process import LintProcess

    process = LintProcess()
    try:
        summary = process.check(b"[global]\n   socket options = SO_RCVBUF=8192\n", None, load_bundled(), None)
    except Exception as exc:
        return Check("lint process", False, f"the editor's check cannot run: {exc}")
    finally:
        process.close()
    codes = sorted({finding.code for finding in summary.findings})
    return Check(
        "lint process",
        bool(codes),
        f"a child {sys.executable} checked a line: {', '.join(codes) or 'no findings'}",
    )


def check_data_dirs() -> Check:
    from sambatune.appdirs import config_dir, data_dir

    try:
        paths = [config_dir(), data_dir()]
        for path in paths:
            probe = path / ".write-test"
            probe.write_text("ok")
            probe.unlink()
    except OSError as exc:
        return Check("data directories", False, str(exc))
    return Check("data directories", True, ", ".join(str(p) for p in paths))


def check_local_tools() -> Check:
    """Informational: Samba tools on this computer (needed only to manage it locally)."""
    found = {tool: shutil.which(tool) for tool in ("smbclient", "testparm", "smbd")}
    detail = ", ".join(f"{k}: {v or 'absent'}" for k, v in found.items())
    return Check("local samba tools", True, detail)


def check_gui() -> Check:
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from sambatune.ui.app import open_main_window_once

        title, platform_plugin = open_main_window_once()
    except Exception as exc:
        return Check("gui", False, f"the main window did not open: {exc}")
    return Check("gui", True, f"main window opened ({title}) with the {platform_plugin} platform plugin")


def check_plot() -> Check:
    try:
        from sambatune.ui.app import draw_live_plot_once

        points, colored, libraries = draw_live_plot_once()
    except Exception as exc:
        return Check("plot", False, f"the live plot did not draw: {type(exc).__name__}: {exc}")
    ok = points == 20 and colored > 0
    return Check(
        "plot", ok, f"live plot ({libraries}) drew {points} points, {colored} pixels of the first curve"
    )


def run_self_check(*, json_output: bool, gui: bool) -> int:
    from sambatune import __version__

    checks = [
        check_agents(),
        check_resources(),
        check_module("paramiko"),
        check_module("platformdirs"),
        check_module("numpy"),
        check_smb_client(),
        check_advisor_rules(),
        check_benchmark_kinds(),
        check_lint_process(),
        check_data_dirs(),
        check_local_tools(),
    ]
    if gui:
        checks.append(check_gui())
        checks.append(check_plot())
    ok = all(c.ok for c in checks)
    report = {
        "ok": ok,
        "version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "frozen": bool(getattr(sys, "frozen", False)),
        "checks": [c.to_json() for c in checks],
    }
    if json_output:
        print_json(report)
    else:
        print(f"sambatune {__version__} on Python {report['python']} ({report['platform']})")
        for check in checks:
            print(f"  [{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
    return 0 if ok else 1
