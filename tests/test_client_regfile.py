""".reg export byte for byte against hand-written files, and import back into a registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from reg_reader import import_reg, parse_reg
from sambatune.client.regfile import RegFile, RegKeyBlock
from sambatune.client.registry import InMemoryRegistry
from sambatune.client.regvalue import (
    REG_BINARY,
    REG_EXPAND_SZ,
    REG_MULTI_SZ,
    REG_QWORD,
    REG_SZ,
    RegValue,
)
from sambatune.errors import InvalidInput

DATA = Path(__file__).parent / "data" / "client"
TEST_KEY = "HKEY_LOCAL_MACHINE\\SOFTWARE\\SambaTune\\Test"
MSTCP = "HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\VxD\\MSTCP"


def all_types_v5() -> RegFile:
    return RegFile(
        5,
        [
            RegKeyBlock(
                TEST_KEY,
                values=[
                    ("", RegValue.string("default")),
                    ("Path", RegValue.string('C:\\Share "x"')),
                    ("Count", RegValue.dword(0)),
                    ("Gone", None),
                    ("Expand", RegValue(REG_EXPAND_SZ, "%SystemRoot%")),
                    ("Multi", RegValue(REG_MULTI_SZ, ("a", "b"))),
                    ("Big", RegValue(REG_QWORD, 0x0123456789ABCDEF)),
                    ("Blob", RegValue(REG_BINARY, bytes(range(40)))),
                    ("Empty", RegValue(REG_BINARY, b"")),
                    ("Lines", RegValue(REG_SZ, "a\r\nb")),
                ],
            ),
            RegKeyBlock("HKEY_LOCAL_MACHINE\\SOFTWARE\\SambaTune\\Old", delete=True),
        ],
    )


def all_types_v4() -> RegFile:
    return RegFile(
        4,
        [
            RegKeyBlock(
                MSTCP,
                values=[
                    ("DefaultRcvWindow", RegValue.string("8192")),
                    ("Tcp1323Opts", None),
                    ("Expand", RegValue(REG_EXPAND_SZ, "%SystemRoot%")),
                ],
            ),
            RegKeyBlock(MSTCP + "\\Parameters", delete=True),
        ],
    )


def test_version5_export_matches_the_hand_written_file_byte_for_byte() -> None:
    expected = (DATA / "all-types-v5.reg").read_bytes()
    produced = all_types_v5().encode()
    assert produced[:2] == b"\xff\xfe", "regedit writes UTF-16 LE with a byte-order mark"
    assert produced == expected


def test_regedit4_export_matches_the_hand_written_file_byte_for_byte() -> None:
    expected = (DATA / "all-types-v4.reg").read_bytes()
    produced = all_types_v4().encode()
    assert produced.startswith(b"REGEDIT4\r\n\r\n")
    assert produced == expected


def test_hex_lines_wrap_where_regedit_wraps_them() -> None:
    text = all_types_v5().text()
    for line in text.split("\r\n"):
        assert len(line) <= 80, line
    assert '"Blob"=hex:00,01,02,03,04,05,06,07,08,09,0a,0b,0c,0d,0e,0f,10,11,12,13,14,15,\\' in text.split(
        "\r\n"
    )


@pytest.mark.parametrize("name", ["all-types-v5.reg", "all-types-v4.reg", "xp-backup-v5.reg"])
def test_parsing_the_expected_files_gives_back_the_same_file(name: str) -> None:
    raw = (DATA / name).read_bytes()
    assert parse_reg(raw).encode() == raw


def test_parsed_values_have_their_types_and_data() -> None:
    parsed = parse_reg((DATA / "all-types-v5.reg").read_bytes())
    assert parsed.version == 5
    assert parsed.blocks[0].values == all_types_v5().blocks[0].values
    assert parsed.blocks[1].delete
    v4 = parse_reg((DATA / "all-types-v4.reg").read_bytes())
    assert v4.blocks[0].values[2] == ("Expand", RegValue(REG_EXPAND_SZ, "%SystemRoot%"))


def test_importing_restores_absent_values_as_absent() -> None:
    registry = InMemoryRegistry.with_values(
        [
            (TEST_KEY, "Gone", RegValue.dword(5)),
            (TEST_KEY, "Count", RegValue.dword(99)),
            (TEST_KEY, "Unrelated", RegValue.string("stays")),
            ("HKEY_LOCAL_MACHINE\\SOFTWARE\\SambaTune\\Old\\Child", "x", RegValue.dword(1)),
        ]
    )
    import_reg(registry, parse_reg((DATA / "all-types-v5.reg").read_bytes()))
    assert registry.get(TEST_KEY, "Gone") is None
    assert registry.get(TEST_KEY, "count") == RegValue.dword(0)  # names ignore case
    assert registry.get(TEST_KEY, "Unrelated") == RegValue.string("stays")
    assert registry.get(TEST_KEY, "") == RegValue.string("default")
    assert registry.get(TEST_KEY, "Lines") == RegValue(REG_SZ, "a\r\nb")
    assert not registry.key_exists("HKEY_LOCAL_MACHINE\\SOFTWARE\\SambaTune\\Old")
    assert not registry.key_exists("HKLM\\SOFTWARE\\SambaTune\\Old\\Child")


def test_parser_reads_lf_files_comments_and_abbreviated_hives() -> None:
    text = (
        "Windows Registry Editor Version 5.00\n\n; a comment\n[HKLM\\Software\\X]\n"
        '"A"=dword:0000000A\n"B"=hex:01,02,\\\n   03\n'
    )
    parsed = parse_reg(text)
    assert parsed.blocks[0].key == "HKEY_LOCAL_MACHINE\\Software\\X"
    assert parsed.blocks[0].values == [
        ("A", RegValue.dword(10)),
        ("B", RegValue(REG_BINARY, b"\x01\x02\x03")),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "not a reg file\r\n",
        'REGEDIT4\r\n"A"=dword:1\r\n',
        "REGEDIT4\r\n[HKEY_NOWHERE\\X]\r\n",
        'REGEDIT4\r\n[HKLM\\X]\r\n"A"=dword:xyz\r\n',
        'REGEDIT4\r\n[HKLM\\X]\r\n"A"="open\r\n',
    ],
)
def test_broken_files_give_clear_errors(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_reg(text.encode("cp1252"))


def test_regedit4_refuses_text_ansi_cannot_hold() -> None:
    regfile = RegFile(4, [RegKeyBlock(MSTCP, values=[("N", RegValue.string("日本"))])])
    with pytest.raises(InvalidInput):
        regfile.encode()
    assert RegFile(5, regfile.blocks).encode().startswith(b"\xff\xfe")
