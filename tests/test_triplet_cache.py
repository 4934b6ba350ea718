"""The triplet cache under verification: each distinct sentence extracted once, across queries and processes.

Fast tier: a lexicon extractor (no model) behind :class:`CachedTripletExtractor`; the
persistent rows are read back by a second wrapper (another process sees the same file).
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from opinio_agents.models import Evidence, Highlight, Polarity
from opinio_agents.synthesis.verification import HighlightVerifier
from opinio_agents.triplets.base import Triplet, TripletExtractor
from opinio_agents.triplets.cache import (
    TRIPLET_CACHE_FILE,
    CachedTripletExtractor,
    PersistentTripletCache,
    extractor_identity,
)

POSITIVE = {"great", "friendly", "fast", "clean"}
NEGATIVE = {"slow", "rude", "dirty", "noisy"}


class Lexicon(TripletExtractor):
    """(first word, each opinion word) triplets; records every call."""

    def __init__(self, flip: bool = False) -> None:
        self.flip = flip
        self.calls: list[list[str]] = []

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        self.calls.append(list(sentences))
        sign = -1 if self.flip else 1
        out = []
        for sentence in sentences:
            words = re.findall(r"[a-z]+", sentence.lower())
            out.append(
                [
                    Triplet(aspect=words[0], opinion=w, sentiment=sign if w in POSITIVE else -sign)
                    for w in words[1:]
                    if w in POSITIVE or w in NEGATIVE
                ]
            )
        return out


TEXTS = ["wifi slow and noisy", "staff friendly", "room clean but noisy", "pool nothing to say"]


def test_same_triplets_as_the_extractor_and_misses_go_in_one_call() -> None:
    inner = Lexicon()
    cached = CachedTripletExtractor(inner)
    assert cached.extract([*TEXTS, TEXTS[0]]) == Lexicon().extract([*TEXTS, TEXTS[0]])
    assert inner.calls == [TEXTS]  # the repeated text is extracted once, all misses in one batch
    assert cached.extract(TEXTS[1:3]) == Lexicon().extract(TEXTS[1:3])
    assert len(inner.calls) == 1
    assert (cached.stats.misses, cached.stats.hits, cached.stats.extractor_calls) == (5, 2, 1)


def test_rows_persist_in_the_store_for_another_process(tmp_path: Path) -> None:
    first = CachedTripletExtractor(Lexicon(), cache_dir=tmp_path)
    expected = first.extract(TEXTS)
    first.close()
    assert (tmp_path / TRIPLET_CACHE_FILE).is_file()
    inner = Lexicon()
    second = CachedTripletExtractor(inner, cache_dir=tmp_path)
    assert second.extract(TEXTS) == expected
    assert inner.calls == [] and second.stats.disk_hits == len(TEXTS)
    # a new text reaches the extractor alone
    assert second.extract([TEXTS[0], "bed dirty"]) == Lexicon().extract([TEXTS[0], "bed dirty"])
    assert inner.calls == [["bed dirty"]]


def test_another_extractor_identity_never_sees_the_rows(tmp_path: Path) -> None:
    CachedTripletExtractor(Lexicon(), cache_dir=tmp_path).extract(TEXTS)
    assert extractor_identity(Lexicon()) != extractor_identity(Lexicon(flip=True))
    flipped = Lexicon(flip=True)
    cached = CachedTripletExtractor(flipped, cache_dir=tmp_path)
    assert cached.extract(TEXTS) == Lexicon(flip=True).extract(TEXTS)
    assert flipped.calls == [TEXTS]
    with sqlite3.connect(tmp_path / TRIPLET_CACHE_FILE) as conn:
        identities = {row[0] for row in conn.execute("SELECT identity FROM triplets")}
    assert identities == {extractor_identity(flipped)}  # the other identity's rows were dropped on open


def test_identity_follows_the_weight_files(tmp_path: Path) -> None:
    class FromDir(Lexicon):
        def __init__(self, weights_dir: Path) -> None:
            super().__init__()
            self.weights_dir = weights_dir

    (tmp_path / "head.bin").write_bytes(b"\x00" * 8)
    before = extractor_identity(FromDir(tmp_path))
    (tmp_path / "head.bin").write_bytes(b"\x01" * 8)
    assert extractor_identity(FromDir(tmp_path)) != before


def test_a_missing_store_or_a_corrupt_file_only_turns_the_disk_cache_off(tmp_path: Path) -> None:
    nowhere = tmp_path / "not-a-store"
    cached = CachedTripletExtractor(Lexicon(), cache_dir=nowhere)
    assert cached.extract(TEXTS) == Lexicon().extract(TEXTS)
    assert not nowhere.exists()  # a cache never creates a store
    (tmp_path / TRIPLET_CACHE_FILE).write_bytes(b"this is not sqlite" * 100)
    inner = Lexicon()
    broken = CachedTripletExtractor(inner, cache_dir=tmp_path)
    assert broken.extract(TEXTS) == Lexicon().extract(TEXTS)
    assert broken.extract(TEXTS) == Lexicon().extract(TEXTS)  # memory still serves
    assert inner.calls == [TEXTS]


def test_the_file_is_bounded_oldest_rows_first(tmp_path: Path) -> None:
    cache = PersistentTripletCache(tmp_path / TRIPLET_CACHE_FILE, "x", max_rows=3)
    for i in range(5):
        cache.put_many({f"text {i}": [Triplet(aspect="a", opinion="good", sentiment=1)]})
    kept = cache.get_many([f"text {i}" for i in range(5)])
    assert sorted(kept) == ["text 2", "text 3", "text 4"]


def test_verification_reads_the_cache_and_gives_the_same_verdicts(tmp_path: Path) -> None:
    h = Highlight(
        query="wifi",
        polarity=Polarity.CONS,
        text="wifi slow",
        evidence=[Evidence(sentence_id=f"1:{i}:0", text=t, sentiment=-0.4) for i, t in enumerate(TEXTS[:1])],
    )
    plain = HighlightVerifier(Lexicon(), similarity=lambda a, bs: [1.0] * len(bs)).verify([h])
    CachedTripletExtractor(Lexicon(), cache_dir=tmp_path).extract([h.text, TEXTS[0]])
    inner = Lexicon()
    cached = HighlightVerifier(
        CachedTripletExtractor(inner, cache_dir=tmp_path), similarity=lambda a, bs: [1.0] * len(bs)
    ).verify([h])
    assert cached == plain and inner.calls == []


def test_the_facade_verifier_keeps_its_triplets_in_the_store(tmp_path: Path) -> None:
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(tmp_path / "store")
    verifier = rag.verifier(True)
    assert verifier is not None and isinstance(verifier._extractor, CachedTripletExtractor)
    assert verifier._extractor.persistent is not None
    assert verifier._extractor.persistent.path == tmp_path / "store" / TRIPLET_CACHE_FILE


def test_openmp_threads_wait_passively_unless_the_user_says_otherwise() -> None:
    code = "import opinio_agents, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PASSIVE"
    env["OMP_WAIT_POLICY"] = "ACTIVE"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"


def test_a_file_of_the_older_layout_is_replaced_not_trusted(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / TRIPLET_CACHE_FILE) as conn:  # the layout before the shared SQLite cache
        conn.execute("CREATE TABLE triplets (key TEXT PRIMARY KEY, identity TEXT, triplets TEXT, added REAL)")
        conn.execute("INSERT INTO triplets VALUES ('k', 'x', '[]', 0)")
    cache = PersistentTripletCache(tmp_path / TRIPLET_CACHE_FILE, "x")
    cache.put_many({"pool great": [Triplet(aspect="pool", opinion="great", sentiment=1)]})
    assert cache.get_many(["pool great"]) == {"pool great": [Triplet(aspect="pool", opinion="great", sentiment=1)]}
    with sqlite3.connect(tmp_path / TRIPLET_CACHE_FILE) as conn:
        assert conn.execute("SELECT COUNT(*) FROM triplets").fetchone() == (1,)
