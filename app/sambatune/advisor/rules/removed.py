"""Parameters this server's Samba no longer has, and lines that restate a default."""

from __future__ import annotations

from collections.abc import Iterator

from sambatune.advisor.config_view import as_bool
from sambatune.advisor.findings import INFO, SUGGESTION, ConfigChange, Evidence, Finding
from sambatune.advisor.inputs import AdvisorInput
from sambatune.advisor.knowledge import version_text
from sambatune.advisor.rule import rule


@rule("removed-parameter", "removed")
def removed_parameter(inputs: AdvisorInput) -> Iterator[Finding]:
    for section in inputs.config.sections():
        for name, value in inputs.config.explicit.get(section, {}).items():
            removal = inputs.knowledge.removal(name)
            if removal is None or not inputs.at_least(removal.removed_in):
                continue
            gone = version_text(removal.removed_in)
            replacement = (
                f" The parameter that does this job today is `{removal.replacement}`."
                if removal.replacement
                else ""
            )
            yield Finding(
                id="removed-parameter",
                severity=INFO,
                title=f"{removal.name} does nothing on this server: removed in Samba {gone}",
                subject=section,
                evidence=(
                    Evidence.setting(section, name, value),
                    Evidence("version", f"{inputs.version_label()}; {removal.name} went in {gone}"),
                ),
                change=ConfigChange(section, name, "unset"),
                expected_effect=(
                    "No speed change: smbd ignores the line (testparm reports it as an unknown "
                    "parameter). Whatever it once tuned is handled by Samba itself now. "
                    + removal.note
                    + replacement
                ),
                effect_source=f"Samba's own history: {removal.source}.",
                risk="None: the line has no effect on this version.",
                applies_to_version=(f"Removed in {gone}; this server runs {inputs.version_label()}."),
                parameters=(removal.name,),
                sources=inputs.sources(removal.name),
            )


@rule("getwd-cache-set", "removed")
def getwd_cache_set(inputs: AdvisorInput) -> Iterator[Finding]:
    removal = inputs.knowledge.removal("getwd cache")
    if removal is not None and inputs.at_least(removal.removed_in):
        return  # removed-parameter covers it
    gone = version_text(removal.removed_in) if removal else "a later release"
    for section, value in inputs.config.set_in("getwd cache"):
        on = as_bool(value) is not False
        yield Finding(
            id="getwd-cache-set",
            severity=INFO if on else SUGGESTION,
            title=(
                "getwd cache = yes repeats the default"
                if on
                else "getwd cache is off: smbd looks up the working directory the slow way"
            ),
            subject=section,
            evidence=(Evidence.setting(section, "getwd cache", value),),
            change=ConfigChange(section, "getwd cache", "unset"),
            expected_effect=(
                "No change: the cache is on by default."
                if on
                else "smbd remembers its current directory again instead of working it out anew; a "
                "small saving on path-heavy work."
            ),
            effect_source=(
                "Using Samba (1999) and Speed.txt (2000) recommended it with wide links off; it "
                "has been the default ever since. Not re-measured."
            ),
            risk=(
                f"None. Samba removed the parameter in {gone}, where the line becomes an "
                "unknown parameter, so dropping it now avoids a warning later."
            ),
            applies_to_version=f"{inputs.version_label()} still has it (removed in {gone}).",
            parameters=("getwd cache",),
            sources=inputs.sources("getwd cache"),
        )
