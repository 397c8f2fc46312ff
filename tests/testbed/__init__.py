"""Real servers on loopback for tests and benchmarks: sshd, smbd, a sudo user.

Everything lives in a temporary directory and on free ports; ``stop()`` leaves no
process behind. Only the sudo user (and its sudoers rule) touches the system, and
it is removed again when the test bed stops.
"""
