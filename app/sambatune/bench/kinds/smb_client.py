"""This computer writes and reads a file on a share: SambaTune's own SMB client, or the
system's through a mounted path. (Its command, ``sambatune bench smb-client``, needs no
SSH and lives in ``cli/bench_smb_client.py``.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sambatune.bench.kinds.arguments import AUTO_SIZE_TIP, form_login, require_share_target, share_target
from sambatune.bench.kinds.kind import AUTO, SHARE_TARGET_ROWS, BenchKind, RunRequest

if TYPE_CHECKING:
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_security import ServerSessions

#: Said under the explanation: where the limit may be SambaTune's own.
PURE_PYTHON_HINT = (
    " SambaTune's own SMB client reads and writes as fast as smbclient; when it is "
    "the limit itself, the result says so. Give a mounted "
    "path to measure through this computer's own client instead."
)


def smb_client_options(request: RunRequest, login: dict[str, Any]) -> SmbClientOptions:
    """The test's options; :class:`InvalidInput` says what is wrong (e.g. a signed
    session with no user)."""
    from sambatune.bench.smb_client import SmbClientOptions
    from sambatune.bench.smb_wire import SmbLogin

    return SmbClientOptions(
        login=SmbLogin(**login),
        size=request.size,
        block_size=request.block,
        outstanding=request.outstanding,
        security=request.security,
        **share_target(request),
    )


def server_session_reader(transport: Any, survey: Any) -> ServerSessions | None:
    """Reads the session list of the smbd SambaTune manages on this server, or None when
    the survey knows no running smbd for its smb.conf (worker thread: it may ask sudo).

    Root sees every session; without it smbstatus lists only the SSH account's own, which
    rarely holds the test's SMB user: the test then says it named the session from this
    computer's side. Decided as the survey's client audit does.
    """
    if survey is None or survey.ambiguous or not survey.config_path or survey.managed_instance is None:
        return None
    from sambatune.bench.smb_security import server_sessions

    return server_sessions(transport, survey.config_path)


def _check(request: RunRequest) -> None:
    require_share_target(request)
    # The core's own checks (size, requests in flight, a user for signed and encrypted
    # sessions); no password yet: the keyring is read in the worker.
    smb_client_options(request, {"user": request.user or None})


KIND = BenchKind(
    name="smb-client",
    order=60,
    title="SMB from this computer",
    explanation="This computer writes and reads a file on the share: your network and the "
    "server together, as users see them." + PURE_PYTHON_HINT,
    rows=SHARE_TARGET_ROWS | {"size", "block", "outstanding", "security"},
    compares_sessions=True,
    engine="sambatune.bench.smb_client:SmbClientBenchmark",
    options=lambda request, context: smb_client_options(request, form_login(request)),
    check=_check,
    defaults={"size": AUTO, "outstanding": 4},
    tips={
        "size": AUTO_SIZE_TIP.format(what="a short probe write and read", most="256MiB"),
        "outstanding": "Read or write requests SambaTune's client keeps going at once.",
    },
)
