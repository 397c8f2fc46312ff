"""The protocol every SambaTune agent speaks, shipped to the server with the agent.

Runs on the server under Python 3.6 or newer, standard library only. See README.md.

An agent is a module with ``main(agent, params)`` that ends with
``agent_runtime.run("name", main)``. The runtime prints the hello line, runs
``main``, prints its return value as the result (or an error), and removes every
file and process the agent registered, whatever ends the run: success, an
exception, SIGTERM/SIGINT/SIGHUP, or stdin closing because the client went away.
"""

import json
import os
import platform
import signal
import subprocess
import sys
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

    def cleanup(self):
        with self._cleanup_lock:
            if self._cleaned:
                return
            self._cleaned = True
            processes, paths, callbacks = self._processes, self._paths, self._callbacks
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
    try:
        result = main(agent, params)
        agent.emit("result", data=result, seconds=round(time.time() - started, 3))
    except Stop:
        agent.emit("error", code="stopped", message="The agent was stopped.")
        code = 5
    except AgentFailure as exc:
        agent.emit("error", code=exc.code, message=exc.message, details=exc.details)
        code = 2
    except Exception as exc:  # report, never leave a bare traceback
        import traceback

        agent.emit(
            "error",
            code="agent-crashed",
            message="%s: %s" % (type(exc).__name__, exc),
            details=traceback.format_exc(),
        )
        code = 1
    finally:
        # Signals during cleanup must not interrupt it.
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        agent.cleanup()
        agent.main_done.set()
    sys.stdout.flush()
    os._exit(code)
