"""smb: smbclient put and get of a test file through a share, on this server's loopback.

Runs on the server, standard library only, Python 3.6+. See README.md for the protocol.
SMB is measured here without the network in the way, so the figure can be set against
this server's raw TCP and disk ceilings: what Samba itself costs.

Params:
  share            the share's name (required)
  port             smbd's port, from "smb ports" (default 445)
  address          where smbd is reached (default 127.0.0.1)
  user, password, domain   an account; without user the session is a guest one.
                   The password reaches smbclient through a 0600 auth file (-A) that
                   this agent creates and removes; never on a command line.
  size             bytes in the test file (default 512 MiB)
  repeat           how many runs; the app counts the first ones as warm-ups (default 1)
  operations       any of "put", "get" (default both; get needs a put first)
  directory        the share's path on this server (optional: lets the agent check free
                   space there and remove the test file even if smbd went away)
  work_directory   where the local source file is kept (default: the system temp dir)
  protocol         highest protocol for smbclient -m, e.g. SMB3 (default: smbclient's)

  sample_interval  seconds between ``sample`` lines during a copy (default 0.5)

Lines: ``run_started`` {run, series}; ``sample`` {run, series, t, bytes, bytes_per_s}
while smbclient copies; ``run`` {run, series, bytes, seconds, wall_seconds}.
Result: smbclient's version, the share, the file size.

smbclient says nothing until a copy ends (and a get receives a whole read of up to
8 MiB before it writes any), so the samples count from outside what its connection has
moved so far: bytes_received (get) or bytes_acked (put) of its TCP socket, from ss.
Without ss, a put is followed by the bytes smbclient has read (/proc/PID/io), else by
its file on the share as it grows; a get then has no samples.
"""

import os
import re
import subprocess

import agent_runtime
from agent_runtime import AgentFailure, SmbClient

DEFAULT_SIZE = 512 << 20
OPERATIONS = ("put", "get")
# smbclient reports rates in KiB/s: "putting file A as \\B (1234.5 kb/s) (average ...)",
# spelled "kB/s" since Samba 4.23 (commit 1f6cc7f98c3, bug 11023),
# and "getting file \\B of size N as /dev/null (1234.5 KiloBytes/sec) (average ...)".
PUT_LINE = re.compile(r"putting file .* \(([\d.]+) k[bB]/s\)")
GET_LINE = re.compile(r"getting file .* of size (\d+) as .* \(([\d.]+) Kilo[Bb]ytes/sec\)")

def make_source_file(agent, path, size):
    """A file of random-looking bytes to put (compression on the way cannot cheat)."""
    agent.own_path(path)
    block = os.urandom(1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        written = 0
        while written < size:
            chunk = block if size - written >= len(block) else block[:size - written]
            os.write(fd, chunk)
            written += len(chunk)
            if written % (64 << 20) == 0:
                agent.check()
    finally:
        os.close(fd)


SS = agent_runtime.which("ss", extra_dirs=("/usr/sbin", "/sbin", "/usr/bin", "/bin"))
TCP_COUNTER = {"get": "bytes_received", "put": "bytes_acked"}


def tcp_bytes(port, pid, counter):
    """A counter of the TCP connection that process ``pid`` has to ``port``, from ss."""
    if not SS:
        return None
    try:
        done = subprocess.run([SS, "-tinp", "state", "established", "( dport = :%d )" % port],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    entries = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        if line[:1] in (" ", "\t") and entries:
            entries[-1] += " " + line  # ss -i puts the counters on a second line
        else:
            entries.append(line)
    marker = "pid=%d," % pid
    for entry in entries:
        if marker in entry:
            found = re.search(r"\b%s:(\d+)" % counter, entry)
            return int(found.group(1)) if found else None
    return None


def io_bytes(pid, field):
    """rchar or wchar of a process from /proc/PID/io; None where the system has none."""
    try:
        with open("/proc/%d/io" % pid, "r") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def file_bytes(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return None


class CopySampler(object):
    """``sample`` lines for one smbclient copy, counted from outside (see the top)."""

    def __init__(self, agent, run, series, size, port, share_file):
        self.agent = agent
        self.run = run
        self.series = series
        self.size = size
        self.port = port
        self.share_file = share_file
        self.last_t = 0.0
        self.last_bytes = 0

    def __call__(self, process, seconds):
        moved = tcp_bytes(self.port, process.pid, TCP_COUNTER[self.series])
        if moved is None and self.series == "put":
            moved = io_bytes(process.pid, "rchar")
            if moved is None and self.share_file:
                moved = file_bytes(self.share_file)
        if moved is None:
            return
        moved = min(moved, self.size)
        elapsed = seconds - self.last_t
        rate = (moved - self.last_bytes) / elapsed if elapsed > 0 else 0.0
        self.agent.sample(run=self.run, series=self.series, t=round(seconds, 4), bytes=moved,
                          bytes_per_s=max(rate, 0.0))
        self.last_t, self.last_bytes = seconds, moved


def parse_transfer(text, pattern, size):
    """(bytes, seconds) from smbclient's own rate line; None when it printed none."""
    match = pattern.search(text)
    if not match:
        return None
    groups = match.groups()
    rate_kib = float(groups[-1])
    if rate_kib <= 0:
        return None
    moved = int(groups[0]) if len(groups) == 2 else size
    return moved, moved / (rate_kib * 1024.0)


def main(agent, params):
    if not params.get("share"):
        raise AgentFailure("bad-parameter", "Which share should the SMB test use?")
    size = int(params.get("size") or DEFAULT_SIZE)
    repeat = int(params.get("repeat") or 1)
    operations = params.get("operations") or list(OPERATIONS)
    unknown = [o for o in operations if o not in OPERATIONS]
    if unknown:
        raise AgentFailure("bad-parameter", "Unknown SMB operations: %s" % ", ".join(unknown))
    share_dir = params.get("directory")
    work_parent = params.get("work_directory") or None
    agent_runtime.require_free_space(work_parent or _tempdir(), size)
    if share_dir:
        if not os.path.isdir(share_dir):
            raise AgentFailure("no-such-directory", "%s is not a directory on this server." % share_dir)
        agent_runtime.require_free_space(share_dir, size)
    work = agent.work_dir(work_parent)
    if '"' in work or ";" in work:
        raise AgentFailure("bad-parameter", "The work directory %s cannot be named to smbclient." % work)
    client = SmbClient(agent, params, work)
    name = "sambatune-smb-%d.bin" % os.getpid()
    if share_dir:
        agent.own_path(os.path.join(share_dir, name))
    else:
        agent.on_cleanup(lambda: client.delete(name))
    agent.progress(0.0, "preparing a %d-byte test file" % size)
    source = os.path.join(work, "source.bin")
    make_source_file(agent, source, size)
    put = 'put "%s" "%s"' % (source, name)
    if "put" not in operations:
        client.run(put)  # get needs the file on the share; this copy is not measured

    interval = float(params.get("sample_interval") or 0.5)
    share_file = os.path.join(share_dir, name) if share_dir else None
    for run in range(1, repeat + 1):
        agent.progress((run - 1) / float(repeat), "run %d of %d" % (run, repeat))
        for series in OPERATIONS:
            if series not in operations:
                continue
            agent.emit("run_started", run=run, series=series)
            sampler = CopySampler(agent, run, series, size, client.port, share_file)
            if series == "put":
                done = client.run(put, on_wait=sampler, every=interval)
                transfer = parse_transfer(done.text + done.error_text, PUT_LINE, size)
            else:
                done = client.run('get "%s" /dev/null' % name, on_wait=sampler, every=interval)
                transfer = parse_transfer(done.text + done.error_text, GET_LINE, size)
            if transfer is None:
                raise client.failure(done, "smbclient did not report the %s rate." % series)
            agent.emit("run", run=run, series=series, bytes=transfer[0],
                       seconds=round(transfer[1], 6), wall_seconds=round(done.seconds, 6))
    agent.progress(1.0, "done")
    return {
        "share": client.share,
        "address": client.address,
        "port": client.port,
        "file_bytes": size,
        "guest": not params.get("user"),
        "smbclient": client.version(),
    }


def _tempdir():
    import tempfile

    return tempfile.gettempdir()


if __name__ == "__main__":
    agent_runtime.run("smb", main)
