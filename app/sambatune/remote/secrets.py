"""Secrets the user chose to keep: in the OS keyring, never in files or logs.

Only used when the user ticks "remember"; otherwise secrets live in memory for one
connection. Where no keyring service exists (a headless Linux box), saving is
refused with a clear message instead of falling back to a plain file.
"""

from __future__ import annotations

from typing import Any

from sambatune.errors import SambaTuneError

SERVICE = "SambaTune"


class KeyringUnavailable(SambaTuneError):
    code = "keyring-unavailable"


def _keyring() -> Any:
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or "fail" in type(backend).__module__:
        raise KeyringUnavailable(
            "No system keyring is available, so the secret was not saved.",
            details="Install and unlock a keyring service (GNOME Keyring, KWallet, "
            "macOS Keychain, Windows Credential Manager).",
        )
    return keyring


def secret_key(kind: str, target: str) -> str:
    return f"{kind}:{target}"


def keyring_available() -> bool:
    try:
        _keyring()
    except (KeyringUnavailable, ImportError):
        return False
    return True


def load_secret(kind: str, target: str) -> str | None:
    try:
        value = _keyring().get_password(SERVICE, secret_key(kind, target))
    except (KeyringUnavailable, ImportError):
        return None
    except Exception:
        return None
    return str(value) if value is not None else None


def save_secret(kind: str, target: str, secret: str) -> None:
    try:
        _keyring().set_password(SERVICE, secret_key(kind, target), secret)
    except KeyringUnavailable:
        raise
    except Exception as exc:
        raise KeyringUnavailable(
            "The system keyring refused to save the secret.", details=type(exc).__name__
        ) from exc


def forget_secret(kind: str, target: str) -> None:
    try:
        _keyring().delete_password(SERVICE, secret_key(kind, target))
    except Exception:
        pass
