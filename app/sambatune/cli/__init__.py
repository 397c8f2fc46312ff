"""The ``sambatune`` command: every GUI action as a verb, with ``--json`` output."""
