"""How a severity looks, the same on every page: the lint findings of the editor, the
survey's notes on the overview and the advisor's findings in the wizard.

Red for what is wrong (lint's "error", the survey's and advisor's "problem"), brown for
what to watch, blue for a suggestion or a note: text colours that keep enough contrast
on a white background to read (WCAG AA).
"""

from __future__ import annotations

SEVERITY_COLORS = {
    "error": "#b3261e",
    "problem": "#b3261e",
    "warning": "#8a5300",
    "suggestion": "#1e5a8c",
    "info": "#0d5c9e",
}
#: For a severity none of the above names.
OTHER_SEVERITY_COLOR = "#57606a"
