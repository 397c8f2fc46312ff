"""Tuning this computer: the TCP window and MTU settings of the PC that talks to Samba.

The pieces, from the bottom up:

- ``quantities``: "1gbit", "20ms" and friends, parsed into numbers.
- ``window``: bandwidth-delay arithmetic (RFC 7323 window scaling).
- ``osinfo`` / ``nics``: which OS and version this is, and its network interfaces.
- ``settings``: what a setting *is* (registry value, sysctl, interface MTU, ...) and
  the value it holds, absent included.
- ``regfile``, ``registry``: .reg files and registry stores (winreg, in memory).
- ``system`` and the ``*_system`` modules: one interface over every backend.
- ``catalog``, ``planner``, ``windows_plan``, ``posix_plan``: what to change and why.
- ``measure``, ``pmtu``: RTT by TCP connects, bandwidth from a benchmark, path-MTU probe.
- ``backups``, ``apply``, ``elevation``: backup first, apply, verify, restore.

Nothing here imports Qt; the GUI page drives these functions from a worker.
"""
