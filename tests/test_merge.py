"""Unsaved edits put on a file someone else changed (the editor following the live smb.conf)."""

from __future__ import annotations

import pytest

from sambatune.merge import merge3

BASE = b"[global]\n  workgroup = W\n  log level = 1\n[fresh]\n  path = /srv/fresh\n"


@pytest.mark.parametrize(
    ("base", "mine", "theirs", "merged"),
    [
        # Apart: both changes.
        (
            BASE,
            BASE.replace(b"W\n", b"MINE\n"),
            BASE + b"[more]\n  path = /srv/more\n",
            BASE.replace(b"W\n", b"MINE\n") + b"[more]\n  path = /srv/more\n",
        ),
        # A share added after a share the other side took out (a restore from history).
        (
            BASE,
            BASE + b"[second]\n  path = /srv/second\n",
            b"[global]\n  workgroup = W\n  log level = 1\n",
            b"[global]\n  workgroup = W\n  log level = 1\n[second]\n  path = /srv/second\n",
        ),
        # The same change on both sides.
        (BASE, BASE.replace(b"= 1", b"= 0"), BASE.replace(b"= 1", b"= 0"), BASE.replace(b"= 1", b"= 0")),
        # Neighbouring lines of one section.
        (
            BASE,
            BASE.replace(b"W\n", b"MINE\n"),
            BASE.replace(b"= 1", b"= 2"),
            BASE.replace(b"W\n", b"MINE\n").replace(b"= 1", b"= 2"),
        ),
        # CRLF and no newline at the end.
        (b"a\r\nb", b"a\r\nb\r\nc", b"x\r\nb", b"x\r\nb\r\nc"),
    ],
)
def test_edits_apart_from_the_other_change_are_merged(
    base: bytes, mine: bytes, theirs: bytes, merged: bytes
) -> None:
    assert merge3(base, mine, theirs) == merged


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        # The same line, differently.
        (BASE.replace(b"= 1", b"= 0"), BASE.replace(b"= 1", b"= 3")),
        # Two additions at one place: which goes first is a guess.
        (BASE + b"# mine\n", BASE + b"# theirs\n"),
        # A parameter added to [fresh], which the other side took out: it would land in
        # [global].
        (BASE + b"  guest ok = yes\n", b"[global]\n  workgroup = W\n  log level = 1\n"),
        # An edit inside lines the other side replaced.
        (
            BASE.replace(b"  path = /srv/fresh\n", b"  path = /srv/fresh\n  read only = no\n"),
            BASE.replace(b"[fresh]\n  path = /srv/fresh\n", b""),
        ),
    ],
)
def test_edits_that_clash_are_left_to_the_admin(mine: bytes, theirs: bytes) -> None:
    assert merge3(BASE, mine, theirs) is None


def test_a_section_added_before_a_renamed_one_keeps_its_own_lines() -> None:
    base = b"[g]\n a = 1\n[s]\n b = 2\n"
    mine = b"[g]\n a = 1\n[new]\n c = 3\n[s]\n b = 2\n"
    assert merge3(base, mine, base.replace(b"[s]", b"[t]")) == mine.replace(b"[s]", b"[t]")
    # ... but not when what follows it would join the new section.
    theirs = b"[g]\n a = 1\n d = 4\n b = 2\n"
    assert merge3(base, mine, theirs) is None
