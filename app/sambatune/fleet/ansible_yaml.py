"""YAML for Ansible, where text that is data says so: Ansible's ``!unsafe`` tag.

Ansible evaluates every string of a playbook, inventory or vars file as a Jinja2
template on the admin's computer (``{{ lookup('pipe', ...) }}`` runs a command there).
A value SambaTune read from a server (a config path, a parameter's value, a tool's
path) or a value the inventory itself marked ``!unsafe`` must reach Ansible as that
text and nothing else, so every such string is an :class:`UnsafeText` and is written
with the tag. Only the playbook's own templates (``site.yml``, ``rollout.yml``) are
trusted ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

UNSAFE_TAG = "!unsafe"


class UnsafeText(str):
    """Text Ansible must never template: written as ``!unsafe``."""

    __slots__ = ()


def as_data(value: Any) -> Any:
    """``value`` with every string in it (keys aside: Ansible never templates keys)
    made :class:`UnsafeText`; numbers, booleans and None stay what they are."""
    if isinstance(value, str):
        return value if isinstance(value, UnsafeText) else UnsafeText(value)
    if isinstance(value, Mapping):
        return {key: as_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_data(item) for item in value]
    return value


def construct_unsafe(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """What Ansible's loader makes of ``!unsafe`` on a scalar, list or mapping: the
    same value with every string in it marked as data."""
    if isinstance(node, yaml.SequenceNode):
        return as_data(loader.construct_sequence(node, deep=True))
    if isinstance(node, yaml.MappingNode):
        return as_data(loader.construct_mapping(node, deep=True))
    return UnsafeText(loader.construct_scalar(node))


class _Dumper(yaml.SafeDumper):
    pass


def _represent_unsafe(dumper: yaml.SafeDumper, value: UnsafeText) -> yaml.ScalarNode:
    # Quoted whenever the text needs it (newlines, quotes, YAML's own characters): the
    # emitter decides, as for any string. ansible-core 2.19 reads a tagged scalar as if
    # it were plain ('' as null, 'yes' as true), so text that plain YAML would read as
    # another type is written as a quoted string instead: such text holds no "{", and
    # Jinja2 needs one to start anything.
    text = str(value)
    if dumper.resolve(yaml.ScalarNode, text, (True, False)) != "tag:yaml.org,2002:str":
        return dumper.represent_str(text)
    return dumper.represent_scalar(UNSAFE_TAG, text)


_Dumper.add_representer(UnsafeText, _represent_unsafe)


def dump(data: Any, comment: str = "") -> str:
    """A YAML document for Ansible, ``comment`` as ``#`` lines under its ``---``."""
    head = "".join(f"# {line}\n" for line in comment.splitlines()) if comment else ""
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return "---\n" + head + body
