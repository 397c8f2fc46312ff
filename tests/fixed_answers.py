"""Prompts answered up front, for tests: a host key accepted or not, a password and a
passphrase given once (a fixed answer that failed once would fail again)."""

from __future__ import annotations

from sambatune.remote.hostkeys import HostKeyQuestion
from sambatune.remote.prompts import SecretRequest


class FixedAnswers:
    """Answers decided up front."""

    def __init__(
        self,
        *,
        accept_new_host_key: bool = False,
        password: str | None = None,
        passphrase: str | None = None,
    ) -> None:
        self.accept_new_host_key = accept_new_host_key
        self.password = password
        self.passphrase = passphrase
        self.questions: list[HostKeyQuestion] = []

    def confirm_host_key(self, question: HostKeyQuestion) -> bool:
        self.questions.append(question)
        return self.accept_new_host_key

    def ask_secret(self, request: SecretRequest) -> str | None:
        if request.attempt > 1:
            return None  # a fixed answer that failed once will fail again
        if request.kind == "passphrase":
            return self.passphrase
        return self.password
