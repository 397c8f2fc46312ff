"""Everything one advice run judges: the configuration, the server, the measurements."""

from __future__ import annotations

from dataclasses import dataclass, field

from sambatune.advisor.config_view import ConfigView
from sambatune.advisor.knowledge import ParameterKnowledge, Version, load_knowledge, version_text
from sambatune.advisor.measurements import Measurements
from sambatune.advisor.server_facts import ServerFacts

#: The release the parameter knowledge was checked against (testparm of Debian 12). A
#: server whose version is unknown is judged as this one, and the findings say so.
REFERENCE_VERSION: Version = (4, 17, 12)


@dataclass(frozen=True)
class AdvisorInput:
    config: ConfigView
    server: ServerFacts = field(default_factory=ServerFacts)
    measurements: Measurements = field(default_factory=Measurements)
    knowledge: ParameterKnowledge = field(default_factory=load_knowledge)

    @property
    def version(self) -> Version:
        return self.server.samba_version or REFERENCE_VERSION

    @property
    def version_known(self) -> bool:
        return self.server.samba_version is not None

    def at_least(self, version: Version) -> bool:
        return self.version >= version

    def version_label(self) -> str:
        if self.version_known:
            return f"Samba {version_text(self.version)}"
        return (f"an unknown Samba version (judged as {version_text(REFERENCE_VERSION)}, "
                "the release SambaTune's parameter knowledge was checked against)")

    def sources(self, *parameters: str) -> tuple[str, ...]:
        return self.knowledge.sources(*parameters)
