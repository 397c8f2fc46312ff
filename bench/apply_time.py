"""What safe apply costs over SSH, against the same change made by hand with OpenSSH.

Starts the test bed's sshd and smbd on loopback and alternates, round by round:

- SambaTune: ``apply_config`` over a real SSH connection (opened once, as the app does),
  adding then removing a share, so every round is a real change with a reload;
- by hand: one ``ssh`` command that does what an admin types: ``testparm -s`` on the
  new file, ``cp`` over smb.conf, ``smbcontrol smbd reload-config``.

SambaTune does more (backup, checksums, a race-checked swap, the apply lock, a health
check with smbclient), so the ratio says what that safety costs in wall time. It also
counts the commands each apply sends, by kind.

Prints one JSON object. Run from the repository: .venv/bin/python bench/apply_time.py
[--rounds 6]. Pointing PYTHONPATH at another checkout's app/ times that version.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sambatune.conf.apply import ApplyRequest, apply_config
from sambatune.remote.connection import open_target
from sambatune.remote.prompts import NoPrompts
from testbed.smbd import SmbServer
from testbed.sshd import SshServer, current_user, keygen

SHARE = "\n[extra]\n  path = {path}\n  read only = yes\n"


def counted(transport, counts: collections.Counter) -> None:  # type: ignore[no-untyped-def]
    """Count every command the transport sends, by its first word after sudo/sh -c."""
    run, start = transport._run, transport._start

    def name(argv: Sequence[str]) -> str:
        words = [w for w in argv if not w.startswith("-")]
        if words[:1] == ["sh"] and len(argv) > 3:
            return "sh:" + argv[3]
        return words[0] if words else "?"

    def counting_run(argv, *rest):  # type: ignore[no-untyped-def]
        counts[name(argv)] += 1
        return run(argv, *rest)

    def counting_start(argv, *rest):  # type: ignore[no-untyped-def]
        counts[name(argv) + " (held)"] += 1
        return start(argv, *rest)

    transport._run, transport._start = counting_run, counting_start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sambatune-apply-bench-") as tmp:
        root = Path(tmp)
        key = keygen(root / "id_ed25519")
        sshd = SshServer(root, "sshd")
        sshd.authorize(key.with_suffix(".pub"))
        sshd.start()
        smbd = SmbServer(root, "smbd")
        smbd.start()
        known = root / "known_hosts"
        try:
            known.write_text(sshd.known_hosts_line)
            options = sshd.key_options(key, known)
            transport = open_target(options, NoPrompts())
            counts: collections.Counter[str] = collections.Counter()
            counted(transport, counts)
            base = smbd.config.read_bytes()
            with_share = base + SHARE.format(path=smbd.share_path).encode()
            ssh = [
                "ssh",
                "-p",
                str(sshd.port),
                "-i",
                str(key),
                "-o",
                f"UserKnownHostsFile={known}",
                "-o",
                "GlobalKnownHostsFile=/dev/null",
                "-o",
                "BatchMode=yes",
                f"{current_user()}@127.0.0.1",
            ]
            new_file = root / "new.conf"
            ours: list[float] = []
            by_hand: list[float] = []
            first_counts: dict[str, int] = {}
            new_file.write_bytes(base)
            put_back = (
                f"testparm -s --suppress-prompt {shlex.quote(str(new_file))} "
                f">/dev/null 2>&1 && cp {shlex.quote(str(new_file))} "
                f"{shlex.quote(str(smbd.config))} && smbcontrol "
                f"--configfile={shlex.quote(str(smbd.config))} smbd reload-config"
            )
            for _ in range(args.rounds):
                # SambaTune adds the share; by hand it is taken out again: one real
                # change (and reload) each.
                started = time.perf_counter()
                outcome = apply_config(
                    transport, ApplyRequest(str(smbd.config), base, with_share, summary="bench")
                )
                ours.append(time.perf_counter() - started)
                assert outcome.ok, outcome.message
                first_counts = first_counts or dict(counts)
                started = time.perf_counter()
                subprocess.run([*ssh, put_back], check=True, capture_output=True)
                by_hand.append(time.perf_counter() - started)
                assert smbd.config.read_bytes() == base
            transport.close()
        finally:
            smbd.stop()
            sshd.stop()
    mean_ours, mean_hand = statistics.mean(ours), statistics.mean(by_hand)
    print(
        json.dumps(
            {
                "rounds": len(ours),
                "load_average": os.getloadavg(),
                "sambatune_apply_s": {"mean": round(mean_ours, 3), "stdev": round(statistics.stdev(ours), 3)},
                "ssh_by_hand_s": {"mean": round(mean_hand, 3), "stdev": round(statistics.stdev(by_hand), 3)},
                "ratio": round(mean_ours / mean_hand, 2),
                "commands_per_apply": first_counts,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
