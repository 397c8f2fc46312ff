"""PyInstaller runtime hook: runs inside the bundle before SambaTune's own code.

The bundle is installed where users cannot (or should not) write, such as
Program Files or /usr/local: Python must not try to put __pycache__ folders there
when it imports the agent and resource packages from disk.
"""

import sys

sys.dont_write_bytecode = True
