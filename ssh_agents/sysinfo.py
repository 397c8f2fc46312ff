"""sysinfo: what this server is, for SambaTune's survey. Read-only; creates nothing.

Params: {"config_path": optional path of the smb.conf to report on,
         "also_run": optional list of argv the caller would send next (at most 16):
                     run here, no shell, each answered as exit code and base64 output}.
"""

import json
import os
import platform
import re
import socket
import stat
import subprocess

import agent_runtime

SBIN_DIRS = ("/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/local/samba/sbin",
             "/usr/local/samba/bin", "/usr/bin", "/usr/local/bin")

TCP_SYSCTLS = (
    "net/ipv4/tcp_rmem",
    "net/ipv4/tcp_wmem",
    "net/core/rmem_max",
    "net/core/wmem_max",
    "net/core/rmem_default",
    "net/core/wmem_default",
    "net/ipv4/tcp_window_scaling",
    "net/ipv4/tcp_congestion_control",
    "net/ipv4/tcp_available_congestion_control",
    "net/ipv4/tcp_sack",
    "net/ipv4/tcp_timestamps",
    "net/ipv4/tcp_mtu_probing",
    "net/core/netdev_max_backlog",
)


def read_text(path, default=None):
    try:
        with open(path, "r") as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return default


def which(name):
    dirs = os.environ.get("PATH", "").split(os.pathsep) + list(SBIN_DIRS)
    for directory in dirs:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# The running agent, so that run() starts children it kills when it stops.
AGENT = None


def run(argv, timeout=30):
    """(exit code, stdout, stderr); a command past ``timeout`` is killed (124)."""
    code, out, err = run_bytes(argv, timeout)
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_bytes(argv, timeout):
    """:func:`run` with the output as it came (bytes)."""
    try:
        if AGENT is not None:
            proc = AGENT.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        else:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
    except OSError as exc:
        return 127, b"", str(exc).encode()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return 124, b"", ("%s did not finish within %d s and was stopped" % (argv[0], timeout)).encode()
    return proc.returncode, out, err


INCLUDE_LINE = re.compile(r"^\s*include\s*=\s*(.*?)\s*$", re.IGNORECASE)
BLOCKING_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def blocking_include(config, seen=None, depth=0):
    """(include, what it is) when ``config`` includes, at any depth, a FIFO or a device:
    testparm and smbd would wait on it (or read it) for ever. Only regular files are
    opened here; names with %-macros are left alone."""
    seen = set() if seen is None else seen
    if depth > 16 or len(seen) > 200 or config in seen:
        return None
    seen.add(config)
    try:
        info = os.stat(config)
        if not stat.S_ISREG(info.st_mode) or info.st_size > (8 << 20):
            return None
        with open(config, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        match = INCLUDE_LINE.match(line)
        if not match or not match.group(1) or "%" in match.group(1):
            continue
        path = match.group(1)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        for test, what in BLOCKING_KINDS:
            if test(mode):
                return path, what
        found = blocking_include(path, seen, depth + 1)
        if found:
            return found
    return None


def os_info():
    release = {}
    text = read_text("/etc/os-release") or read_text("/usr/lib/os-release") or ""
    for line in text.splitlines():
        if "=" in line:
            key, _, value = line.partition("=")
            release[key.strip()] = value.strip().strip('"')
    return {
        "system": platform.system(),
        "distribution": release.get("PRETTY_NAME") or platform.platform(),
        "distribution_id": release.get("ID", ""),
        "distribution_version": release.get("VERSION_ID", ""),
        "kernel": platform.release(),
        "machine": platform.machine(),
        # Linux 6.6+ can forbid io_uring (1: privileged or io_uring_group only, 2: nobody);
        # None where the kernel has no such switch.
        "io_uring_disabled": _int_or_none(read_text("/proc/sys/kernel/io_uring_disabled")),
    }


def cpu_info():
    model = ""
    cpuinfo = read_text("/proc/cpuinfo") or ""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "cpu model", "Model") and value.strip():
            model = value.strip()
            break
    if not model:
        model = platform.processor() or platform.machine()
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count() or 1
    return {"model": model, "logical": os.cpu_count() or 1, "available": available}


def memory_info():
    info = {}
    for line in (read_text("/proc/meminfo") or "").splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            info[key] = int(parts[0]) * 1024
    return {
        "total_bytes": info.get("MemTotal"),
        "available_bytes": info.get("MemAvailable"),
        "swap_total_bytes": info.get("SwapTotal"),
        "swap_free_bytes": info.get("SwapFree"),
    }


def load_info():
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return None
    return {"1min": one, "5min": five, "15min": fifteen}


def _int_or_none(text):
    try:
        value = int(text)
    except (TypeError, ValueError):
        return None
    return value


def _hex_or_zero(text):
    try:
        return int(text, 0)
    except (TypeError, ValueError):
        return 0


def nic_info():
    addresses = {}
    code, out, _ = run(["ip", "-j", "address", "show"]) if which("ip") else (1, "", "")
    if code == 0 and out.strip():
        try:
            for entry in json.loads(out):
                addresses[entry.get("ifname")] = [
                    "%s/%s" % (a.get("local"), a.get("prefixlen"))
                    for a in entry.get("addr_info", []) if a.get("local")
                ]
        except ValueError:
            pass
    nics = []
    base = "/sys/class/net"
    try:
        names = sorted(os.listdir(base))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(base, name)
        speed = _int_or_none(read_text(os.path.join(path, "speed")))
        if speed is not None and speed <= 0:
            speed = None  # the kernel reports -1 when it does not know
        driver = ""
        try:
            driver = os.path.basename(os.readlink(os.path.join(path, "device", "driver")))
        except OSError:
            pass
        flags = _hex_or_zero(read_text(os.path.join(path, "flags")))
        nics.append({
            "name": name,
            "mtu": _int_or_none(read_text(os.path.join(path, "mtu"))),
            "state": read_text(os.path.join(path, "operstate"), "unknown"),
            "up": bool(flags & 1),
            "speed_mbit": speed,
            "duplex": read_text(os.path.join(path, "duplex")),
            "mac": read_text(os.path.join(path, "address")),
            "driver": driver,
            "virtual": not os.path.exists(os.path.join(path, "device")),
            "loopback": name == "lo" or bool(flags & 8),
            "addresses": addresses.get(name, []),
        })
    return nics


def tcp_settings():
    settings = {}
    for key in TCP_SYSCTLS:
        value = read_text(os.path.join("/proc/sys", key))
        if value is not None:
            settings[key.replace("/", ".")] = " ".join(value.split())
    return settings


def mounts():
    table = []
    for line in (read_text("/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            table.append((parts[1].replace("\\040", " "), parts[2], parts[0]))
    return table


def filesystem_of(path, mount_table):
    best = None
    real = os.path.realpath(path)
    for mount_point, fstype, device in mount_table:
        prefix = mount_point.rstrip("/") + "/"
        inside = real == mount_point or real.startswith(prefix) or mount_point == "/"
        if inside and (best is None or len(mount_point) > len(best[0])):
            best = (mount_point, fstype, device)
    entry = {"path": path}
    if best:
        entry.update({"mount_point": best[0], "fstype": best[1], "device": best[2]})
    try:
        st = os.statvfs(path)
        entry.update({
            "total_bytes": st.f_blocks * st.f_frsize,
            "free_bytes": st.f_bavail * st.f_frsize,
            "exists": True,
        })
    except OSError as exc:
        entry.update({"exists": False, "error": str(exc)})
    return entry


def smbd_processes():
    """Running smbd processes with their config file (-s / --configfile).

    Each says whether it is a trusted smbd: run by root from a binary that only root
    could have put there. Anyone can start a process called "smbd" with any command
    line; only root can make a process owned by root, and only root can write into a
    root-owned, not group/other-writable path. Nothing of an untrusted process is
    ever run or restarted (see samba_ops.restart_smbd).
    """
    found = []
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        raw = None
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
        if not argv or os.path.basename(argv[0]).split(":")[0] != "smbd":
            continue
        stat = read_text("/proc/%s/stat" % pid) or ""
        ppid = None
        if ")" in stat:
            fields = stat.rsplit(")", 1)[1].split()
            ppid = _int_or_none(fields[1]) if len(fields) > 1 else None
        config = None
        for index, arg in enumerate(argv):
            if arg in ("-s", "--configfile") and index + 1 < len(argv):
                config = argv[index + 1]
            elif arg.startswith("--configfile="):
                config = arg.split("=", 1)[1]
            elif arg.startswith("-s") and len(arg) > 2:
                config = arg[2:]
        uid = process_uid(pid)
        exe = process_exe(pid)
        trust = smbd_trust(uid, exe)
        found.append({"pid": int(pid), "ppid": ppid, "argv": argv, "config": config,
                      "uid": uid, "exe": exe, "trusted": trust is None,
                      "verified": trust is None and exe is not None,
                      "untrusted_reason": trust})
    return found


def process_uid(pid):
    """The effective uid of a process (from /proc/PID/status, readable by anyone)."""
    for line in (read_text("/proc/%s/status" % pid) or "").splitlines():
        if line.startswith("Uid:"):
            fields = line.split()
            if len(fields) >= 3:
                return _int_or_none(fields[2])
    return None


def process_exe(pid):
    """The binary a process runs; None when the kernel will not say (not root)."""
    try:
        target = os.readlink("/proc/%s/exe" % pid)
    except OSError:
        return None
    # A binary replaced by a package upgrade shows as "PATH (deleted)".
    if target.endswith(" (deleted)"):
        target = target[:-len(" (deleted)")]
    return target


def root_only_path(path):
    """None when ``path`` and every directory above it are root's alone; else why not."""
    current = path
    while True:
        try:
            info = os.lstat(current)
        except OSError as exc:
            return "%s: %s" % (current, exc.strerror)
        if info.st_uid != 0:
            return "%s is not owned by root" % current
        if info.st_mode & 0o022:
            return "%s can be written by users other than root" % current
        if current == "/":
            return None
        current = os.path.dirname(current) or "/"


def smbd_trust(uid, exe):
    """None if this may be the server's smbd; else the reason it is not.

    A process owned by root is one no other user could have started. Its binary is
    checked too where the kernel lets us see it (as root): otherwise ``exe`` is None
    and the process counts, unverified; a restart needs root and so always verifies.
    """
    if uid != 0:
        return "not run by root (uid %s)" % uid
    if exe is None:
        return None
    if os.path.basename(exe) != "smbd":
        return "its binary is %s, not smbd" % exe
    return root_only_path(exe)


def listening_ports(pids, sockets):
    """TCP ports in LISTEN state held by the given pids (where /proc lets us look), of
    ``sockets`` (listening_sockets(): read once for every instance)."""
    ports = []
    for pid in pids:
        fd_dir = "/proc/%d/fd" % pid
        try:
            names = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in names:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in sockets:
                port = sockets[target[8:-1]]
                if port not in ports:
                    ports.append(port)
    return sorted(ports, key=lambda p: (p["port"], p["address"]))


def listening_sockets():
    """{socket inode: {"port", "address"}} of the machine's listening TCP sockets."""
    sockets = {}
    for table, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
        for line in (read_text(table) or "").splitlines()[1:]:
            parts = line.split()
            if len(parts) < 10 or parts[3] != "0A":  # 0A = LISTEN
                continue
            address_hex, port_hex = parts[1].split(":")
            sockets[parts[9]] = {"port": int(port_hex, 16), "address": _address(address_hex, family)}
    return sockets


def _address(hex_text, family):
    if family == 4:
        value = bytes.fromhex(hex_text)[::-1]
        return socket.inet_ntop(socket.AF_INET, value)
    raw = bytes.fromhex(hex_text)
    value = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, value)


def samba_info(params, mount_table):
    info = {"installed": False}
    smbd = which("smbd")
    if not smbd:
        return info
    info["installed"] = True
    info["smbd"] = smbd
    code, out, err = run([smbd, "-V"])
    version_text = out.strip() or err.strip()
    info["version_text"] = version_text
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", version_text)
    info["version"] = [int(x) for x in match.groups()] if match else None

    code, out, _ = run([smbd, "-b"])
    build = {}
    for line in out.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and key.isupper() and value.strip():
            build[key.strip()] = value.strip()
    info["build_paths"] = dict((k, v) for k, v in build.items() if k.endswith(("FILE", "DIR")))
    default_config = build.get("CONFIGFILE")
    info["vfs_modules_dir"], info["vfs_modules"] = vfs_modules(build.get("MODULESDIR"), out)

    processes = smbd_processes()
    info["instances"], info["untrusted_processes"] = smbd_instances(processes, default_config)
    info["processes"] = sum(i["processes"] for i in info["instances"])
    testparm = which("testparm")
    for instance in info["instances"]:
        instance["dirs"] = instance_dirs(testparm, instance["config"])

    config = params.get("config_path")
    source = "given"
    candidates = sorted(set(i["config"] for i in info["instances"] if i["config"]))
    if not config:
        # Never a default while smbd runs with other files: with several, the admin
        # chooses (the apply refuses until then).
        if len(candidates) == 1:
            config, source = candidates[0], "running smbd"
        elif candidates:
            config, source = None, "ambiguous"
        else:
            config, source = default_config, "smbd -b"
    info["config_candidates"] = candidates
    serving = [i for i in info["instances"] if config and same_file(i["config"], config)]
    for instance in info["instances"]:
        instance["managed"] = instance in serving
    # "Running" is said of the instance that serves the managed file, never of another.
    info["running"] = bool(serving)
    # Root's smbd for this very file, from a binary SambaTune does not trust: it serves
    # the file (so it is not "not running"), but nothing of it is ever run or reloaded.
    info["untrusted_serving"] = [
        p["pid"] for p in info["untrusted_processes"]
        if p["kind"] == "unsafe-binary" and config and same_file(p["config"], config)
    ]
    info["other_instances"] = len(info["instances"]) - len(serving)
    info["config_path"] = config
    info["config_source"] = source
    info["config_readable"] = bool(config) and os.access(config, os.R_OK)

    info["shares"] = []
    blocked = blocking_include(config) if config else None
    if blocked:
        info["blocking_include"] = {"path": blocked[0], "kind": blocked[1]}
        info["testparm"] = {
            "exit_code": 1,
            "messages": ["%s includes %s, which is %s, not a file: testparm and smbd would "
                         "wait on it; testparm was not run" % (config, blocked[0], blocked[1])],
        }
    elif testparm and config and os.path.exists(config):
        code, out, err = run([testparm, "-s", "--suppress-prompt", config])
        info["testparm"] = {
            "exit_code": code,
            "messages": [line for line in err.splitlines() if line.strip()][-40:],
        }
        info["shares"] = parse_shares(out)
        info["globals"] = parse_globals(out)
    for share in info["shares"]:
        if share.get("path") and "%" not in share["path"]:
            share["filesystem"] = filesystem_of(share["path"], mount_table)
    return info


def vfs_modules(modules_dir, build_text):
    """(directory, names) of the VFS modules this smbd can load, as ``vfs objects`` names them.

    smbd looks for a module among those built into it first, then loads
    MODULESDIR/vfs/NAME.so (source3/smbd/vfs.c vfs_init_custom, lib/util/modules.c); a
    name missing from both makes the share refuse connections. Names are None when the
    directory cannot be read, so that "unknown" is never taken for "missing".
    """
    if not modules_dir:
        return None, None
    directory = os.path.join(modules_dir, "vfs")
    try:
        files = os.listdir(directory)
    except OSError:
        return directory, None
    names = set(name[:-3] for name in files if name.endswith(".so"))
    lines = build_text.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == "Builtin modules:" and index + 1 < len(lines):
            names.update(m[4:] for m in lines[index + 1].split() if m.startswith("vfs_"))
    return directory, sorted(names)


def same_file(a, b):
    """The same file, also when one path is a symbolic link to the other."""
    if not a or not b:
        return False
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


INSTANCE_DIRS = ("pid directory", "lock directory", "state directory", "cache directory",
                 "private dir")


def instance_dirs(testparm, config):
    """Where an instance keeps its pid file and databases (two instances must not share)."""
    if not testparm or not config or not os.access(config, os.R_OK) or blocking_include(config):
        return {}
    code, out, _ = run([testparm, "-s", "-v", "--suppress-prompt", config], timeout=60)
    values = parse_globals(out) if code == 0 else {}
    return dict((name, values[name]) for name in INSTANCE_DIRS if name in values)


def parse_sections(text):
    sections = []
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = {"name": stripped[1:-1], "params": {}}
            sections.append(current)
        elif current is not None and "=" in stripped:
            key, _, value = stripped.partition("=")
            current["params"][key.strip()] = value.strip()
    return sections


def parse_shares(text):
    shares = []
    for section in parse_sections(text):
        if section["name"].lower() == "global":
            continue
        params = section["params"]
        shares.append({
            "name": section["name"],
            "path": params.get("path", ""),
            "comment": params.get("comment", ""),
            "read_only": params.get("read only", "Yes") != "No",
            "guest_ok": params.get("guest ok", "No") == "Yes",
            "printable": params.get("printable", "No") == "Yes",
            "params": params,
        })
    return shares


def parse_globals(text):
    for section in parse_sections(text):
        if section["name"].lower() == "global":
            return section["params"]
    return {}


def smbd_only(params):
    """The quick form for apply and health checks: which smbd serves which config."""
    instances, untrusted = smbd_instances(smbd_processes(), None)
    binary = which("smbd")
    return {"samba": {"instances": instances, "untrusted_processes": untrusted,
                      "running": bool(instances),
                      # The binary to start smbd with when none runs: only one that a
                      # non-root user could not have planted.
                      "trusted_binary": binary if binary and os.getuid() == 0
                      and root_only_path(os.path.realpath(binary)) is None else None}}


def smbd_instances(processes, default_config):
    """Trusted smbd main processes with their family and sockets, and the rest apart.

    An untrusted "smbd" is listed (an admin wants to know about it) but never counts
    as the server's smbd: not for its config, its ports, nor for a restart.
    """
    trusted = [p for p in processes if p["trusted"]]
    trusted_pids = set(p["pid"] for p in trusted)
    sockets = listening_sockets() if trusted else {}
    instances = []
    for parent in trusted:
        if parent["ppid"] in trusted_pids:
            continue
        family = [parent["pid"]] + [p["pid"] for p in trusted if p["ppid"] == parent["pid"]]
        instances.append({
            "pid": parent["pid"],
            "config": parent["config"] or default_config,
            "exe": parent["exe"],
            "verified": parent["verified"],
            "argv": parent["argv"],
            "processes": len(family),
            "listening": listening_ports(family, sockets),
        })
    untrusted = [{"pid": p["pid"], "uid": p["uid"], "argv": p["argv"], "exe": p["exe"],
                  "reason": p["untrusted_reason"], "kind": untrusted_kind(p),
                  "config": p["config"] or default_config}
                 for p in processes if not p["trusted"] and p["ppid"] not in untrusted_parents(processes)]
    return instances, untrusted


def untrusted_parents(processes):
    """Pids of untrusted smbd whose children are listed with them (a family is one entry)."""
    return set(p["pid"] for p in processes if not p["trusted"])


def untrusted_kind(process):
    """Why an smbd is not trusted, as a word: ``not-root`` (another user started it),
    ``not-smbd`` (root runs another program under the name), ``unsafe-binary`` (root
    runs smbd from a path another user could have written: root's smbd, but whoever
    can write there can run code as root through it)."""
    if process["uid"] != 0:
        return "not-root"
    if process["exe"] and os.path.basename(process["exe"]) != "smbd":
        return "not-smbd"
    return "unsafe-binary"


def main(agent, params):
    global AGENT
    AGENT = agent
    if params.get("only") == "smbd":
        return smbd_only(params)
    agent.progress(0.1, "system")
    mount_table = mounts()
    result = {
        "hostname": socket.gethostname(),
        "fqdn": socket.getfqdn(),
        "os": os_info(),
        "cpu": cpu_info(),
        "memory": memory_info(),
        "load": load_info(),
        "user": {"uid": os.getuid(), "name": os.environ.get("USER") or os.environ.get("LOGNAME", "")},
    }
    agent.check()
    agent.progress(0.3, "network")
    result["nics"] = nic_info()
    result["tcp"] = tcp_settings()
    agent.check()
    agent.progress(0.6, "samba")
    result["samba"] = samba_info(params, mount_table)
    agent.check()
    if params.get("also_run"):
        result["also_run"] = also_run(params["also_run"])
    agent.progress(1.0, "done")
    return result


#: Output bytes the answers may carry in all: the result is one line, which the caller
#: takes up to 16 MiB of (base64 adds a third). A command past it is left unanswered
#: (None) and the caller sends it itself.
ANSWER_BUDGET = 6 << 20


def also_run(commands):
    """Commands the caller would otherwise send one by one (each a shell start over SSH):
    exit code and output of each, the output base64 (it may be any bytes)."""
    import base64

    def encoded(data):
        return base64.b64encode(data).decode("ascii")

    answers = []
    budget = ANSWER_BUDGET
    for argv in commands[:16]:
        code, out, err = run_bytes([str(a) for a in argv], 60)
        if len(out) + len(err) > budget:
            answers.append(None)
            continue
        budget -= len(out) + len(err)
        answers.append({"exit": code, "stdout": encoded(out), "stderr": encoded(err)})
    return answers


if __name__ == "__main__":
    agent_runtime.run("sysinfo", main)
