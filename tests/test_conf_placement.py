"""Every edit lands where Samba reads it, or is refused in one line naming the file.

The reader decides: a line after an include that opens shares is read in the last
included share, a value an included file sets later wins, a share defined in an
included file is edited there. Real layouts (tests/data/vendor_layouts, sources in
its SOURCES.json) are checked against real testparm; so is a sample of the corpus.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sambatune.conf.document import SmbConfDocument
from sambatune.conf.includes import LocalIncludes
from sambatune.conf.placement import EditRefused, placed_add_section, placed_set, placed_unset
from sambatune.conf.testparm_output import dump_by_section
from test_conf_oracle import installed_catalog

LAYOUTS = Path(__file__).parent / "data" / "vendor_layouts"
CORPUS = Path(__file__).parent / "data" / "smbconf_corpus"
VENDORS = sorted(p.name for p in LAYOUTS.iterdir() if p.is_dir())


def _unraid(tmp_path: Path, *, extra: bool = False) -> Path:
    """Unraid's three files, their absolute paths moved into ``tmp_path``."""
    for name in ("smb-names.conf", "smb-shares.conf"):
        shutil.copy(LAYOUTS / "unraid" / name, tmp_path / name)
    if extra:
        (tmp_path / "smb-extra.conf").write_text("[global]\n  deadtime = 30\n")
    text = (LAYOUTS / "unraid" / "smb.conf").read_text()
    text = text.replace("/etc/samba/", f"{tmp_path}/").replace("/boot/config/", f"{tmp_path}/")
    main = tmp_path / "smb.conf"
    main.write_text(text)
    return main


def _issue_example(tmp_path: Path) -> Path:
    (tmp_path / "shares.conf").write_text("[data]\n\tpath = /srv/data\n[media]\n\tpath = /srv/media\n")
    main = tmp_path / "smb.conf"
    main.write_text(f"[global]\n\tworkgroup = W\n\tinclude = {tmp_path}/shares.conf\n")
    return main


def _document(path: Path) -> SmbConfDocument:
    return SmbConfDocument(path.read_bytes(), str(path))


def test_a_global_setting_goes_above_the_include_that_opens_the_shares(tmp_path: Path) -> None:
    main = _issue_example(tmp_path)
    document = _document(main)
    placed_set(document, "global", "deadtime", "15", installed_catalog(), LocalIncludes())
    assert document.text == (
        f"[global]\n\tworkgroup = W\n\tdeadtime = 15\n\tinclude = {tmp_path}/shares.conf\n"
    )


def test_without_reading_the_includes_every_include_is_taken_to_open_a_share(tmp_path: Path) -> None:
    main = _issue_example(tmp_path)
    document = _document(main)
    placed_set(document, "global", "deadtime", "15", installed_catalog(), read_include=None)
    assert document.text.index("deadtime") < document.text.index("include")


def test_an_include_of_global_settings_only_is_not_a_barrier(tmp_path: Path) -> None:
    (tmp_path / "names.conf").write_text("netbios name = NAS\n")
    main = tmp_path / "smb.conf"
    main.write_text(f"[global]\n\tinclude = {tmp_path}/names.conf\n[data]\n\tpath = /srv\n")
    document = _document(main)
    placed_set(document, "global", "netbios name", "OTHER", installed_catalog(), LocalIncludes())
    # After the include, so this line wins over the included one.
    assert document.text.index("netbios name = OTHER") > document.text.index("include")


def test_a_share_in_an_included_file_is_refused_naming_that_file(tmp_path: Path) -> None:
    main = _issue_example(tmp_path)
    document = _document(main)
    before = document.text
    with pytest.raises(EditRefused) as refused:
        placed_set(document, "data", "read only", "no", installed_catalog(), LocalIncludes())
    assert f"{tmp_path}/shares.conf line 1" in refused.value.message
    assert "\n" not in refused.value.message
    assert document.text == before
    with pytest.raises(EditRefused):
        placed_unset(document, "data", "path", installed_catalog(), LocalIncludes())
    with pytest.raises(EditRefused):
        placed_add_section(document, "media", installed_catalog(), LocalIncludes())
    assert document.text == before


def test_a_value_an_included_file_sets_later_wins_and_the_edit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "late.conf").write_text("\tdeadtime = 30\n")
    main = tmp_path / "smb.conf"
    main.write_text(f"[global]\n\tdeadtime = 10\n\tinclude = {tmp_path}/late.conf\n\tworkgroup = W\n")
    document = _document(main)
    before = document.text
    with pytest.raises(EditRefused) as refused:
        placed_set(document, "global", "deadtime", "15", installed_catalog(), LocalIncludes())
    assert f"deadtime = 30 later, in {tmp_path}/late.conf line 1" in refused.value.message
    assert document.text == before
    with pytest.raises(EditRefused) as still:
        placed_unset(document, "global", "deadtime", installed_catalog(), LocalIncludes())
    assert f"{tmp_path}/late.conf line 1" in still.value.message
    assert document.text == before


def test_a_global_only_parameter_is_never_written_into_a_share() -> None:
    document = SmbConfDocument("[global]\n\tworkgroup = W\n[data]\n\tpath = /srv\n")
    with pytest.raises(EditRefused) as refused:
        placed_set(document, "data", "deadtime", "15", installed_catalog())
    assert "only works in [global]" in refused.value.message


def test_a_value_samba_sets_itself_is_refused() -> None:
    document = SmbConfDocument("[global]\n\tworkgroup = W\n[printers]\n\tpath = /var/spool\n")
    with pytest.raises(EditRefused) as refused:
        placed_set(document, "printers", "printable", "no", installed_catalog())
    assert "Samba sets printable itself" in refused.value.message


def test_share_defaults_go_into_the_global_block_read_before_the_shares(tmp_path: Path) -> None:
    """Two [global] blocks, the shares opened by an include between them: a share-level
    default only reaches the shares from the first one."""
    (tmp_path / "shares.conf").write_text("[data]\n\tpath = /srv/data\n")
    main = tmp_path / "smb.conf"
    main.write_text(
        f"[global]\n\tworkgroup = W\n\tinclude = {tmp_path}/shares.conf\n[global]\n\tlog level = 1\n"
    )
    document = _document(main)
    placed_set(document, "global", "oplocks", "no", installed_catalog(), LocalIncludes())
    lines = document.text.splitlines()
    assert lines.index("\toplocks = no") < lines.index(f"\tinclude = {tmp_path}/shares.conf")


# -- real testparm -------------------------------------------------------------------------------


def _testparm(path: Path) -> dict[str, dict[str, str]]:
    result = subprocess.run(
        ["testparm", "-s", "--suppress-prompt", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-500:]
    return dump_by_section(result.stdout)


def _layout(tmp_path: Path, name: str) -> Path:
    if name == "unraid":
        return _unraid(tmp_path)
    [source] = (LAYOUTS / name).glob("*.conf")  # smb.conf, FreeBSD's smb4.conf
    main = tmp_path / source.name
    shutil.copy(source, main)
    return main


@pytest.mark.testbed
@pytest.mark.parametrize("layout", VENDORS)
def test_vendor_layouts_take_set_and_unset_where_testparm_reads_them(tmp_path: Path, layout: str) -> None:
    main = _layout(tmp_path, layout)
    catalog = installed_catalog()
    before = _testparm(main)
    shares = [name for name in before if name not in ("global", "printers", "print$")]
    document = _document(main)
    placed_set(document, "global", "deadtime", "15", catalog, LocalIncludes())
    placed_set(document, "global", "max log size", "1234", catalog, LocalIncludes())
    placed_unset(document, "global", "use sendfile", catalog, LocalIncludes())
    own_share = layout != "unraid" and bool(shares)  # Unraid's live in the included file
    if own_share:
        placed_set(document, shares[0], "comment", "placed by SambaTune", catalog, LocalIncludes())
    main.write_bytes(document.render())
    after = _testparm(main)
    assert after["global"]["deadtime"] == "15"
    assert after["global"]["max log size"] == "1234"
    assert "use sendfile" not in after["global"]
    if own_share:
        assert after[shares[0]]["comment"] == "placed by SambaTune"
    # Nothing else moved: every share keeps its settings.
    for share in shares:
        expected = {
            k: v for k, v in before[share].items() if k != "comment" or not own_share or share != shares[0]
        }
        assert {k: v for k, v in after[share].items() if k in expected} == expected
    if layout == "unraid":
        with pytest.raises(EditRefused) as refused:
            placed_set(_document(main), "Influx", "read only", "yes", catalog, LocalIncludes())
        assert f"{tmp_path}/smb-shares.conf" in refused.value.message


@pytest.mark.testbed
def test_the_issue_example_reads_as_asked_in_testparm(tmp_path: Path) -> None:
    main = _issue_example(tmp_path)
    document = _document(main)
    placed_set(document, "global", "deadtime", "15", installed_catalog(), LocalIncludes())
    main.write_bytes(document.render())
    reading = _testparm(main)
    assert reading["global"]["deadtime"] == "15"
    assert "deadtime" not in reading["media"]


def _corpus_sample() -> list[Path]:
    return sorted(CORPUS.glob("*.conf"))


@pytest.mark.testbed
@pytest.mark.slow
def test_the_corpus_takes_a_global_and_a_share_setting_where_testparm_reads_them(tmp_path: Path) -> None:
    """For every corpus file testparm accepts: a global-only, a share-level default and a
    share's own setting, set through placement, are what testparm then reads."""
    catalog = installed_catalog()
    checked = refused = 0
    for path in _corpus_sample():
        main = tmp_path / path.name
        main.write_bytes(path.read_bytes())
        probe = subprocess.run(
            ["testparm", "-s", "--suppress-prompt", str(main)], capture_output=True, timeout=60
        )
        if probe.returncode != 0:
            continue
        before = dump_by_section(probe.stdout.decode("utf-8", "replace"))
        if "config backend" in before.get("global", {}):
            continue  # Samba reads the registry instead of the file
        document = SmbConfDocument(main.read_bytes(), str(main))
        shares = [s for s in before if s not in ("global", "printers", "print$") and "copy" not in before[s]]
        edits = [("global", "deadtime", "17"), ("global", "max log size", "4321")]
        if shares:
            edits.append((shares[0], "comment", "placed by SambaTune"))
        try:
            for section, name, value in edits:
                placed_set(document, section, name, value, catalog, LocalIncludes())
        except EditRefused:
            refused += 1
            continue
        main.write_bytes(document.render())
        after = dump_by_section(
            subprocess.run(
                ["testparm", "-s", "--suppress-prompt", str(main)], capture_output=True, timeout=60
            ).stdout.decode("utf-8", "replace")
        )
        for section, name, value in edits:
            key = re.sub(r"\s+", " ", section.lower())
            assert after[key if key in after else section][name] == value, (path.name, section, name)
        checked += 1
    print(f"corpus placement: {checked} files checked, {refused} refused")
    assert checked >= 100 and refused <= 5, (checked, refused)


@pytest.mark.testbed  # runs Samba's own programs
def test_the_cli_sets_above_the_include_and_refuses_a_share_of_the_included_file(tmp_path: Path) -> None:
    from cli_process import sambatune_cli
    from test_cli_conf import assert_clean_error

    main = _issue_example(tmp_path)
    result = sambatune_cli("conf", "set", str(main), "global", "deadtime", "15")
    assert result.returncode == 0, result.stderr
    assert _testparm(main)["global"]["deadtime"] == "15"
    before = main.read_bytes()
    refused = sambatune_cli("conf", "set", str(main), "data", "read only", "no")
    assert_clean_error(refused, f"{tmp_path}/shares.conf line 1")
    assert main.read_bytes() == before
