"""A value in the form testparm prints it, and whether Samba accepts it at all.

testparm prints what Samba *stored*, so ``yes``, ``True`` and ``1`` all print as
``Yes``, ``64k`` prints as ``65536``, ``755`` as ``0755``, and list items are
re-joined. :func:`testparm_form` computes that form from the text of a setting;
None means Samba refuses the value (and with it the whole file). Comparing our
effective view with testparm is done in this form.
"""

from __future__ import annotations

from sambatune.conf.catalog import Parameter
from sambatune.conf.syntax import name_key
from sambatune.conf.values import (
    apply_list,
    boolean_text,
    list_text,
    octal_text,
    parse_boolean,
    parse_bytes,
    parse_integer,
    parse_octal,
    split_list,
)

#: Parameters whose setter does more than store the typed value (lib/param handlers).
_UPPER_CASED = frozenset({"realm"})
#: testparm reports its own command-line log level, never the file's.
NOT_SHOWN_BY_TESTPARM = frozenset({"log level"})


def enum_form(parameter: Parameter, text: str) -> str | None:
    """The printed spelling of an enum value (matching ignores case and blanks); None if refused."""
    key = name_key(text)
    printed = parameter.enum_print.get(key)
    if printed is not None:
        return printed
    for spelling in parameter.enum_values:
        if name_key(spelling) == key:
            return spelling
    return None


def _upper(text: str) -> str:
    # Samba upper-cases character by character (toupper_w); Python's upper() may turn
    # one character into two (ß -> SS), which Samba never does.
    if text.isascii():
        return text.upper()
    return "".join(upper if len(upper := c.upper()) == 1 else c for c in text)


def testparm_form(parameter: Parameter, text: str, current: str | None = None) -> str | None:
    """How testparm prints ``text`` stored in ``parameter``, or None if Samba refuses it.

    ``current`` is the value before this assignment in testparm's form (for ``list``
    parameters, where ``+item``/``-item`` edit it); the default when omitted.
    """
    kind = parameter.type
    if kind == "boolean" or kind == "boolean-rev":
        flag = parse_boolean(text)
        return None if flag is None else boolean_text(flag)
    if kind == "integer":
        return str(parse_integer(text))
    if kind == "bytes":
        size = parse_bytes(text)
        return None if size is None else str(size)
    if kind == "octal":
        number = parse_octal(text)
        return None if number is None else octal_text(number)
    if kind == "enum":
        return enum_form(parameter, text)
    if kind == "ustring":
        return _upper(text)
    if kind == "char":
        return text[:1]
    if kind == "cmdlist":
        return list_text(split_list(text), " ")
    if kind == "list":
        base = current if current is not None else parameter.default
        before = split_list(base) if base else None
        items = apply_list(before, text)
        if items is None and split_list(text):
            return None
        return list_text(items, ", ")
    if parameter.name in _UPPER_CASED:
        return _upper(text)
    return text


def stored_form(parameter: Parameter, value: str) -> str | None:
    """testparm's form of a value Samba already stored (a :class:`Setting`'s ``value``).

    Unlike :func:`testparm_form` it never re-applies ``+item``/``-item`` edits: a
    list value kept by the effective view is the list itself.
    """
    if parameter.type == "list":
        return testparm_form(parameter, value, "")
    return testparm_form(parameter, value)


def list_uses_edits(text: str) -> bool:
    """Does a list value add or remove items (``+item``, ``-item``) instead of replacing?"""
    return any(item[:1] in ("+", "-") and len(item) > 1 for item in split_list(text))
