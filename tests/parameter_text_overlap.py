"""Finds word runs that our explanations share with a source we must not copy from.

Text is reduced to lower-case words, so punctuation, case and line breaks do not hide a
copied sentence. A "run" is N consecutive words (a shingle). The seeds are outside the
repository, so their shingles are kept as short hashes in tests/data/seed_shingles.txt:
the test can check for copies on a clean clone without shipping the seeds' text.

Run as a script to rebuild that file from the seeds:
    python tests/parameter_text_overlap.py /work/shared/seeds > tests/data/seed_shingles.txt
"""

from __future__ import annotations

import gzip
import hashlib
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

RUN_WORDS = 10
SEED_FILE_GLOB = "[0-9][0-9][0-9]_*.txt"

_WORD = re.compile(r"[^\W_]+")
# roff escapes: fonts (\fB, \f(CW, \f[B]), named characters (\(em, \[u2014]), and the
# one-character ones (\&, \-, \e, \%); none of them are words.
_ROFF_ESCAPE = re.compile(r"\\(f(\(..|\[[^]]*\]|.)|\(..|\[[^]]*\]|[&\-e%|^0c ])")
# Macros whose arguments are running text; every other request line is layout only.
_TEXT_MACROS = {"B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB", "SH", "SS", "TP", "IP"}


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def runs(word_list: list[str], size: int = RUN_WORDS) -> Iterator[tuple[str, ...]]:
    for start in range(len(word_list) - size + 1):
        yield tuple(word_list[start : start + size])


def run_digest(run: tuple[str, ...]) -> str:
    return hashlib.blake2b(" ".join(run).encode(), digest_size=8).hexdigest()


def roff_to_text(source: str) -> str:
    """The running text of a man page source, good enough to compare wording."""
    lines = []
    for line in source.splitlines():
        if line.startswith((".", "'")):
            macro, _, args = line[1:].strip().partition(" ")
            if macro not in _TEXT_MACROS:
                continue
            line = args.replace('"', " ")
        lines.append(_ROFF_ESCAPE.sub(" ", line))
    return "\n".join(lines)


def man_page_text(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return roff_to_text(raw.decode("utf-8", errors="replace"))


def seed_texts(seed_dir: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(seed_dir.glob(SEED_FILE_GLOB))]


def digests_of(texts: Iterable[str]) -> set[str]:
    return {run_digest(run) for text in texts for run in runs(words(text))}


def shared_runs(ours: str, theirs: set[tuple[str, ...]]) -> list[str]:
    return [" ".join(run) for run in runs(words(ours)) if run in theirs]


def shared_digests(ours: str, theirs: set[str]) -> list[str]:
    return [" ".join(run) for run in runs(words(ours)) if run_digest(run) in theirs]


if __name__ == "__main__":
    for digest in sorted(digests_of(seed_texts(Path(sys.argv[1])))):
        print(digest)
