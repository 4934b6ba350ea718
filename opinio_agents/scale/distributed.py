"""Distributed indexing on Ray: entities partitioned across workers, vectors in a Chroma server.

The work is split the way Ray Data batch inference is meant to be used: the
entities to (re)index form a dataset, one block per entity, and
``Dataset.map_batches`` runs :class:`EntityWorker`, a callable class, in a pool
of actors. Each actor loads the encoder once and, for every entity it is handed,
runs the ordinary :class:`~opinio_agents.indexing.Indexer` (segment, tokenize,
encode, sentiment) into a scratch catalog while writing the vectors straight to
the shared Chroma server. It hands back the entity's sentences, BM25 tokens and
sentiments. The driver merges those into the one catalog, in dataset order, builds
and persists each entity's BM25 index, fits HIRO when the store has none and writes
each entity's completion marker last: the store is the one a single-machine
``opinio index`` builds (same sentence ids, tokens, sentiments, BM25 scores and
vectors), only its vectors live in the server.

Resuming and re-indexing behave as on one machine: entities already indexed
unchanged are not sent to Ray at all, and a worker never re-encodes a sentence
whose vector the server already holds for the same review content (a killed run
is completed by the next one without encoding twice).

Example:
    >>> from opinio_agents.scale import index_with_ray
    >>> stats = index_with_ray(                                        # doctest: +SKIP
    ...     "corpus.json", ".opinio", address="auto", chroma_host="10.0.0.5", chroma_port=8000, workers=8
    ... )
    >>> stats.sentences_encoded, sorted(set(stats.worker_of.values()))[:2]   # doctest: +SKIP
    (52311, ['3f1c...', '9a0e...'])
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.embeddings import EmbeddingModelInfo, Encoder, describe_encoder, get_encoder
from opinio_agents.errors import ConfigError, MissingDependencyError, StoreError
from opinio_agents.indexing import Indexer, IndexStats
from opinio_agents.indexing.plan import plan_reviews
from opinio_agents.models import Entity, Sentence
from opinio_agents.stores import SentenceStore
from opinio_agents.stores.sentence_store import PreparedReview

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG

__all__ = ["EntityWorker", "DistributedStats", "index_with_ray", "require_ray", "merge_entity", "same_top_k"]

EncoderFactory = Callable[[], Encoder]
_COLUMNS = ("key", "payload", "encoded", "resumed", "model", "worker")


def require_ray() -> Any:
    """Import Ray (with Ray Data), or raise :class:`MissingDependencyError` with the install line.

    Example:
        >>> ray = require_ray()            # doctest: +SKIP
    """
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is part of the extra
    except ImportError as exc:
        raise MissingDependencyError("ray", extra="scale", purpose="distributed indexing (opinio index --ray)") from exc
    return ray


@dataclass
class DistributedStats:
    """What one distributed indexing run did.

    Attributes:
        entities_total: Entities in the input.
        entities_skipped: Entities already indexed unchanged (never sent to Ray).
        entities_indexed: Entities encoded by the workers and merged.
        sentences_total: Sentences of the merged entities.
        sentences_encoded: Sentences the workers encoded (the rest were already in the server).
        sentences_reused: Sentences whose stored vector was reused.
        workers: Actors in the pool.
        worker_of: ``entity key -> worker id`` (which actor indexed which entity).
        seconds: Wall time of the whole run.
        timings: ``ray`` (start or connect), ``workers`` (until the last entity came back,
            merging included), ``merge``, ``bm25``, ``hiro`` seconds.
        stats: One :class:`~opinio_agents.indexing.IndexStats` per merged entity.

    Example:
        >>> DistributedStats(entities_total=3, entities_skipped=3).entities_indexed
        0
    """

    entities_total: int = 0
    entities_skipped: int = 0
    entities_indexed: int = 0
    sentences_total: int = 0
    sentences_encoded: int = 0
    sentences_reused: int = 0
    workers: int = 0
    worker_of: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    stats: list[IndexStats] = field(default_factory=list)


class EntityWorker:
    """The callable class of the actor pool: holds one encoder, indexes the entities of each batch.

    Each entity is indexed by a plain :class:`~opinio_agents.indexing.Indexer` into a
    scratch catalog (removed afterwards) whose vectors go to the Chroma server, so the
    encoder's batching, the encode-once reuse of stored vectors and the sentiment pass are
    exactly those of a single-machine build.

    Args:
        chroma_host: Host of the Chroma server every worker writes to.
        chroma_port: Its port.
        encoder_factory: Builds the encoder in the actor (default: :func:`get_encoder`, the shipped model);
            must be picklable (a module-level function or a ``functools.partial`` of one).
        embed_chunk: Sentences encoded per step (the indexer's ``embed_chunk``).

    Example:
        >>> worker = EntityWorker("127.0.0.1", 8000)                          # doctest: +SKIP
        >>> out = worker({"entity": np.array([entity.model_dump_json()])})    # doctest: +SKIP
        >>> sorted(out)                                                       # doctest: +SKIP
        ['encoded', 'key', 'model', 'payload', 'resumed', 'worker']
    """

    def __init__(
        self,
        chroma_host: str,
        chroma_port: int | None = None,
        encoder_factory: EncoderFactory | None = None,
        embed_chunk: int | None = None,
    ) -> None:
        self.chroma_host = chroma_host
        self.chroma_port = chroma_port
        self.encoder: Encoder = (encoder_factory or get_encoder)()
        self.embed_chunk = embed_chunk
        self.worker_id = f"{os.uname().nodename}:{os.getpid()}"
        self._stages: Indexer | None = None

    def _indexer(self, store: SentenceStore) -> Indexer:
        if self._stages is None:  # resolve the stages (model identity, sentiment) once per actor
            kwargs: dict[str, Any] = {} if self.embed_chunk is None else {"embed_chunk": self.embed_chunk}
            self._stages = Indexer(store, self.encoder, **kwargs)
        base = self._stages
        return Indexer(
            store,
            base.encoder,
            segmenter=base.segmenter,
            tokenizer=base.tokenizer,
            sentiment=base.sentiment,
            embed_chunk=base.embed_chunk,
        )

    def index(self, entity: Entity) -> dict[str, Any]:
        """Index one entity (vectors to the server) and return its catalog rows as a JSON-ready dict."""
        directory = Path(tempfile.mkdtemp(prefix="opinio-ray-entity-"))  # removed below, whatever happens
        try:
            store = SentenceStore(directory, chroma_host=self.chroma_host, chroma_port=self.chroma_port)
            indexer = self._indexer(store)
            stats = indexer.index_entity(entity)
            key = entity.key
            stored = store.sentences(key)
            model = indexer.embedding_model
            payload = {
                "sentences": [
                    [s.sentence.model_dump(mode="json"), list(s.tokens), float(s.sentiment)] for s in stored
                ],
                "stages": {"sentiment": indexer.sentiment.name, "tokenizer": indexer.tokenizer.name},
            }
            store.close()
            return {
                "key": key,
                "payload": json.dumps(payload),
                "encoded": int(stats.sentences_embedded),
                "resumed": int(stats.sentences_resumed),
                "model": json.dumps(asdict(model)),
                "worker": self.worker_id,
            }
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        """Ray Data entry point: a batch with an ``entity`` column of entity JSON documents."""
        rows = [self.index(Entity.model_validate_json(str(doc))) for doc in batch["entity"]]
        return {name: [row[name] for row in rows] for name in _COLUMNS}


def _entities(data: str | Path | Entity | Iterable[Entity]) -> Iterator[Entity]:
    if isinstance(data, Entity):
        yield data
    elif isinstance(data, (str, Path)):
        from opinio_agents.io.loaders import iter_valid_entities

        yield from iter_valid_entities(data)
    else:
        yield from data


_Rows = tuple[list[Sentence], list[list[str]], list[float]]


def _prepared(entity: Entity, payload: dict[str, Any]) -> dict[str, _Rows]:
    """``review_id -> (sentences, tokens, sentiments)`` from a worker's payload, checked against the entity."""
    grouped: dict[str, _Rows] = {
        str(r.review_id): ([], [], []) for r in entity.user_reviews
    }
    for raw, tokens, sentiment in payload["sentences"]:
        sentence = Sentence.model_validate(raw)
        if sentence.review_id not in grouped or sentence.entity_id != entity.key:
            raise StoreError(
                f"a Ray worker returned sentence {sentence.sentence_id!r}, which is not in entity {entity.key!r}; "
                "the workers run another version of opinio_agents than the driver: install the same one everywhere"
            )
        sentences, token_lists, scores = grouped[sentence.review_id]
        sentences.append(sentence)
        token_lists.append([str(t) for t in tokens])
        scores.append(float(sentiment))
    return grouped


def merge_entity(rag: OpinioRAG, entity: Entity, payload: dict[str, Any], stats: IndexStats) -> None:
    """Write one entity's catalog rows from a worker's payload, as the indexer would have (vectors are already stored).

    Mirrors :class:`~opinio_agents.indexing.Indexer`: unchanged reviews stay, changed and
    new ones are replaced, removed ones go, stale vectors are deleted. Does not write the
    completion marker.
    """
    store = rag.store
    key = entity.key
    grouped = _prepared(entity, payload)
    was_interrupted = store.has_entity(key) and not store.is_complete(key)
    plan = plan_reviews(entity, store.review_states(key))
    stats.reviews_removed, stats.reviews_updated = len(plan.removed), len(plan.changed)
    stats.reviews_added, stats.reviews_unchanged = len(plan.new), plan.unchanged
    by_id = {str(r.review_id): r for r in entity.user_reviews}
    prepared = [
        PreparedReview(
            review=by_id[rid],
            position=plan.positions[rid],
            content_hash=plan.hashes[rid],
            sentences=grouped[rid][0],
            tokens=grouped[rid][1],
        )
        for rid in plan.to_insert
    ]
    stale = store.write_reviews(
        entity,
        prepared,
        removed=[*plan.removed, *plan.changed],
        positions=plan.positions,
        changed=plan.catalog_changed,
    )
    new_ids = {s.sentence_id for item in prepared for s in item.sentences}
    store.delete_vectors(key, [i for i in stale if i not in new_ids])
    if was_interrupted:
        stats.vectors_removed = store.reconcile_vectors(key)
    finished = plan.to_finish
    scores = [
        (sentence.sentence_id, score)
        for rid in finished
        for sentence, score in zip(grouped[rid][0], grouped[rid][2])
    ]
    store.finish_reviews(key, scores, finished)


def index_with_ray(
    data: str | Path | Entity | Iterable[Entity],
    store_dir: str | Path,
    *,
    chroma_host: str,
    chroma_port: int | None = None,
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: float = 1.0,
    encoder_factory: EncoderFactory | None = None,
    embed_chunk: int | None = None,
    fit_hiro: bool = True,
    show_progress: bool = False,
    on_entity: Callable[[IndexStats], None] | None = None,
) -> DistributedStats:
    """Index ``data`` into ``store_dir`` with the encoding done by a pool of Ray actors.

    Args:
        data: A dataset file, an entity, or entities (read on the driver and validated first).
        store_dir: The store directory on the driver (catalog, BM25, HIRO); its vectors live in the server.
        chroma_host: Host of the Chroma server (``chroma run --host 0.0.0.0 --path DIR``), reachable
            from the driver and from every Ray node.
        chroma_port: Its port (default 8000).
        address: Ray cluster to join (``auto``, ``HOST:PORT``, ``ray://HOST:10001``); ``None``
            uses the Ray session of this process, or starts a local one.
        workers: Actors in the pool (default: the cluster's CPUs / ``cpus_per_worker``, at most one per entity).
        cpus_per_worker: CPUs each actor reserves (its encoder's threads).
        encoder_factory: Builds the encoder, on the driver (to check the store) and in each actor;
            default :func:`~opinio_agents.embeddings.get_encoder` (the shipped model, present on every node).
        embed_chunk: Sentences per encoding step in the workers.
        fit_hiro: Fit the HIRO hierarchy when the store has none (and enough sentences), and encode paths.
        show_progress: Show Ray Data's progress bars.
        on_entity: Called on the driver after each entity is merged.

    Raises:
        MissingDependencyError: Ray is not installed (``pip install 'opinio-agents[scale]'``).
        ConfigError: For a bad worker count.
        StoreError: The Chroma server is unreachable, or the store was built with other models.
    """
    from opinio_agents.api import OpinioRAG

    ray = require_ray()
    if workers is not None and workers < 1:
        raise ConfigError(f"workers={workers} must be >= 1")
    if cpus_per_worker <= 0:
        raise ConfigError(f"cpus_per_worker={cpus_per_worker} must be > 0")
    started = time.perf_counter()
    factory = encoder_factory or get_encoder
    items = iter(_entities(data))
    first = next(items, None)  # a file is validated completely before anything is written
    result = DistributedStats()
    if first is None:
        return result
    entities = list(itertools.chain([first], items))
    result.entities_total = len(entities)

    rag = OpinioRAG(store_dir, chroma_host=chroma_host, chroma_port=chroma_port, encoder=factory())
    store = rag.store
    store.connect()  # an unreachable server fails here, before Ray starts
    rag.indexer.check()  # refuses a store built with other models before anything is written
    expected = rag.indexer.embedding_model
    with store.writer_lock():
        todo = [e for e in entities if not rag.indexer.up_to_date(e)]
        result.entities_skipped = len(entities) - len(todo)
        if todo:
            _run_workers(
                ray, rag, todo, result, expected,
                address=address, workers=workers, cpus_per_worker=cpus_per_worker, factory=factory,
                chroma=(chroma_host, chroma_port), embed_chunk=embed_chunk, show_progress=show_progress,
                on_entity=on_entity,
            )
        t0 = time.perf_counter()
        if fit_hiro and result.stats:
            _prepare_hiro(rag, [s.entity_id for s in result.stats])
        result.timings["hiro"] = time.perf_counter() - t0
        for item in result.stats:  # last: the entity now counts as indexed
            store.mark_complete(item.entity_id)
    result.sentences_total = sum(s.sentences_total for s in result.stats)
    result.seconds = time.perf_counter() - started
    rag.close()
    return result


def _run_workers(
    ray: Any,
    rag: OpinioRAG,
    todo: list[Entity],
    result: DistributedStats,
    expected: EmbeddingModelInfo,
    *,
    address: str | None,
    workers: int | None,
    cpus_per_worker: float,
    factory: EncoderFactory,
    chroma: tuple[str, int | None],
    embed_chunk: int | None,
    show_progress: bool,
    on_entity: Callable[[IndexStats], None] | None,
) -> None:
    t0 = time.perf_counter()
    started_here = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=show_progress, logging_level="warning")
        started_here = True
    result.timings["ray"] = time.perf_counter() - t0
    try:
        if workers is None:
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            workers = max(1, int(cpus // cpus_per_worker))
        workers = min(workers, len(todo))
        result.workers = workers
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # merged in dataset order, as a single machine writes
        context.enable_progress_bars = show_progress
        by_key = {e.key: e for e in todo}
        dataset = ray.data.from_items(
            [{"entity": e.model_dump_json()} for e in todo], override_num_blocks=len(todo)
        ).map_batches(
            EntityWorker,
            fn_constructor_kwargs={
                "chroma_host": chroma[0],
                "chroma_port": chroma[1],
                "encoder_factory": factory,
                "embed_chunk": embed_chunk,
            },
            batch_size=1,
            concurrency=workers,
            num_cpus=cpus_per_worker,
            batch_format="numpy",
        )
        t0 = time.perf_counter()
        merge_seconds = bm25_seconds = 0.0
        for row in dataset.iter_rows():
            key = str(row["key"])
            entity = by_key[key]
            model = EmbeddingModelInfo(**json.loads(str(row["model"])))
            conflict = expected.conflict(model)
            if conflict is not None:
                raise StoreError(
                    f"Ray worker {row['worker']} encoded entity {key!r} with {model.describe()}, not "
                    f"{expected.describe()} ({conflict}); install the same model on every node"
                )
            payload = json.loads(str(row["payload"]))
            stages = payload["stages"]
            if (stages["sentiment"], stages["tokenizer"]) != (rag.indexer.sentiment.name, rag.indexer.tokenizer.name):
                raise StoreError(
                    f"Ray worker {row['worker']} used sentiment {stages['sentiment']!r} and tokenizer "
                    f"{stages['tokenizer']!r}; the driver uses {rag.indexer.sentiment.name!r} and "
                    f"{rag.indexer.tokenizer.name!r}: install the same opinio_agents version everywhere"
                )
            stats = IndexStats(entity_id=key, reviews_total=len(entity.user_reviews))
            stats.sentences_embedded = int(row["encoded"])
            stats.sentences_resumed = int(row["resumed"])
            m0 = time.perf_counter()
            rag.store.record_models(expected, sentiment=stages["sentiment"], bm25_tokenizer=stages["tokenizer"])
            merge_entity(rag, entity, payload, stats)
            m1 = time.perf_counter()
            rag.retrievers.prepare(key)  # BM25 built from the merged catalog and persisted
            rag.retrievers.invalidate(key)  # keep the driver's memory flat in the number of entities
            m2 = time.perf_counter()
            merge_seconds += m1 - m0
            bm25_seconds += m2 - m1
            stats.sentences_total = rag.store.count_sentences(key)
            stats.timings.update(merge=m1 - m0, bm25=m2 - m1)
            result.stats.append(stats)
            result.worker_of[key] = str(row["worker"])
            result.entities_indexed += 1
            result.sentences_encoded += stats.sentences_embedded
            result.sentences_reused += stats.sentences_resumed
            if on_entity is not None:
                on_entity(stats)
        result.timings.update(workers=time.perf_counter() - t0, merge=merge_seconds, bm25=bm25_seconds)
    finally:
        if started_here:
            ray.shutdown()


def _prepare_hiro(rag: OpinioRAG, keys: list[str]) -> None:
    """Fit HIRO when the store has none and enough sentences (as ``OpinioRAG.index`` does); encode the paths."""
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    n_codes = int(rag.hiro_options.get("n_codes", ResidualKMeansIndexer.n_codes))
    if not rag.hiro_fitted:
        if rag.store.count_sentences() < n_codes:
            return
        rag.fit_hiro()
    for key in keys:
        rag.hiro.paths(key)


def encoder_from_path(model_path: str | Path | None) -> EncoderFactory:
    """A picklable encoder factory for the workers: the model at ``model_path`` (default: the shipped one).

    Example:
        >>> encoder_from_path(None)().name        # doctest: +SKIP
        'all-MiniLM-L6-v2'
    """
    return functools.partial(get_encoder, model_path) if model_path is not None else get_encoder


def describe(factory: EncoderFactory) -> EmbeddingModelInfo:
    """The identity of the encoder ``factory`` builds (builds it here)."""
    return describe_encoder(factory())


def same_top_k(a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]], *, k: int, tol: float = 1e-5) -> bool:
    """Whether two ranked ``(id, score)`` lists agree up to the order of tied scores.

    Approximate nearest-neighbour search (Chroma's HNSW) returns equal-score hits, such as
    duplicate sentences, in an order that depends on how its graph was built (and a Chroma
    server sends scores as JSON, not float32); so the lists must have the same scores rank
    by rank (within ``tol``) and the same ids within each run of tied scores, except in the
    last run of a full list, which the cut at ``k`` may split anywhere.

    Example:
        >>> same_top_k([("a", .9), ("b", .5), ("c", .5)], [("a", .9), ("c", .5), ("b", .5)], k=3)
        True
        >>> same_top_k([("a", .9), ("b", .5)], [("b", .9), ("a", .5)], k=3)
        False
    """
    if len(a) != len(b):
        return False
    if any(abs(float(x) - float(y)) > tol for (_, x), (_, y) in zip(a, b)):
        return False
    runs: list[list[int]] = []
    for rank, (_, score) in enumerate(a):
        if runs and abs(float(a[runs[-1][0]][1]) - float(score)) <= tol:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    for number, run in enumerate(runs):
        if number == len(runs) - 1 and len(a) >= k:
            break  # the cut may split the last run of ties anywhere
        if {a[r][0] for r in run} != {b[r][0] for r in run}:
            return False
    return True
