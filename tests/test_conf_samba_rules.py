"""What Samba sets on its own while it loads smb.conf, read by SambaTune as testparm does.

Each rule cites where Samba does it; each file is also checked against the installed
testparm with the corpus comparison (tests/test_conf_corpus.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.effective import effective_view
from test_conf_corpus import disagreements
from test_conf_oracle import installed_catalog

CASES: dict[str, tuple[str, dict[str, dict[str, str | None]]]] = {
    # lib/param/loadparm.c, lpcfg_service_ok: [printers] is made printable and not
    # browseable; another printable share keeps what it says.
    "printers": (
        "[printers]\n  path = /var/spool/samba\n  browseable = yes\n[lp]\n  path = /tmp\n  printable = yes\n",
        {"printers": {"browseable": "No", "printable": "Yes"}, "lp": {}},
    ),
    # lpcfg_service_ok: no path (and not [homes], not a DFS proxy) makes it unavailable.
    "no-path": (
        "[global]\n  workgroup = X\n[nopath]\n  comment = c\n[homes]\n  comment = h\n",
        {"nopath": {"available": "No"}, "homes": {}},
    ),
    # source3/param/loadparm.c, process_registry_globals: include = registry in [global]
    # sets registry shares = yes.
    "registry": ("[global]\n  include = registry\n", {"global": {"registry shares": "Yes"}}),
    # lib/param/loadparm.c, handle_idmap_uid/handle_idmap_gid/handle_idmap_backend.
    "idmap-legacy": (
        "[global]\n  idmap uid = 10000-20000\n  idmap backend = tdb\n",
        {"global": {"idmap config * : range": "10000-20000", "idmap config * : backend": "tdb"}},
    ),
    # source3/param/loadparm.c, init_locals (each time [global] ends) and
    # lp_enforce_ad_dc_settings (after the whole file): an AD DC's own settings.
    "ad-dc": (
        "[global]\n  server role = active directory domain controller\n"
        "  passdb backend = tdbsam\n  map archive = yes\n  realm = X.LAN\n"
        "[sysvol]\n  path = /tmp\n",
        {
            "global": {
                "passdb backend": "samba_dsdb",
                "map archive": "No",
                "vfs objects": "dfs_samba4 acl_xattr",
                "rpc_server:default": "external",
            }
        },
    ),
    # init_locals keeps VFS modules the admin chose; a role set after the last share
    # is too late for the share defaults, not for the end-of-load settings.
    "ad-dc-own-vfs": (
        "[global]\n  server role = dc\n  vfs objects = catia\n  realm = X.LAN\n[data]\n  path = /tmp\n",
        {"global": {"vfs objects": "catia", "passdb backend": "samba_dsdb"}},
    ),
    "ad-dc-role-last": (
        "[data]\n  path = /tmp\n[global]\n  server role = dc\n  realm = X.LAN\n",
        {"global": {"passdb backend": "samba_dsdb"}},
    ),
    # source3/param/loadparm.c, lp_load_ex: config backend = registry drops every global
    # and share read from the file and starts over from the registry (empty here), whose
    # process_registry_globals sets registry shares = yes.
    "registry-backend": (
        "[global]\n  workgroup = FOO\n  config backend = registry\n  log level = 2\n[data]\n  path = /srv\n",
        {"global": {"registry shares": "Yes", "workgroup": None, "log level": None}},
    ),
    # copy = another share: the copied values are part of the share (source3 copy_service).
    "copy": (
        "[base]\n  path = /srv\n  read only = no\n[copy]\n  copy = base\n  comment = c\n",
        {"copy": {"path": "/srv", "read only": "no", "comment": "c"}},
    ),
}


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("name", sorted(CASES))
def test_samba_sets_it_and_sambatune_says_so(name: str, tmp_path: Path) -> None:
    text, expected = CASES[name]
    path = tmp_path / f"{name}.conf"
    path.write_text(text)
    view = effective_view(SmbConfDocument.read(str(path)), installed_catalog())
    shown = view.to_json()
    for section, values in expected.items():
        for parameter, value in values.items():
            assert shown[section].get(parameter) == value, (section, parameter, shown)
    assert not disagreements(path), disagreements(path)


@pytest.mark.testbed  # runs Samba's own programs
def test_a_registry_backend_leaves_nothing_of_the_file_and_lint_says_so(tmp_path: Path) -> None:
    from sambatune.conf.lint import lint

    path = tmp_path / "backend.conf"
    path.write_text(CASES["registry-backend"][0])
    view = effective_view(SmbConfDocument.read(str(path)), installed_catalog())
    assert list(view.to_json()) == ["global"]  # [data] is gone, as in testparm's dump
    assert view.registry_backend is not None and view.registry_backend.line == 3
    [finding] = [
        f for f in lint(SmbConfDocument.read(str(path)), installed_catalog()) if f.code == "registry-backend"
    ]
    assert finding.line == 3 and finding.severity == "warning" and "net conf" in finding.message


def test_the_ad_dc_share_defaults_are_not_applied_when_the_role_comes_last(tmp_path: Path) -> None:
    path = tmp_path / "late.conf"
    path.write_text(CASES["ad-dc-role-last"][0])
    view = effective_view(SmbConfDocument.read(str(path)), installed_catalog())
    assert "map archive" not in view.to_json()["global"]
    assert view.resolve("data", "map archive").source == "default"


# source3/utils/testparm.c, do_global_parameter_checks and do_idmap_check: what makes
# testparm refuse a file smbd would load. Each must be a lint error with its own code.
REFUSED = {
    "wins": ("[global]\n  wins support = yes\n  wins server = 10.0.0.1\n", "testparm-wins"),
    "separator": ("[global]\n  winbind separator = ++\n", "testparm-winbind-separator"),
    "passwd-user": (
        "[global]\n  unix password sync = yes\n  passwd program = /usr/bin/passwd\n",
        "testparm-passwd-program-user",
    ),
    "ads-realm": ("[global]\n  security = ads\n  workgroup = X\n", "testparm-ads-realm"),
    "default-backend": (
        "[global]\n  security = ads\n  realm = X.LAN\n"
        "  idmap config * : backend = rid\n  idmap config * : range = 1-100\n",
        "testparm-idmap-default-backend",
    ),
    "overlap": (
        "[global]\n  security = ads\n  realm = X.LAN\n  idmap config * : range = 1000-5000\n"
        "  idmap config X : backend = rid\n  idmap config X : range = 4000-9000\n",
        "testparm-idmap-overlap",
    ),
}
ACCEPTED = {
    # Two idmap_ad ranges may overlap; a standalone server's ranges are not checked.
    "ad-overlap": "[global]\n  security = ads\n  realm = X.LAN\n  idmap config * : range = 1-99\n"
    "  idmap config A : backend = ad\n  idmap config A : range = 1000-5000\n"
    "  idmap config B : backend = ad\n  idmap config B : range = 4000-9000\n",
    "standalone": "[global]\n  idmap config * : range = 1000-5000\n"
    "  idmap config X : backend = rid\n  idmap config X : range = 4000-9000\n",
    "pam": "[global]\n  unix password sync = yes\n  pam password change = yes\n",
    # Samba replaces a UTF-8 dos charset with CP850 while loading (handle_dos_charset).
    "dos-charset": "[global]\n  dos charset = UTF-8\n",
}


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_testparm_refuses_is_a_lint_error(name: str, tmp_path: Path) -> None:
    from sambatune.conf.lint import lint
    from test_conf_corpus import verdict

    text, code = REFUSED[name]
    path = tmp_path / f"{name}.conf"
    path.write_text(text)
    assert not verdict(path)[0], "testparm accepts it"
    document = SmbConfDocument.read(str(path))
    errors = [f for f in lint(document, installed_catalog()) if f.severity == "error"]
    assert [f.code for f in errors] == [code], errors
    assert not disagreements(path), disagreements(path)
    if code.startswith("testparm-"):  # loaded, printed, and then exit 1: say just that
        from sambatune.conf.testparm_checks import ENDS_WITH_ERROR

        printed = subprocess.run(["testparm", "-s", str(path)], capture_output=True, text=True)
        assert printed.returncode == 1 and "[global]" in printed.stdout
        assert errors[0].message.endswith(ENDS_WITH_ERROR)


@pytest.mark.testbed  # runs Samba's own programs
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_what_testparm_accepts_has_no_lint_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.conf"
    path.write_text(ACCEPTED[name])
    assert not disagreements(path), disagreements(path)
