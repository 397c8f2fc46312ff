"""Resolve a host the way OpenSSH would: ~/.ssh/config, then what the user typed.

paramiko reads ssh_config but skips ``Include`` without a word; :func:`load_ssh_config`
follows it as OpenSSH does (``man ssh_config``, readconf.c) and hands paramiko one
flattened text:

- ``Include`` takes one or more paths, each a glob whose matches are read in sorted
  order; ``~`` is the home folder and a relative path is relative to ``~/.ssh`` (also
  for a file given with ``--ssh-config``, like ``ssh -F``); a path that matches nothing
  is skipped without a word, a file that is there but unreadable is an error;
- inside a ``Host`` or ``Match`` block the included lines apply only when that block
  matches, and the included file's own ``Host``/``Match`` blocks only when both do;
  after the included file the including block goes on as before;
- includes nest up to 16 deep (a file including itself ends there, with an error);
- a config file others may write (group or world writable, or owned by someone else
  than you or root) is refused, as ssh refuses it: ~/.ssh/config and every included
  file, not a file given explicitly.

A block nested in another becomes one ``Match`` line with both blocks' criteria
(``Host`` patterns as ``originalhost``, which matches the same name). First obtained
value wins, as always: the flattened text keeps every line in reading order.
"""

from __future__ import annotations

import getpass
import glob
import hashlib
import logging
import os
import re
import shlex
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from sambatune.errors import InvalidInput

DEFAULT_IDENTITIES = ("id_ed25519", "id_ecdsa", "id_rsa")
#: OpenSSH's READCONF_MAX_DEPTH.
INCLUDE_DEPTH_LIMIT = 16
# paramiko's SSHConfig.SETTINGS_REGEX: a keyword, then "=" or blanks, then the value.
_SETTING = re.compile(r"(\w+)(?:\s*=\s*|\s+)(.+)")
# Match criteria that take no argument.
_BARE_CRITERIA = ("all", "canonical", "final")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SshEndpoint:
    """Everything needed to reach one SSH server (one hop)."""

    alias: str  # what the user typed, e.g. "files1"
    hostname: str  # what we connect to, after HostName
    port: int = 22
    user: str = ""
    identity_files: tuple[str, ...] = ()
    identities_only: bool = False
    use_agent: bool = True
    proxy_jump: tuple[SshEndpoint, ...] = field(default=())
    connect_timeout: float = 10.0
    #: The known_hosts files OpenSSH reads for this host, tokens and ~ expanded:
    #: UserKnownHostsFile and GlobalKnownHostsFile, else their defaults.
    user_known_hosts: tuple[str, ...] = ()
    global_known_hosts: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        port = "" if self.port == 22 else f":{self.port}"
        return f"{self.user}@{self.alias}{port}" if self.user else f"{self.alias}{port}"

    @property
    def known_hosts_name(self) -> str:
        """The name OpenSSH stores in known_hosts: ``host`` or ``[host]:port``."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


def default_user_known_hosts() -> tuple[str, ...]:
    """OpenSSH's UserKnownHostsFile when the config names none."""
    return tuple(os.path.expanduser(f"~/.ssh/{name}") for name in ("known_hosts", "known_hosts2"))


def default_global_known_hosts() -> tuple[str, ...]:
    """OpenSSH's GlobalKnownHostsFile when the config names none (Win32-OpenSSH keeps
    them under %ProgramData%\\ssh)."""
    if os.name == "nt":
        folder = os.path.join(os.environ.get("PROGRAMDATA", r"C:\ProgramData"), "ssh")
    else:
        folder = "/etc/ssh"
    return tuple(os.path.join(folder, name) for name in ("ssh_known_hosts", "ssh_known_hosts2"))


# ${NAME} in a path of the config: the environment variable, as ssh expands it.
_ENVIRONMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _known_hosts_files(
    value: str | None, defaults: tuple[str, ...], tokens: dict[str, str] | None
) -> tuple[str, ...]:
    """The files one known_hosts option names: several, quoted as ssh quotes them, "none"
    for no file; ~, ${ENV} and (for UserKnownHostsFile) %-tokens expanded."""
    if value is None:
        return defaults
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"Cannot read the known hosts files {value!r} of the SSH config: {exc}") from exc
    if [w.lower() for w in words] == ["none"]:
        return ()
    files = []
    for word in words:
        if tokens is not None:
            word = _expand_tokens(word, tokens)

        def environment(match: re.Match[str]) -> str:
            if match.group(1) not in os.environ:
                raise InvalidInput(
                    f"The SSH config names a known hosts file with ${{{match.group(1)}}}, "
                    "which is not set (ssh refuses it too)."
                )
            return os.environ[match.group(1)]

        files.append(os.path.expanduser(_ENVIRONMENT.sub(environment, word)))
    return tuple(files)


def _expand_tokens(text: str, tokens: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(1)
        if token not in tokens:
            raise InvalidInput(
                f"The SSH config names a known hosts file with %{token}, which ssh does not "
                "expand there either."
            )
        return tokens[token]

    return re.sub(r"%(.)", one, text)


def default_ssh_config_path() -> Path:
    return Path(os.path.expanduser("~/.ssh/config"))


def load_ssh_config(path: Path | None = None) -> paramiko.SSHConfig:
    """The user's ssh config (``path``, like ``ssh -F``, or ~/.ssh/config), includes
    followed. A missing file is an empty config, as for ssh."""
    explicit = path is not None
    path = path if path is not None else default_ssh_config_path()
    if not path.is_file():
        return paramiko.SSHConfig()
    blocks: list[_Block] = []
    _read_config(path, (), 0, blocks, check_owner=not explicit)
    text = "".join(block.render() for block in blocks)
    try:
        return paramiko.SSHConfig.from_text(text)
    except Exception as exc:  # paramiko raises several kinds for a bad file
        raise InvalidInput(f"Cannot read the SSH config file {path}: {exc}") from exc


# A condition is the criteria of one Host or Match line, as Match keywords and arguments:
# all of them must hold. A block holds when its own condition and all enclosing ones do.
Criteria = tuple[tuple[str, str | None], ...]


@dataclass
class _Block:
    """Lines of one file under one condition: the file's own header line, if any, and the
    conditions of the blocks its Include lines were in."""

    header: str | None  # "Host ..." / "Match ..." as written; None: the top of a file
    own: Criteria
    enclosing: tuple[Criteria, ...]
    lines: list[str] = field(default_factory=list)

    def render(self) -> str:
        if not self.lines:
            return ""
        if not self.enclosing:
            head = self.header or "Host *"
        else:
            criteria = [
                c for part in (*self.enclosing, self.own) for c in part if c != ("all", None)
            ]  # "all" with others: the others decide
            head = (
                "Match "
                + " ".join(
                    keyword if argument is None else f"{keyword} {shlex.quote(argument)}"
                    for keyword, argument in criteria
                )
                if criteria
                else "Host *"
            )
        return head + "\n" + "".join(line + "\n" for line in self.lines)


def _read_config(
    path: Path,
    enclosing: tuple[Criteria, ...],
    depth: int,
    blocks: list[_Block],
    *,
    check_owner: bool,
) -> None:
    if depth > INCLUDE_DEPTH_LIMIT:
        raise InvalidInput(
            f"Too many nested Include levels in the SSH config (more than "
            f"{INCLUDE_DEPTH_LIMIT}) at {path}: does a file include itself?"
        )
    if check_owner:
        _check_owner(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InvalidInput(
            f"Cannot read the SSH config file {path}: {exc.strerror}", details=str(exc)
        ) from exc
    block = _Block(None, (), enclosing)
    blocks.append(block)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        setting = _SETTING.match(line)
        if setting is None:
            raise InvalidInput(
                f"Cannot read the SSH config file {path}, line {number}: {line!r} is not 'Keyword value'."
            )
        keyword, value = setting.group(1).lower(), setting.group(2)
        if keyword in ("host", "match"):
            own = _criteria(keyword, value, path, number)
            block = _Block(line, own, enclosing)
            blocks.append(block)
        elif keyword == "include":
            inside = (*enclosing, block.own) if block.header is not None else enclosing
            for included in _include_paths(value, path, number):
                _read_config(included, inside, depth + 1, blocks, check_owner=True)
            # What follows belongs to the including block again.
            block = _Block(block.header, block.own, enclosing)
            blocks.append(block)
        else:
            block.lines.append(line)


def _criteria(keyword: str, value: str, path: Path, number: int) -> Criteria:
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"Cannot read the SSH config file {path}, line {number}: {exc}") from exc
    if keyword == "host":
        # Host matches the name as typed, the way Match originalhost does.
        return (("originalhost", ",".join(words)),)
    criteria: list[tuple[str, str | None]] = []
    while words:
        word = words.pop(0)
        if word.lstrip("!").lower() in _BARE_CRITERIA:
            criteria.append((word.lower(), None))
        elif not words:
            raise InvalidInput(
                f"Cannot read the SSH config file {path}, line {number}: Match {word} needs an argument."
            )
        else:
            criteria.append((word.lower(), words.pop(0)))
    return tuple(criteria)


def _include_paths(value: str, path: Path, number: int) -> list[Path]:
    try:
        patterns = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"Cannot read the SSH config file {path}, line {number}: {exc}") from exc
    found: list[Path] = []
    for pattern in patterns:
        if not pattern.startswith("~") and not os.path.isabs(pattern):
            pattern = os.path.join("~", ".ssh", pattern)
        matches = sorted(glob.glob(os.path.expanduser(pattern)))
        if not matches:
            log.debug("%s line %d: Include %s matched no files", path, number, pattern)
        # A directory (config.d/* with a subfolder) or a FIFO is not a config file.
        found += [Path(m) for m in matches if os.path.isfile(m)]
    return found


def _check_owner(path: Path) -> None:
    if os.name != "posix":
        return
    try:
        info = path.stat()
    except OSError:
        return  # reading it says what is wrong
    if (info.st_uid not in (0, os.getuid())) or stat.S_IMODE(info.st_mode) & 0o022:
        raise InvalidInput(
            f"Bad owner or permissions on {path}: others could change where your "
            "connections go, so ssh refuses this file and so does SambaTune.",
            details=f"Make it yours and writable only by you: chmod go-w '{path}'",
        )


def resolve_endpoint(
    host: str,
    *,
    port: int | None = None,
    user: str | None = None,
    identity_file: str | None = None,
    ssh_config: paramiko.SSHConfig | None = None,
    connect_timeout: float | None = None,
    jump_host: str | None = None,
    _depth: int = 0,
) -> SshEndpoint:
    """Apply ~/.ssh/config to ``host``; explicit arguments win, as on the ssh command line.

    ``host`` may be ``user@host:port`` (the ProxyJump form) as well as a plain name.
    """
    if _depth > 8:
        raise InvalidInput("ProxyJump chain is longer than 8 hops (a loop in ~/.ssh/config?)")
    config = ssh_config if ssh_config is not None else load_ssh_config()
    typed_user, typed_host, typed_port = _split_destination(host)
    user = user or typed_user
    port = port or typed_port
    found = config.lookup(typed_host)

    hostname = found.get("hostname", typed_host)
    resolved_port = port or int(found.get("port", 22))
    resolved_user = user or found.get("user") or getpass.getuser()
    identities: list[str] = []
    if identity_file:
        identities.append(_required_identity(identity_file))
    for entry in found.get("identityfile", []):
        # ssh skips an IdentityFile of its config that is not there, without a word.
        path = os.path.expanduser(entry)
        if not os.path.exists(path):
            log.info(
                "IdentityFile %s (ssh config, for %s) does not exist: skipped, as ssh skips it",
                entry,
                typed_host,
            )
        identities.append(path)
    identities_only = found.get("identitiesonly", "no").lower() == "yes"
    if not identities and not identities_only:
        ssh_dir = os.path.expanduser("~/.ssh")
        identities = [os.path.join(ssh_dir, name) for name in DEFAULT_IDENTITIES]
    timeout = connect_timeout or float(found.get("connecttimeout", 10))

    jumps: list[SshEndpoint] = []
    proxy_jump = jump_host or found.get("proxyjump", "")
    local_host = socket.gethostname()
    hostname_seen = hostname.lower()  # ssh lowercases the name it looks up and expands
    tokens = {
        "%": "%",
        "d": os.path.expanduser("~"),
        "h": hostname_seen,
        "i": str(os.getuid()) if hasattr(os, "getuid") else "0",
        "j": "" if proxy_jump.lower() == "none" else proxy_jump,
        "k": found.get("hostkeyalias", typed_host),
        "L": local_host.split(".")[0],
        "l": local_host,
        "n": typed_host,
        "p": str(resolved_port),
        "r": resolved_user,
        "u": getpass.getuser(),
    }
    tokens["C"] = hashlib.sha1(
        "".join(tokens[t] for t in "lhprj").encode(), usedforsecurity=False
    ).hexdigest()
    if proxy_jump and proxy_jump.lower() != "none":
        for hop in proxy_jump.split(","):
            jumps.append(
                resolve_endpoint(
                    hop.strip(),
                    ssh_config=config,
                    connect_timeout=connect_timeout,
                    _depth=_depth + 1,
                )
            )
    return SshEndpoint(
        alias=typed_host,
        hostname=hostname,
        port=resolved_port,
        user=resolved_user,
        identity_files=tuple(dict.fromkeys(identities)),
        identities_only=identities_only,
        use_agent=found.get("identityagent", "").lower() != "none",
        proxy_jump=tuple(jumps),
        connect_timeout=timeout,
        user_known_hosts=_known_hosts_files(
            found.get("userknownhostsfile"), default_user_known_hosts(), tokens
        ),
        global_known_hosts=_known_hosts_files(
            found.get("globalknownhostsfile"), default_global_known_hosts(), None
        ),
    )


def _required_identity(typed: str) -> str:
    """The key file the user named (the server's profile, ``--identity``), which must be
    there: quietly trying ssh-agent and the default keys instead would sign in with
    another key, or fail later with a message that never names the typo."""
    path = os.path.expanduser(typed)
    details = (
        f"Looked for {path}. SambaTune does not fall back to ssh-agent or the "
        "default keys when the key file given for a server is missing; correct the "
        "server's key file (or --identity), or leave it empty to use those."
    )
    if not os.path.exists(path):
        raise InvalidInput(f"The identity file {typed} does not exist.", details=details)
    if not os.path.isfile(path):
        raise InvalidInput(f"The identity file {typed} is not a file.", details=details)
    if not os.access(path, os.R_OK):
        raise InvalidInput(f"The identity file {typed} cannot be read (permission denied).", details=details)
    return path


def _split_destination(text: str) -> tuple[str | None, str, int | None]:
    user = None
    port = None
    rest = text.strip()
    if rest.startswith("ssh://"):
        rest = rest[len("ssh://") :]
    if "@" in rest:
        user, rest = rest.rsplit("@", 1)
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        if tail.startswith(":") and tail[1:].isdigit():
            port = int(tail[1:])
        return user, host, port
    if rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
        if port_text.isdigit():
            return user, host, int(port_text)
    if not rest:
        raise InvalidInput(f"No host name in {text!r}")
    return user, rest, port
