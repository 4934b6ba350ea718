"""The indexer: reviews in, sentences, BM25 tokens, vectors and sentiment out, written to a store.

Indexing is idempotent and incremental. Each review is hashed (text plus
metadata); unchanged reviews are never segmented or embedded again, changed
ones are replaced, removed ones deleted, new ones added without a rebuild.
Vectors carry their review's hash, so a run interrupted mid-way is completed
by the next one without re-embedding what already reached Chroma.

Each distinct text is encoded once per store: sentences are grouped by a digest
of the encoder's identity and the text's spacing-collapsed (and, for an uncased
model, lower-cased) form, and a text whose vector the store already keeps, from
any entity, is not encoded again. The encoder runs on the calling thread; a
bounded queue hands its output to one writer thread, which stores the new text
vectors, writes one Chroma record per sentence and scores sentiment from the
same vectors, so the write path overlaps with encoding.

Before anything is written the indexer checks that its encoder, tokenizer and
sentiment scorer are the ones that built the store, and that the sentiment
scorer can read the encoder's vectors.

Example:
    >>> from opinio_agents.indexing import Indexer
    >>> from opinio_agents.stores import SentenceStore
    >>> indexer = Indexer(SentenceStore("/tmp/opinio-doc"))            # doctest: +SKIP
    >>> indexer.index_entity(entity).sentences_embedded                 # doctest: +SKIP
    14
    >>> [name for name, _ in indexer.stages]                            # doctest: +SKIP
    ['segment', 'tokenize', 'encode', 'sentiment']
"""

from __future__ import annotations

import hashlib
import itertools
import queue
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from opinio_agents.embeddings import EmbeddingModelInfo, Encoder, describe_encoder, get_encoder, text_key
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.indexing.plan import plan_reviews, review_hash
from opinio_agents.indexing.stages import (
    AppendixDTokenizer,
    Bm25Tokenizer,
    RuleSegmenter,
    Segmenter,
    SentimentStage,
    default_sentiment,
)
from opinio_agents.io.outputs import terminal_safe
from opinio_agents.models import Entity
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.checkpoints import checkpoint
from opinio_agents.stores.sentence_store import PreparedReview, SentenceStore

__all__ = ["Indexer", "IndexStats"]

DEFAULT_EMBED_CHUNK = 1024


@dataclass
class IndexStats:
    """What one indexing run of one entity did."""

    entity_id: str
    reviews_total: int = 0
    reviews_unchanged: int = 0
    reviews_added: int = 0
    reviews_updated: int = 0
    reviews_removed: int = 0
    sentences_total: int = 0
    sentences_embedded: int = 0  # sentences that got a vector in this run (encoded or reused)
    sentences_resumed: int = 0
    texts_encoded: int = 0
    vectors_reused: int = 0
    vectors_removed: int = 0
    interrupted_before: bool = False
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether the run added, replaced, removed or embedded anything.

        Example:
            >>> IndexStats("7", reviews_total=5, reviews_unchanged=5).changed
            False
        """
        return bool(
            self.reviews_added or self.reviews_updated or self.reviews_removed
            or self.sentences_embedded or self.sentences_resumed or self.interrupted_before
        )


class Indexer:
    """Index entities into a :class:`~opinio_agents.stores.SentenceStore` through four replaceable stages.

    Args:
        store: Where sentences, tokens, vectors and sentiments are written.
        encoder: Sentence encoder (the shipped MiniLM by default).
        segmenter: Review -> sentences (the offline rule-based splitter by default).
        tokenizer: Sentence -> BM25 tokens (App. D by default).
        sentiment: Sentence (+ vector) -> score; by default the MiniLM head blended with
            VADER when the encoder is MiniLM, VADER alone otherwise.
        embed_chunk: Sentences encoded (and written to Chroma) per step.

    Example:
        >>> from opinio_agents.indexing.stages import LexiconSentiment
        >>> indexer = Indexer(SentenceStore("/tmp/opinio-doc"), sentiment=LexiconSentiment())
        >>> [name for name, _ in indexer.stages]
        ['segment', 'tokenize', 'encode', 'sentiment']
    """

    def __init__(
        self,
        store: SentenceStore,
        encoder: Encoder | None = None,
        *,
        segmenter: Segmenter | None = None,
        tokenizer: Bm25Tokenizer | None = None,
        sentiment: SentimentStage | None = None,
        embed_chunk: int = DEFAULT_EMBED_CHUNK,
    ) -> None:
        if embed_chunk < 1:
            raise ConfigError(f"embed_chunk={embed_chunk} must be >= 1")
        self.store = store
        self.encoder: Encoder = encoder if encoder is not None else get_encoder()
        self.segmenter: Segmenter = segmenter or RuleSegmenter()
        self.tokenizer: Bm25Tokenizer = tokenizer or AppendixDTokenizer()
        self._sentiment = sentiment
        self.embed_chunk = embed_chunk
        self._model: EmbeddingModelInfo | None = None
        self._lock = threading.Lock()

    # -- stages -------------------------------------------------------------------------
    @property
    def stages(self) -> tuple[tuple[str, Any], ...]:
        """``(name, stage)`` in the order they run."""
        return (
            ("segment", self.segmenter),
            ("tokenize", self.tokenizer),
            ("encode", self.encoder),
            ("sentiment", self.sentiment),
        )

    @property
    def embedding_model(self) -> EmbeddingModelInfo:
        """The encoder's identity (probed once)."""
        with self._lock:
            if self._model is None:
                self._model = describe_encoder(self.encoder)
            return self._model

    @property
    def sentiment(self) -> SentimentStage:
        """The sentiment stage (resolved from the encoder when none was given)."""
        if self._sentiment is None:
            self._sentiment = default_sentiment(self.embedding_model)
        return self._sentiment

    def replace(
        self,
        *,
        encoder: Encoder | None = None,
        segmenter: Segmenter | None = None,
        tokenizer: Bm25Tokenizer | None = None,
        sentiment: SentimentStage | None = None,
    ) -> Indexer:
        """A copy with some stages replaced; the others are kept as they are.

        Example:
            >>> from opinio_agents.indexing.stages import LexiconSentiment
            >>> base = Indexer(SentenceStore("/tmp/opinio-doc"), sentiment=LexiconSentiment())
            >>> other = base.replace(sentiment=LexiconSentiment(name="vader-custom"))
            >>> other.sentiment.name, other.tokenizer is base.tokenizer
            ('vader-custom', True)
        """
        return Indexer(
            self.store,
            encoder if encoder is not None else self.encoder,
            segmenter=segmenter or self.segmenter,
            tokenizer=tokenizer or self.tokenizer,
            sentiment=sentiment or self._sentiment,
            embed_chunk=self.embed_chunk,
        )

    def check(self) -> None:
        """Check the stages against each other and against the store; writes nothing.

        Raises:
            ConfigError: When the sentiment stage cannot read the encoder's vectors.
            StoreError: When the store was built with another encoder, tokenizer or scorer.
        """
        model = self.embedding_model
        self.sentiment.check_encoder(model)
        self.store.check_models(
            model, sentiment=self.sentiment.name, bm25_tokenizer=self.tokenizer.name, writing=True
        )

    # -- indexing -----------------------------------------------------------------------
    def up_to_date(self, entity: Entity) -> bool:
        """Whether the store already holds exactly this entity, completely indexed (reads only, takes no lock).

        Example:
            >>> indexer.index_entity(entity).entity_id, indexer.up_to_date(entity)     # doctest: +SKIP
            ('7', True)
        """
        store = self.store
        key = entity.key
        if not store.is_complete(key):
            return False
        record = store.catalog.entity_record(key)
        if record is None or (record.entity_id, record.entity_name, record.n_reviews) != (
            entity.entity_id,
            entity.entity_name,
            len(entity.user_reviews),
        ):
            return False
        if record.expert_review != entity.expert_review:
            return False
        known = store.review_states(key)
        if len(known) != len(entity.user_reviews):
            return False
        for position, review in enumerate(entity.user_reviews):
            state = known.get(str(review.review_id))
            if state is None or not state.embedded or state.position != position:
                return False
            if state.content_hash != review_hash(review):
                return False
        return True

    def index_entities(
        self, entities: Iterable[Entity], *, show_progress: bool = False, mark_complete: bool = True
    ) -> list[IndexStats]:
        """Index many entities under the store's writer lock; see :meth:`index_entity`."""
        items = iter(entities)
        first = next(items, None)  # a file is validated completely here, before the lock creates the store
        if first is None:
            return []
        self.check()
        with self.store.writer_lock():
            return [
                self.index_entity(entity, show_progress=show_progress, mark_complete=mark_complete)
                for entity in itertools.chain([first], items)
            ]

    def index_entity(self, entity: Entity, *, show_progress: bool = False, mark_complete: bool = True) -> IndexStats:
        """Add or update one entity; only new or changed reviews are segmented and embedded.

        Runs under the store's writer lock (a second writer process fails with
        :class:`~opinio_agents.stores.lock.StoreLockedError`). With ``mark_complete``
        the entity's completion marker is written last; a caller that writes more
        artefacts of the entity (BM25, HIRO) passes False and marks it itself.
        """
        if self.store.is_remote:
            self.store.connect()  # an unreachable server fails before the model is even loaded
        self.check()  # refuses other models before the lock file (or anything else) is written
        with self.store.writer_lock():
            return self._index_entity(entity, show_progress=show_progress, mark_complete=mark_complete)

    def _index_entity(self, entity: Entity, *, show_progress: bool, mark_complete: bool) -> IndexStats:
        started = time.perf_counter()
        store = self.store
        store.connect()
        store.record_models(self.embedding_model, sentiment=self.sentiment.name, bm25_tokenizer=self.tokenizer.name)

        key = entity.key
        stats = IndexStats(entity_id=key, reviews_total=len(entity.user_reviews))
        was_interrupted = store.has_entity(key) and not store.is_complete(key)
        plan = plan_reviews(entity, store.review_states(key))
        hashes, positions = plan.hashes, plan.positions
        stats.reviews_removed, stats.reviews_updated = len(plan.removed), len(plan.changed)
        stats.reviews_added, stats.reviews_unchanged = len(plan.new), plan.unchanged

        # 1-2. Segment and tokenize the new and changed reviews.
        t0 = time.perf_counter()
        by_id = {str(r.review_id): r for r in entity.user_reviews}
        prepared: list[PreparedReview] = []
        for rid in plan.to_insert:
            sentences = self.segmenter.segment(entity.entity_id, by_id[rid])
            prepared.append(
                PreparedReview(
                    review=by_id[rid],
                    position=positions[rid],
                    content_hash=hashes[rid],
                    sentences=sentences,
                    tokens=[self.tokenizer.tokenize(s.text) for s in sentences],
                )
            )
        stats.timings["prepare"] = time.perf_counter() - t0

        # Record them in the catalog (one transaction); stale sentences go.
        stale_ids = store.write_reviews(
            entity,
            prepared,
            removed=[*plan.removed, *plan.changed],
            positions=positions,
            changed=plan.catalog_changed,
        )
        checkpoint("after-catalog")

        # 3-4. Encode each distinct text once, write vectors and score sentiment in the same pass.
        t0 = time.perf_counter()
        pending_reviews = plan.to_finish
        new_ids = {s.sentence_id for item in prepared for s in item.sentences}
        store.delete_vectors(key, [i for i in stale_ids if i not in new_ids])
        if was_interrupted:  # a killed run may have left vectors of sentences the catalog dropped
            stats.vectors_removed = store.reconcile_vectors(key)
        checkpoint("after-stale-vectors")
        pending = store.pending_sentences(key, pending_reviews)
        todo, resumed = store.split_embedded(key, pending, hashes)
        stats.sentences_resumed = resumed
        label = terminal_safe(entity.entity_name or key, keep_newlines=False)  # shown in the progress bar
        scores = self._encode_write_score(key, pending, todo, hashes, stats, show_progress=show_progress, label=label)
        stats.sentences_embedded = len(todo)
        stats.timings["embed"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        store.finish_reviews(key, scores, pending_reviews)
        checkpoint("after-finish")
        stats.timings["finish"] = time.perf_counter() - t0
        stats.interrupted_before = was_interrupted
        if mark_complete:
            store.mark_complete(key)
        stats.sentences_total = store.count_sentences(key)
        stats.seconds = time.perf_counter() - started
        return stats

    def text_keys(self, texts: Sequence[str]) -> list[str]:
        """The reuse key of each text: a digest of the encoder identity and :func:`~opinio_agents.embeddings.text_key`.

        Two texts with one key get one vector (they differ only in spacing, or in case
        for an uncased encoder); keys of different encoders never meet.

        Example:
            >>> from opinio_agents.indexing.stages import LexiconSentiment
            >>> class Ones:
            ...     name, dimension, lowercase = "ones", 4, True
            ...     def encode(self, texts, **_):
            ...         return np.ones((len(texts), 4), dtype=np.float32) / 2
            >>> indexer = Indexer(SentenceStore("/tmp/opinio-doc"), Ones(), sentiment=LexiconSentiment())
            >>> a, b, c = indexer.text_keys(["Great  location.", "great location.", "Great view."])
            >>> a == b != c
            True
        """
        lowercase = bool(getattr(self.encoder, "lowercase", False))
        prefix = self.embedding_model.identity.encode("utf-8") + b"\x00"
        return [
            hashlib.blake2b(prefix + text_key(text, lowercase=lowercase).encode("utf-8"), digest_size=16).hexdigest()
            for text in texts
        ]

    def _encode_write_score(
        self,
        key: str,
        pending: Sequence[StoredSentence],
        todo: Sequence[StoredSentence],
        hashes: dict[str, str],
        stats: IndexStats,
        *,
        show_progress: bool,
        label: str,
    ) -> list[tuple[str, float]]:
        """Vectors for ``todo`` and sentiment for every ``pending`` sentence; returns ``(sentence_id, score)``.

        Each distinct text (:meth:`text_keys`) is encoded once, and not at all when the
        store already holds its vector (from this entity or any other). The encoder runs
        on this thread; a writer thread takes its output through a bounded queue and, per
        chunk, stores the new text vectors, adds one Chroma record per sentence and scores
        the chunk's sentiment from those vectors, so writing overlaps with encoding and
        at most two chunks wait in memory. An encoder with ``encode_once = False`` (its
        vectors are not a function of the text alone) gets every sentence, and nothing is reused.
        """
        from tqdm.auto import tqdm

        sentiment = self.sentiment
        expected = self.embedding_model.dimension
        groups: dict[str, list[StoredSentence]] = {}
        once = bool(getattr(self.encoder, "encode_once", True))  # False: not a function of the text alone
        keys = self.text_keys([s.sentence.text for s in todo]) if once else [s.sentence.sentence_id for s in todo]
        for item, text_hash in zip(todo, keys):
            groups.setdefault(text_hash, []).append(item)
        reused = self.store.stored_text_vectors(list(groups), expected) if once else {}
        fresh = sorted((k for k in groups if k not in reused), key=lambda k: len(groups[k][0].sentence.text))
        stats.texts_encoded = len(fresh)
        stats.vectors_reused = len(todo) - len(fresh)

        scores: dict[str, float] = {}
        errors: list[BaseException] = []
        work: queue.Queue[tuple[list[str], np.ndarray, bool] | None] = queue.Queue(maxsize=2)

        def write(chunk: list[str], vectors: np.ndarray, new: bool) -> None:
            if new and once:
                self.store.save_text_vectors(chunk, vectors)
            members = [item for k in chunk for item in groups[k]]
            rows = np.repeat(np.arange(len(chunk)), [len(groups[k]) for k in chunk])
            matrix = vectors[rows]
            self.store.add_vectors(key, [m.sentence for m in members], matrix, hashes)
            scores.update(self._score(members, matrix, sentiment))

        def consume() -> None:
            while True:
                item = work.get()
                if item is None:
                    return
                if not errors:
                    try:
                        write(*item)
                    except BaseException as exc:  # handed to the encoding thread, which re-raises it
                        errors.append(exc)

        def hand_over(item: tuple[list[str], np.ndarray, bool]) -> None:
            while not errors:
                try:
                    work.put(item, timeout=0.5)
                    return
                except queue.Full:
                    if not writer.is_alive():
                        break
            raise errors[0] if errors else StoreError("the vector writer stopped unexpectedly")

        writer = threading.Thread(target=consume, name="opinio-vector-writer", daemon=True)
        writer.start()
        try:
            with tqdm(
                total=len(todo), desc=f"embedding {label}"[:60], unit="sent", disable=not show_progress
            ) as bar:
                known = list(reused)
                for chunk in _chunks(known, self.embed_chunk * 4):
                    hand_over((chunk, np.vstack([reused[k] for k in chunk]), False))
                    bar.update(sum(len(groups[k]) for k in chunk))
                for chunk in _chunks(fresh, self.embed_chunk):
                    texts = [groups[k][0].sentence.text for k in chunk]
                    vectors = np.asarray(self.encoder.encode(texts), dtype=np.float32)
                    if vectors.shape != (len(chunk), expected):
                        raise ConfigError(
                            f"encoder {self.embedding_model.name!r} returned shape {vectors.shape} for "
                            f"{len(chunk)} texts; expected ({len(chunk)}, {expected})"
                        )
                    hand_over((chunk, vectors, True))
                    bar.update(sum(len(groups[k]) for k in chunk))
        finally:
            work.put(None)  # what was handed over is still written (a resumed run relies on it)
            writer.join()
        if errors:
            raise errors[0]

        # Sentences whose vectors a killed run already stored: read them back, then score.
        rest = [p for p in pending if p.sentence.sentence_id not in scores]
        if rest:
            rest_keys = self.text_keys([p.sentence.text for p in rest])
            by_key = self.store.stored_text_vectors(rest_keys, expected) if once else {}
            missing = [p.sentence.sentence_id for p, k in zip(rest, rest_keys) if k not in by_key]
            from_chroma = self.store.vectors(key, missing) if missing else {}
            matrix = np.vstack(
                [by_key[k] if k in by_key else from_chroma[p.sentence.sentence_id] for p, k in zip(rest, rest_keys)]
            )
            scores.update(self._score(rest, matrix, sentiment))
        return [(p.sentence.sentence_id, scores[p.sentence.sentence_id]) for p in pending]

    @staticmethod
    def _score(
        members: Sequence[StoredSentence], matrix: np.ndarray, sentiment: SentimentStage
    ) -> list[tuple[str, float]]:
        """Sentiment of each sentence from its text and vector, each distinct text scored once."""
        first: dict[str, int] = {}
        for row, item in enumerate(members):
            first.setdefault(item.sentence.text, row)
        rows = list(first.values())
        values = sentiment.score([members[r].sentence.text for r in rows], matrix[rows])
        by_text = {members[r].sentence.text: float(v) for r, v in zip(rows, values)}
        return [(m.sentence.sentence_id, by_text[m.sentence.text]) for m in members]


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
