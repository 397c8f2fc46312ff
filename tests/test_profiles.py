"""The saved servers (servers.json) as a hand edit or a damaged disk leaves them: every
value checked on load, one clear refusal, nothing overwritten (issue 27 item 9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_process import sambatune_cli
from sambatune.errors import InvalidInput
from sambatune.profiles import LOCAL_ID, ProfileStore, ServerProfile

GOOD = {"name": "nas", "host": "nas.example.org", "port": 22, "user": "admin", "id": "abc123"}

DAMAGED: dict[str, tuple[Any, str]] = {
    "host-a-number": ([{**GOOD, "host": 5}], "host must be text, not a number"),
    "user-a-number": ([{**GOOD, "user": 7}], "user must be text"),
    "jump-host-a-list": ([{**GOOD, "jump_host": [1]}], "jump_host must be text, not a list"),
    "name-a-number": ([{**GOOD, "name": 5}], "name must be text"),
    "port-as-text": ([{**GOOD, "port": "22"}], "port must be a whole number"),
    "sudo-as-text": ([{**GOOD, "use_sudo": "no"}], "use_sudo must be true or false"),
    "unknown-sign-in": ([{**GOOD, "auth": "x"}], "Unknown sign-in method"),
    "the-local-id": ([{**GOOD, "id": LOCAL_ID}], 'the id "local" is this computer'),
    "an-id-twice": ([GOOD, {**GOOD, "name": "other"}], "the id 'abc123' is used twice"),
    "a-server-a-string": (["nas"], "a server is a JSON object"),
    "servers-an-object": ({"nas": GOOD}, 'no list of "servers"'),
}


def write(path: Path, servers: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "servers": servers}))


def test_a_good_list_loads() -> None:
    store = ProfileStore()
    write(store.path, [GOOD])
    assert store.load() == [ServerProfile(**GOOD)]  # type: ignore[arg-type]


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_list_is_one_clear_refusal(case: str) -> None:
    servers, words = DAMAGED[case]
    store = ProfileStore()
    write(store.path, servers)
    with pytest.raises(InvalidInput, match="is damaged and was not loaded") as caught:
        store.load()
    assert words in caught.value.message


@pytest.mark.parametrize("case", ["host-a-number", "name-a-number", "the-local-id"])
def test_the_command_line_says_so_in_one_line(case: str) -> None:
    store = ProfileStore()
    write(store.path, DAMAGED[case][0])
    done = sambatune_cli("survey", "--profile", "nas", "--json")  # no traceback: sambatune_cli checks
    assert done.returncode == 1
    assert "is damaged" in json.loads(done.stdout)["error"]["message"]


def test_a_damaged_list_is_kept_aside_not_overwritten() -> None:
    store = ProfileStore()
    write(store.path, DAMAGED["host-a-number"][0])
    damaged = store.path.read_bytes()
    with pytest.raises(InvalidInput):
        store.load()
    store.save([ServerProfile(name="new", host="new.example.org")])
    [kept] = list(store.path.parent.glob("servers.json.damaged-*"))
    assert kept.read_bytes() == damaged
    assert [p.name for p in store.load()] == ["new"]
