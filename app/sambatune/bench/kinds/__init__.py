"""Every kind of benchmark, found by itself: a kind is one module of this package with a
``KIND`` (see :mod:`sambatune.bench.kinds.kind`), and the Benchmarks form and the
``sambatune bench`` verbs list what this finds, in the kinds' own order."""

from __future__ import annotations

from sambatune.bench.kinds.kind import BenchKind
from sambatune.packaged import package_modules

#: Modules of the package that are not kinds.
_NOT_KINDS = {"kind", "arguments"}


def _found() -> dict[str, BenchKind]:
    kinds = []
    for module in package_modules(__name__, __path__):
        if module.__name__.rpartition(".")[2] in _NOT_KINDS:
            continue
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
