"""The guided tuning wizard: the book's method as a state machine an admin is led through.

connect -> survey -> findings -> baseline -> choose ONE change -> apply it safely ->
measure again -> verdict -> keep or revert -> (findings again, or finish) -> report.
Every finished step is kept in the results database, so an interrupted wizard resumes
where it stopped. No Qt here: the GUI and the CLI are faces of :mod:`machine`.
"""
