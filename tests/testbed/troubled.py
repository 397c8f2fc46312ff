"""The test bed's smb.conf with the three classic mistakes, as an admin would add them."""

from __future__ import annotations

from testbed.smbd import SmbServer

PROBLEMS_GLOBAL = """\
  log level = 3
  socket options = SO_RCVBUF=8192 SO_SNDBUF=8192
"""
PROBLEMS_SHARE = """\
  strict sync = yes
  sync always = yes
"""


def with_problems(server: SmbServer) -> str:
    text = server.default_config()
    text = text.replace("[global]\n", "[global]\n" + PROBLEMS_GLOBAL, 1)
    return text.replace("  force user = root\n", "  force user = root\n" + PROBLEMS_SHARE, 1)
