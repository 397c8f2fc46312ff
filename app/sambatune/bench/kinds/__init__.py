"""Every kind of benchmark, found by itself: a kind is one module of this package with a
``KIND`` (see :mod:`sambatune.bench.kinds.kind`), and the Benchmarks form and the
``sambatune bench`` verbs list what this finds, in the kinds' own order."""

from __future__ import annotations

import importlib
import pkgutil

from sambatune.bench.kinds.kind import BenchKind

#: Modules of the package that are not kinds.
_NOT_KINDS = {"kind", "arguments"}


def _found() -> dict[str, BenchKind]:
    kinds = []
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name in _NOT_KINDS or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found = getattr(module, "KIND", None)
        if not isinstance(found, BenchKind):
            raise TypeError(f"{module.__name__} has no KIND: every module here is a kind")
        kinds.append(found)
    names = [k.name for k in kinds]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"benchmark kinds named twice: {twice}")
    return {k.name: k for k in sorted(kinds, key=lambda k: (k.order, k.name))}


#: By name, in the order the form lists them.
KINDS: dict[str, BenchKind] = _found()
