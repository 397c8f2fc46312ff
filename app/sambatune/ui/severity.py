"""How a severity looks, the same on every page: the lint findings of the editor, the
survey's notes on the overview and the advisor's findings in the wizard.

Red for what is wrong (lint's "error", the survey's and advisor's "problem"), brown for
what to watch, blue for a suggestion, a quiet grey for a note that asks for nothing, so
that a list of findings shows at a glance which ones want an action: text colours that
keep enough contrast on a white background to read (WCAG AA).
"""

from __future__ import annotations

SEVERITY_COLORS = {
    "error": "#b3261e",
    "problem": "#b3261e",
    "warning": "#8a5300",
    "suggestion": "#1e5a8c",
    "info": "#57606a",
}
#: For a severity none of the above names.
OTHER_SEVERITY_COLOR = SEVERITY_COLORS["info"]
