"""Logging: how much smbd writes for every request."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import GLOBAL
from sambatune.advisor.findings import PROBLEM, SUGGESTION, WARNING, ConfigChange, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.rule import rule

#: From level 3 on smbd logs per request; level 2 and below cost nothing we could measure.
COSTLY_LEVEL = 3
#: From level 5 on every request is logged in detail.
HEAVY_LEVEL = 5
PRODUCTION_LEVEL = "1"

_MEASURED = (
    "SambaTune measurements on Samba 4.17.12, loopback: listing a 5,000-entry directory "
    "three times cost smbd about 36% more CPU at level 3 than at level 0 (two runs of the "
    "log-level benchmark; wall time +11% to +40% on a shared machine), and level 5 and 10 "
    "took +50% and +157% wall time; a 256-512 MiB sequential read showed no change beyond "
    "noise. The 1999 book's figure (about 5% less throughput at level 3, 645.3 to 622.2 KB/s) "
    "holds in direction: the cost follows the number of requests, not the bytes moved."
)


def parse_log_level(value: str) -> tuple[int | None, dict[str, int]]:
    """``"3 auth:5 vfs:10@/var/log/vfs"`` -> (3, {"auth": 5, "vfs": 10})."""
    base: int | None = None
    classes: dict[str, int] = {}
    for token in value.replace(",", " ").split():
        name, colon, level = token.partition(":")
        if colon:
            level = level.split("@", 1)[0]
            if not level.isdigit():
                continue
            if name.lower() == "all":
                base = int(level)
            else:
                classes[name] = int(level)
        elif token.isdigit():
            base = int(token)
    return base, classes


def _log_level(inputs: AdvisorInput) -> str | None:
    # testparm replaces the log level with its own while it runs, so the file's line is
    # the only trustworthy source; the effective view is used when the file is silent.
    for section, value in inputs.config.set_in("log level"):
        if section == GLOBAL:
            return value
    return inputs.config.explicit_value(GLOBAL, "log level") or inputs.config.global_value("log level")


@rule("log-level-high", "logging")
def log_level_high(inputs: AdvisorInput) -> Iterator[Finding]:
    value = _log_level(inputs)
    if value is None:
        return
    base, classes = parse_log_level(value)
    loud = {name: level for name, level in classes.items() if level >= COSTLY_LEVEL}
    if (base or 0) < COSTLY_LEVEL and not loud:
        return
    quiet = [f"{name}:{level}" for name, level in classes.items() if level < COSTLY_LEVEL]
    if (base or 0) >= COSTLY_LEVEL:
        severity = PROBLEM if base is not None and base >= HEAVY_LEVEL else WARNING
        proposed = " ".join([PRODUCTION_LEVEL, *quiet])
        title = f"Log level {base} slows every request"
    else:
        severity = SUGGESTION
        proposed = " ".join([str(base or 0), *quiet])
        title = "Debug logging is still on for " + ", ".join(sorted(loud))
    dropped = (
        f" The per-class levels {', '.join(f'{n}:{lv}' for n, lv in loud.items())} go too."
        if loud and (base or 0) >= COSTLY_LEVEL
        else ""
    )
    yield Finding(
        id="log-level-high",
        severity=severity,
        title=title,
        subject=GLOBAL,
        evidence=(Evidence.setting(GLOBAL, "log level", value),),
        change=ConfigChange(GLOBAL, "log level", "set", proposed),
        expected_effect=(
            "smbd stops formatting and writing log lines for routine requests. Work with many "
            "small requests (listings, opens, attribute lookups) speeds up the most; large "
            "sequential copies barely change." + dropped
        ),
        effect_source=_MEASURED,
        risk=(
            "The log holds less detail when something goes wrong. To chase a problem, raise "
            "only the class involved for a while (for example `log level = 1 vfs:5`), then "
            "lower it again, and never benchmark with it raised."
        ),
        applies_to_version=(
            "Holds for every version: the cost comes from the amount of logging, not from a "
            "version's defaults. testparm cannot report this value (it substitutes its own), "
            "so it is read from the file."
        ),
        parameters=("log level",),
        sources=inputs.sources("log level"),
    )
