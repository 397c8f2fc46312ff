"""What an editor can offer while someone types: parameter names, and values after ``=``.

Names include every synonym, each pointing at its canonical parameter, so typing
``writ`` offers ``writable`` (meaning ``read only``, inverted) as well as
``write list``.
"""

from __future__ import annotations

from typing import NamedTuple

from sambatune.conf.catalog import Parameter, ParameterCatalog


class NameChoice(NamedTuple):
    written: str  # what gets inserted
    canonical: str  # the parameter it sets
    inverse: bool  # a synonym with the opposite boolean meaning
    scope: str  # "global" or "share"

    @property
    def label(self) -> str:
        """How a list shows the choice: ``writable → read only (inverted)``."""
        if self.written == self.canonical:
            return self.written
        return f"{self.written} → {self.canonical}" + (" (inverted)" if self.inverse else "")


def parameter_names(catalog: ParameterCatalog) -> list[NameChoice]:
    """Every name ``catalog``'s Samba version accepts, canonical and synonym, sorted."""
    choices = []
    for parameter in catalog:
        choices.append(NameChoice(parameter.name, parameter.name, False, parameter.scope))
        for synonym in parameter.synonyms:
            choices.append(NameChoice(synonym.name, parameter.name, synonym.inverse, parameter.scope))
    return sorted(choices, key=lambda choice: (choice.written.lower(), choice.written))


def value_choices(parameter: Parameter) -> list[str]:
    """The values worth offering after ``name =``: yes/no, or the enum's values; else none.

    Enum values are given as testparm prints them, once each (``Yes``, not also
    ``True`` and ``1``).
    """
    if parameter.type in ("boolean", "boolean-rev"):
        return ["yes", "no"]
    if parameter.type == "enum":
        printed = list(dict.fromkeys(parameter.enum_print.values()))
        return printed or list(parameter.enum_values)
    return []
