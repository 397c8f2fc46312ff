"""The protocol every SambaTune agent speaks, shipped to the server with the agent.

Runs on the server under Python 3.6 or newer, standard library only. See README.md.

An agent is a module with ``main(agent, params)`` that ends with
``agent_runtime.run("name", main)``. The runtime prints the hello line, runs
``main``, prints its return value as the result (or an error), and removes every
file and process the agent registered, whatever ends the run: success, an
exception, SIGTERM/SIGINT/SIGHUP, or stdin closing because the client went away.
"""

import errno
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time

PROTOCOL = 1

# Set by the launcher's bootstrap before the agent runs; a JSON argument otherwise.
PARAMS = None

# How long main may keep running after stdin closed before cleanup is forced.
GRACE_SECONDS = 2.0


class Stop(Exception):
    """Raised in the agent's main thread when it must stop now."""


class AgentFailure(Exception):
    """An error the agent reports with a code and a message for people."""

    def __init__(self, code, message, details=""):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.details = details


class Agent(object):
    def __init__(self, name):
        self.name = name
        self._out_lock = threading.Lock()
        self._cleanup_lock = threading.Lock()
        self._paths = []
        self._processes = []
        self._callbacks = []
        self._cleaned = False
        self._cleanup_finished = threading.Event()
        self.stopping = threading.Event()
        self.main_done = threading.Event()

    # -- output -------------------------------------------------------------
    def emit(self, kind, **fields):
        fields["type"] = kind
        line = json.dumps(fields, sort_keys=True, default=str) + "\n"
        with self._out_lock:
            try:
                sys.stdout.write(line)
                sys.stdout.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.stopping.set()

    def progress(self, fraction, message=""):
        self.emit("progress", fraction=round(float(fraction), 4), message=message)

    def sample(self, **fields):
        self.emit("sample", **fields)

    def log(self, message):
        self.emit("log", message=message)

    # -- stopping -------------------------------------------------------------
    def check(self):
        """Call between steps: raises Stop once the client has gone or a signal came."""
        if self.stopping.is_set():
            raise Stop()

    def sleep(self, seconds):
        if self.stopping.wait(seconds):
            raise Stop()

    # -- things to remove at the end --------------------------------------
    def own_path(self, path):
        """Remember a file or directory to delete when the agent ends."""
        with self._cleanup_lock:
            self._paths.append(path)
        return path

    def on_cleanup(self, callback):
        with self._cleanup_lock:
            self._callbacks.append(callback)

    def spawn(self, argv, **kwargs):
        """Start a child process that is killed when the agent ends."""
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        process = subprocess.Popen(argv, **kwargs)
        with self._cleanup_lock:
            self._processes.append(process)
        return process

    def call(self, argv, timeout=None, env=None, cwd=None, on_wait=None, every=0.5):
        """Run a command to its end and return a Completed; a stop kills it at once.

        ``on_wait(process, seconds)`` is called every ``every`` seconds while it runs
        (to sample a transfer the command makes).
        """
        started = time.monotonic()
        process = self.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=cwd)
        box = {}

        def communicate():
            try:
                box["output"] = process.communicate()
            except Exception as exc:  # reported below as an empty output
                box["error"] = exc

        reader = threading.Thread(target=communicate)
        reader.daemon = True
        reader.start()
        deadline = None if timeout is None else started + timeout
        tick = started + every
        try:
            while reader.is_alive():
                reader.join(0.05)
                if self.stopping.is_set():
                    raise Stop()
                now = time.monotonic()
                if on_wait is not None and now >= tick and process.poll() is None:
                    tick = now + every
                    on_wait(process, now - started)
                if deadline is not None and time.monotonic() > deadline:
                    raise AgentFailure(
                        "timeout", "%s did not finish within %g s" % (argv[0], timeout))
        except BaseException:
            _kill(process)
            raise
        seconds = time.monotonic() - started
        with self._cleanup_lock:
            if process in self._processes:
                self._processes.remove(process)
        out, err = box.get("output") or (b"", b"")
        return Completed(process.returncode, out or b"", err or b"", seconds)

    def work_dir(self, parent=None):
        """A fresh directory for this run's files, removed when the agent ends."""
        try:
            path = tempfile.mkdtemp(prefix="sambatune-%s-" % self.name, dir=parent)
        except OSError as exc:
            where = parent or tempfile.gettempdir()
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise AgentFailure(
                    "no-permission",
                    "This account (uid %d) may not create files in %s: %s."
                    % (os.getuid(), where, exc.strerror),
                ) from exc
            raise AgentFailure("cannot-create", "Cannot create a directory in %s: %s"
                               % (where, exc.strerror)) from exc
        return self.own_path(path)

    def cleanup(self):
        """Remove everything registered; a second caller waits for the first to finish."""
        with self._cleanup_lock:
            first = not self._cleaned
            self._cleaned = True
            processes, paths, callbacks = self._processes, self._paths, self._callbacks
        if not first:
            self._cleanup_finished.wait(120)
            return
        try:
            self._remove(processes, paths, callbacks)
        finally:
            self._cleanup_finished.set()

    def _remove(self, processes, paths, callbacks):
        for process in processes:
            if process.poll() is None:
                try:
                    process.kill()
                    process.wait(5)
                except Exception:
                    pass
        for callback in reversed(callbacks):
            try:
                callback()
            except Exception:
                pass
        for path in reversed(paths):
            remove_tree(path)


class Completed(object):
    """What a finished child process left: exit code, output, and how long it took."""

    def __init__(self, code, stdout, stderr, seconds):
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds

    @property
    def text(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def error_text(self):
        return self.stderr.decode("utf-8", "replace")


def _kill(process):
    if process.poll() is None:
        try:
            process.kill()
            process.wait(5)
        except Exception:
            pass


class Sampler(object):
    """Turns a running byte count into one ``sample`` line every ``interval`` seconds.

    ``add`` is cheap enough for a loop moving megabytes per call; it is also where a
    stop is noticed, so a long transfer ends within one interval of the order.
    """

    def __init__(self, agent, interval=0.5, **fields):
        self.agent = agent
        self.interval = float(interval)
        self.fields = fields
        self.bytes = 0
        self.start = time.monotonic()
        self._last_t = self.start
        self._last_bytes = 0
        self._next = self.start + self.interval

    def restart(self):
        self.bytes = 0
        self.start = time.monotonic()
        self._last_t = self.start
        self._last_bytes = 0
        self._next = self.start + self.interval

    def add(self, count):
        self.bytes += count
        now = time.monotonic()
        if now >= self._next:
            self._emit(now)

    def _emit(self, now):
        elapsed = now - self._last_t
        moved = self.bytes - self._last_bytes
        self.agent.sample(
            t=round(now - self.start, 4),
            bytes=self.bytes,
            bytes_per_s=(moved / elapsed) if elapsed > 0 else 0.0,
            **self.fields
        )
        self._last_t = now
        self._last_bytes = self.bytes
        self._next = now + self.interval
        self.agent.check()


def remove_tree(path):
    """Delete a file or a directory tree; never follows symlinks out of it."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
            return
    except FileNotFoundError:
        return
    except OSError:
        pass
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(root, name))
            except OSError:
                pass
        for name in dirs:
            full = os.path.join(root, name)
            try:
                if os.path.islink(full):
                    os.unlink(full)
                else:
                    os.rmdir(full)
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def hello(name):
    return {
        "agent": name,
        "protocol": PROTOCOL,
        "python": platform.python_version(),
        "platform": sys.platform,
        "pid": os.getpid(),
    }


def _watch_stdin(agent):
    """stdin closing means the client is gone: stop, and clean up if main does not."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        while stream.read(4096):
            pass
    except Exception:
        pass
    agent.stopping.set()
    if not agent.main_done.wait(GRACE_SECONDS):
        agent.cleanup()
        os._exit(4)


def _on_signal(agent):
    def handler(signum, frame):
        agent.stopping.set()
        raise Stop()

    return handler


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def require_free_space(path, needed, margin=0.05):
    """Refuse to start when writing ``needed`` bytes would fill the filesystem."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        raise AgentFailure("no-such-directory", "Cannot use %s: %s" % (path, exc)) from exc
    free = st.f_bavail * st.f_frsize
    total = st.f_blocks * st.f_frsize
    keep = int(total * margin)
    if needed + keep > free:
        raise AgentFailure(
            "not-enough-space",
            "Not enough free space in %s: the test needs %d bytes plus %d kept free, "
            "but only %d are free." % (path, needed, keep, free),
        )


def require_free_inodes(path, needed, margin=0.05):
    """Refuse to start when creating ``needed`` files would use up the inodes."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        raise AgentFailure("no-such-directory", "Cannot use %s: %s" % (path, exc)) from exc
    if st.f_files == 0:
        return  # no fixed inode table (btrfs, tmpfs without nr_inodes, ZFS)
    keep = int(st.f_files * margin)
    if needed + keep > st.f_favail:
        raise AgentFailure(
            "not-enough-space",
            "Not enough free inodes in %s: the test creates %d files and keeps %d inodes "
            "free, but only %d are free." % (path, needed, keep, st.f_favail),
        )


def filesystem_type(path):
    """(mount point, type) of the filesystem holding ``path``, from /proc/mounts."""
    best = ("", "")
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts", "r") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return best
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount_point = parts[1].replace("\\040", " ")
        prefix = mount_point.rstrip("/") + "/"
        inside = real == mount_point or real.startswith(prefix) or mount_point == "/"
        if inside and len(mount_point) >= len(best[0]):
            best = (mount_point, parts[2])
    return best


def which(name, extra_dirs=("/usr/bin", "/usr/local/bin", "/usr/local/samba/bin", "/bin")):
    for directory in os.environ.get("PATH", "").split(os.pathsep) + list(extra_dirs):
        candidate = os.path.join(directory, name)
        if directory and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# smbclient's NT_STATUS codes, turned into sentences for people.
FAILURES = (
    ("NT_STATUS_LOGON_FAILURE", "smb-login-failed",
     "smbd refused the user name or password."),
    ("NT_STATUS_ACCESS_DENIED", "smb-access-denied",
     "smbd refused access to the share (read only, or not allowed for this user)."),
    ("NT_STATUS_BAD_NETWORK_NAME", "smb-no-such-share",
     "smbd has no share of that name."),
    ("NT_STATUS_CONNECTION_REFUSED", "smb-connection-refused",
     "Nothing accepts SMB connections on that address and port."),
    ("NT_STATUS_IO_TIMEOUT", "smb-timeout", "smbd did not answer in time."),
    ("NT_STATUS_DISK_FULL", "not-enough-space", "The share's disk filled up."),
)


class SmbClient(object):
    """smbclient against one share, with the credentials kept out of every command line."""

    def __init__(self, agent, params, work):
        self.agent = agent
        self.program = which("smbclient")
        if not self.program:
            raise AgentFailure(
                "no-smbclient",
                "smbclient is not installed on this server; the SMB tests need it "
                "(Debian/Ubuntu: apt install smbclient; RHEL/Fedora: dnf install samba-client).",
            )
        self.share = params["share"]
        self.address = params.get("address") or "127.0.0.1"
        self.port = int(params.get("port") or 445)
        self.protocol = params.get("protocol")
        self.auth_args = ["-N"]
        if params.get("user"):
            if "\n" in params["user"] + params.get("password", "") + params.get("domain", ""):
                raise AgentFailure("bad-parameter", "A user name or password cannot span lines.")
            auth = agent.own_path(os.path.join(work, "auth"))
            fd = os.open(auth, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write("username = %s\n" % params["user"])
                handle.write("password = %s\n" % params.get("password", ""))
                if params.get("domain"):
                    handle.write("domain = %s\n" % params["domain"])
            self.auth_args = ["-A", auth]

    def argv(self, commands, directory=None):
        argv = [self.program, "//%s/%s" % (self.address, self.share), "-p", str(self.port)]
        argv += self.auth_args
        if self.protocol:
            argv += ["-m", self.protocol]
        if directory:
            argv += ["-D", directory]
        return [*argv, "-c", commands]

    def run(self, commands, directory=None, timeout=3600, on_wait=None, every=0.5):
        done = self.agent.call(self.argv(commands, directory), timeout=timeout,
                               env=dict(os.environ, LC_ALL="C"), on_wait=on_wait, every=every)
        self.check(done)
        return done

    def check(self, done):
        if done.code != 0:
            raise self.failure(done, "smbclient failed (exit code %d)." % done.code)

    def failure(self, done, fallback):
        """An AgentFailure that says what smbclient's NT_STATUS code means."""
        text = done.text + done.error_text
        for status, code, sentence in FAILURES:
            if status in text:
                return AgentFailure(
                    code, "%s (//%s/%s, port %d)" % (sentence, self.address, self.share, self.port),
                    details=text.strip()[-2000:])
        return AgentFailure("smbclient-failed", fallback, details=text.strip()[-2000:])

    def version(self):
        done = self.agent.call([self.program, "--version"], timeout=30)
        return done.text.strip()

    def delete(self, name):
        """Remove a file from the share; used during cleanup, so it never raises."""
        try:
            subprocess.call(self.argv("del %s" % name), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        except Exception:
            pass


def run(name, main):
    agent = Agent(name)
    params = PARAMS
    if params is None:
        params = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _on_signal(agent))
    agent.emit("hello", **hello(name))
    watcher = threading.Thread(target=_watch_stdin, args=(agent,))
    watcher.daemon = True
    watcher.start()
    code = 0
    started = time.time()
    last = None
    try:
        result = main(agent, params)
        last = {"type": "result", "data": result, "seconds": round(time.time() - started, 3)}
    except Stop:
        last = {"type": "error", "code": "stopped", "message": "The agent was stopped."}
        code = 5
    except AgentFailure as exc:
        last = {"type": "error", "code": exc.code, "message": exc.message, "details": exc.details}
        code = 2
    except Exception as exc:  # report, never leave a bare traceback
        import traceback

        last = {
            "type": "error",
            "code": "agent-crashed",
            "message": "%s: %s" % (type(exc).__name__, exc),
            "details": traceback.format_exc(),
        }
        code = 1
    finally:
        # Signals during cleanup must not interrupt it.
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        # Clean up before the last line: once the app reads the result, nothing the
        # agent created is left on the server.
        agent.cleanup()
        agent.main_done.set()
    if last is not None:
        agent.emit(last.pop("type"), **last)
    sys.stdout.flush()
    os._exit(code)
