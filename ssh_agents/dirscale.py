"""dirscale: how a share copes with huge directories, seen through SMB on loopback.

Runs on the server, standard library only, Python 3.6+. See README.md for the protocol.
The agent fills one directory of the share with 1k, then 10k, then 100k empty files
(created directly on the server's filesystem, which is quick) and, at each count, times
through smbclient: listing the directory, opening files by their exact name, by the
same name in other letter case, and looking up names that do not exist. The last two
are what "case sensitive = no" makes expensive: smbd must scan the whole directory to
be sure no name matches in another case, and every new file a client creates asks it.

Params:
  share, port, address, user, password, domain, protocol   as for the smb agent
  directory        the share's path on this server (required: the files go there)
  counts           file counts to reach, ascending (default [1000, 10000, 100000])
  lookups          names per open/lookup run (default 100)
  repeat           runs per count and operation; the app counts the first ones as
                   warm-ups (default 1)

Lines: ``run_started`` {run, series}; ``run`` {run, series, operations, seconds}; the
single "create" run per count carries ``once`` (it always counts, nothing warms up).
Series are named "<operation>/<count>": create (local, files/s), list, open,
open-other-case, missing. Seconds exclude smbclient's own start and login (the median
of three empty sessions is subtracted).
"""

import os
import time

import agent_runtime
from agent_runtime import AgentFailure, SmbClient

DEFAULT_COUNTS = (1000, 10000, 100000)
PREFIX = "SambaTune-"
SUFFIX = ".Dat"


def file_name(index):
    return "%s%07d%s" % (PREFIX, index, SUFFIX)


def other_case(name):
    return name.swapcase()


def pick(count, wanted):
    """``wanted`` indexes spread evenly over 0..count-1."""
    wanted = min(wanted, count)
    step = count / float(wanted)
    return [int(i * step) for i in range(wanted)]


def create_files(agent, directory, start, stop):
    for index in range(start, stop):
        fd = os.open(os.path.join(directory, file_name(index)),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        if index & 1023 == 0:
            agent.check()


def session_overhead(client, subdir):
    """What an smbclient session costs before it does anything: start, login, cd."""
    times = sorted(client.run("pwd", directory=subdir).seconds for _ in range(3))
    return times[1]


def main(agent, params):
    if not params.get("share"):
        raise AgentFailure("bad-parameter", "Which share should the directory test use?")
    share_dir = params.get("directory")
    if not share_dir or not os.path.isdir(share_dir):
        raise AgentFailure(
            "no-such-directory",
            "The directory test needs the share's path on this server (%s is not one)." % share_dir)
    counts = sorted(set(int(c) for c in (params.get("counts") or DEFAULT_COUNTS)))
    if not counts or counts[0] <= 0:
        raise AgentFailure("bad-parameter", "File counts must be positive.")
    lookups = int(params.get("lookups") or 100)
    repeat = int(params.get("repeat") or 1)
    agent_runtime.require_free_inodes(share_dir, counts[-1])
    agent_runtime.require_free_space(share_dir, counts[-1] * 64)  # directory entries

    helper_dir = agent.work_dir()
    client = SmbClient(agent, params, helper_dir)
    work = agent.work_dir(share_dir)
    subdir = os.path.basename(work)
    created = 0
    steps = len(counts) * (1 + 4 * repeat)
    step = 0
    for count in counts:
        agent.progress(step / float(steps), "creating files up to %d" % count)
        # One creation per count: nothing to warm up, so it always counts ("once").
        agent.emit("run_started", run=1, series="create/%d" % count, once=True)
        started = time.monotonic()
        create_files(agent, work, created, count)
        seconds = time.monotonic() - started
        agent.emit("run", run=1, series="create/%d" % count, operations=count - created,
                   seconds=round(seconds, 6), once=True)
        created = count
        step += 1
        overhead = session_overhead(client, subdir)
        names = [file_name(i) for i in pick(count, lookups)]
        commands = {
            "list": ("ls", count),
            "open": ("; ".join("allinfo %s" % n for n in names), len(names)),
            "open-other-case": ("; ".join("allinfo %s" % other_case(n) for n in names), len(names)),
            "missing": ("; ".join("allinfo %s" % n.replace(PREFIX, "Missing-") for n in names),
                        len(names)),
        }
        for operation in ("list", "open", "open-other-case", "missing"):
            command, operations = commands[operation]
            series = "%s/%d" % (operation, count)
            for run in range(1, repeat + 1):
                agent.progress(step / float(steps), "%s, %d files, run %d" % (operation, count, run))
                agent.emit("run_started", run=run, series=series)
                done = client.run(command, directory=subdir)
                if operation == "list":
                    listed = sum(1 for line in done.text.splitlines()
                                 if line.strip().startswith(PREFIX))
                    if listed != count:
                        raise AgentFailure(
                            "listing-incomplete",
                            "smbclient listed %d of the %d files." % (listed, count))
                agent.emit("run", run=run, series=series, operations=operations,
                           seconds=round(max(done.seconds - overhead, 1e-6), 6),
                           session_seconds=round(done.seconds, 6),
                           overhead_seconds=round(overhead, 6))
                step += 1
    agent.progress(1.0, "removing the test files")
    return {
        "share": client.share,
        "counts": counts,
        "lookups": lookups,
        "directory": subdir,
        "smbclient": client.version(),
    }


if __name__ == "__main__":
    agent_runtime.run("dirscale", main)
