"""The two places the CLI reaches into argparse's private parts, to keep start-up cheap
(cli/main.py): a formatter built once per terminal width, and translations looked up
once. A Python release that changes those internals must fail here, not change the
help or the error messages quietly."""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io

import pytest

from sambatune.cli.main import _Parser, build_parser

#: What the formatter knows that depends on the terminal, not on the parser.
WIDTH_ATTRIBUTES = {"_width", "_max_help_position"}


def test_the_formatter_override_builds_what_argparse_would_but_for_the_width() -> None:
    assert list(inspect.signature(argparse.ArgumentParser._get_formatter).parameters) == ["self"]
    parser = build_parser(["conf"])
    ours = parser._get_formatter()
    theirs = argparse.ArgumentParser._get_formatter(parser)
    assert type(ours) is type(theirs)
    assert set(vars(ours)) == set(vars(theirs))
    settings = {
        name for name, value in vars(theirs).items() if isinstance(value, (str, int, float, bool, type(None)))
    }
    differing = {name for name in settings - WIDTH_ATTRIBUTES if vars(ours)[name] != vars(theirs)[name]}
    # A new argument (colour, prefix characters) would show up here.
    assert differing == set(), differing
    assert isinstance(parser, _Parser) and _Parser._width is not None


def test_the_cached_translations_are_the_ones_argparse_uses() -> None:
    parser = build_parser(["conf"])
    cached = argparse._  # type: ignore[attr-defined]
    assert hasattr(cached, "cache_info"), "argparse no longer looks messages up through _"
    before = cached.cache_info()
    error = io.StringIO()
    with contextlib.redirect_stderr(error), pytest.raises(SystemExit):
        parser.parse_args(["--no-such-option"])
    assert "unrecognized arguments: --no-such-option" in error.getvalue()
    after = cached.cache_info()
    assert after.hits + after.misses > before.hits + before.misses
