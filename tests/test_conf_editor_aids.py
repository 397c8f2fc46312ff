"""What the editor shows beside the text: hints, completion choices, testparm's complaints."""

from __future__ import annotations

from pathlib import Path

import pytest

from sambatune.conf.catalog import ParameterCatalog, load_bundled
from sambatune.conf.completion import parameter_names, value_choices
from sambatune.conf.document import SmbConfDocument
from sambatune.conf.hints import ParameterHints
from sambatune.conf.testparm_messages import locate_messages
from sambatune.remote.local import LocalTransport
from sambatune.remote.samba_ops import run_testparm


@pytest.fixture(scope="module")
def catalog() -> ParameterCatalog:
    return load_bundled((4, 17, 12))


def test_hints_say_default_status_and_our_verdict(catalog: ParameterCatalog) -> None:
    hints = ParameterHints(catalog)
    assert hints.hint("max xmit", "65535") == "default 16644 · SMB1 only · classic advice obsolete"
    assert hints.hint("Max  XMIT", "16644") == "the default · SMB1 only · classic advice obsolete"
    assert hints.hint("oplocks", "true") == "the default"
    assert hints.hint("smb2 max read", "1M").startswith("default 8M")
    assert hints.hint("writable", "yes") == "means read only, inverted · default No"
    assert hints.hint("writable", "no") == "means read only, inverted · the default"
    assert hints.hint("read prediction", "yes") == "removed in Samba 2.2.0 · ignored"
    # Samba 3.0.0 WHATSNEW lists "client code page" as removed; "dos charset" took its job.
    assert hints.hint("client code page", "850") == ("removed in Samba 3.0.0 · ignored · use dos charset")
    assert hints.hint("no such thing", "1") == "unknown to Samba 4.17 · ignored"
    assert hints.hint("acl_xattr:ignore system acls", "yes") == ""
    assert hints.hint("comment", "x") == "default empty"
    # lib/param/param_table.c enum_protocol: SMB2 is SMB2_10 (not SMB2_02), SMB3 is SMB3_11.
    assert hints.hint("server min protocol", "SMB2") == "default SMB2_02 · SMB2 means SMB2_10"
    assert hints.hint("server max protocol", "SMB3") == "the default · SMB3 means SMB3_11"
    assert hints.hint("server max protocol", "SMB3_11") == "the default"
    assert hints.hint("max protocol", "SMB2_02").endswith("default SMB3 = SMB3_11")
    # lib/util/debug.c: max log size counts KiB (max_log_size * 1024).
    assert hints.hint("max log size", "1000") == "default 5000 KiB"


def test_hints_follow_the_catalogs_version() -> None:
    assert (
        ParameterHints(load_bundled((4, 17, 12)))
        .hint("directory name cache size", "200")
        .startswith("default 100")
    )
    assert (
        ParameterHints(load_bundled((4, 19, 0))).hint("directory name cache size", "100")
        == "removed in Samba 4.19.0 · ignored"
    )


def test_completion_offers_synonyms_with_their_parameter(catalog: ParameterCatalog) -> None:
    names = parameter_names(catalog)
    written = [choice.written for choice in names]
    assert "socket options" in written
    writable = next(choice for choice in names if choice.written == "writable")
    assert writable.canonical == "read only" and writable.inverse
    assert writable.label == "writable → read only (inverted)"
    assert written == sorted(written, key=str.lower) or len(written) == len(set(written))


def test_value_choices_for_booleans_and_enums(catalog: ParameterCatalog) -> None:
    assert value_choices(catalog.parameters["oplocks"]) == ["yes", "no"]
    protocols = value_choices(catalog.parameters["server min protocol"])
    assert "SMB2_02" in protocols and "NT1" in protocols
    assert len(protocols) == len(set(protocols))
    case = value_choices(catalog.parameters["case sensitive"])
    assert sorted(case) == ["Auto", "No", "Yes"]
    assert value_choices(catalog.parameters["path"]) == []


@pytest.mark.parametrize(
    ("body", "expected_lines"),
    [
        ("[x]\n path = /tmp\n oplocks = maybe\n", [5]),
        ("[x]\n path = /tmp\n create mode = zz\n", [5]),
        ("[global]\n server min protocol = SMB9\n", [4]),
        ("[global]\n min protocol = SMB9\n", [4]),
        ("[x]\n copy = nowhere\n", [4]),
        ("[global]\n name resolve order = dns\n", [4]),
        ("[global]\n max xmit = 12abc\n", [4]),
    ],
)
@pytest.mark.testbed  # runs Samba's own programs
def test_testparms_complaints_are_found_at_their_lines(
    tmp_path: Path,
    catalog: ParameterCatalog,
    body: str,
    expected_lines: list[int],
) -> None:
    data = f"[global]\n workgroup = W\n{body}".encode()
    path = tmp_path / "smb.conf"
    path.write_bytes(data)
    report = run_testparm(LocalTransport(), str(path))
    assert not report.ok
    located = locate_messages(SmbConfDocument(data), catalog, report.errors)
    lines = sorted({line for item in located for line in item.lines})
    assert lines == expected_lines, located


def test_a_message_that_names_nothing_has_no_line(catalog: ParameterCatalog) -> None:
    located = locate_messages(SmbConfDocument(b"[y\n"), catalog, ["Error loading services."])
    assert located[0].lines == ()


def test_a_check_stops_when_cancelled(catalog: ParameterCatalog) -> None:
    from sambatune.cancellation import CancelToken
    from sambatune.conf.lint import lint
    from sambatune.errors import Cancelled

    data = b"[global]\n max xmit = 12abc\n" + b"".join(
        b"[s%d]\n path = /srv/%d\n oplocks = maybe\n" % (n, n) for n in range(200)
    )
    document = SmbConfDocument(data)
    token = CancelToken()
    assert lint(document, catalog, cancel=token) == lint(document, catalog)
    token.cancel()
    with pytest.raises(Cancelled):
        lint(document, catalog, cancel=token)


def test_a_change_is_described_as_samba_sees_it(catalog: ParameterCatalog) -> None:
    from sambatune.conf.change_summary import describe_changes
    from sambatune.conf.effective import effective_view

    before = SmbConfDocument(b"[global]\n log level = 3\n max xmit = 65535\n[a]\n path = /a\n")
    after = SmbConfDocument(
        b"# tuned\n[global]\n log level = 1\n[a]\n path = /a\n writable = yes\n[b]\n path = /b\n"
    )
    text = describe_changes(effective_view(before, catalog), effective_view(after, catalog))
    assert text == (
        "add [b]; log level 3 → 1 in [global]; unset max xmit in [global]; set read only = No in [a]"
    )
    same = SmbConfDocument(b"[global]\n  log level = 3   # no\n")
    spaced = SmbConfDocument(b"[global]\n\n log level = 3   # no\n")
    assert describe_changes(effective_view(same, catalog), effective_view(spaced, catalog)) == (
        "comments or layout only (nothing Samba reads changed)"
    )
