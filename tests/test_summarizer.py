"""The Summarizer seam and the façade's state (fast tier: hashing encoder, fake chat models)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fake_encoder import HashEncoder
from llm_fixtures import ScriptedChatModel, answer

from opinio_agents.api import OpinioRAG
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.models import Entity, Highlight, Polarity, QueryEvidence, RunMeta
from opinio_agents.synthesis.base import SynthesisOutcome
from opinio_agents.synthesis.summarizer import Draft, HighlightRequest, Summarizer, SummaryDone

BED_BUGS = "We found bed bugs in the bed on the second night."


def _entities() -> list[Entity]:
    from opinio_agents.datasets import generate_dataset

    data = generate_dataset(3, 25, seed=5)
    first = data.entities[0]
    reviews = [*first.user_reviews]
    reviews[0] = reviews[0].model_copy(update={"text": reviews[0].text + " " + BED_BUGS})
    no_expert = Entity(entity_id="plain", entity_name="No Expert Inn", user_reviews=data.entities[2].user_reviews)
    return [first.model_copy(update={"user_reviews": reviews}), data.entities[1], no_expert]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("summarizer") / "store"
    rag = OpinioRAG(path, encoder=HashEncoder())
    rag.index(_entities())
    rag.close()
    return path


@pytest.fixture()
def rag(store: Path) -> OpinioRAG:
    return OpinioRAG(store, encoder=HashEncoder())


def _key(rag: OpinioRAG) -> str:
    return rag.entities()[0] if rag.entities()[0] != "plain" else rag.entities()[1]


def _comparable(result) -> dict:  # type: ignore[no-untyped-def]
    data = result.model_dump(mode="json")
    data["meta"].pop("timings")
    return data


# -- one post-processing step -----------------------------------------------------------
def test_stream_ends_with_the_same_result_as_summarize(rag: OpinioRAG) -> None:
    key = _entities()[0].key
    events = list(rag.stream_highlights(key))
    *outcomes, done = events
    assert isinstance(done, SummaryDone) and all(isinstance(o, SynthesisOutcome) for o in outcomes)
    assert sorted(o.item.query for o in outcomes) == sorted(done.result.meta.queries)
    assert done.result.alerts and done.result.alerts[0].category == "bed bugs"
    assert done.result.meta.mode == "expert-queries" and done.result.meta.synthesizer == "extractive"
    assert _comparable(done.result) == _comparable(rag.highlights(key))


def _llm_rag(store: Path, model: object, **kwargs: object) -> OpinioRAG:
    kwargs.setdefault("verify", False)  # on by default for model-written text; its own tests turn it on
    return OpinioRAG(store, encoder=HashEncoder(), llm=model, llm_options={"cache_path": None}, **kwargs)  # type: ignore[arg-type]


def test_guard_runs_once_per_query_on_the_llm_path(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import opinio_agents.synthesis.alerts as alerts
    import opinio_agents.synthesis.llm as llm

    calls: list[str] = []
    real = alerts.guard_highlights

    def spy(item: QueryEvidence, highlights: list[Highlight]) -> list[Highlight]:
        calls.append(item.query)
        return real(item, highlights)

    monkeypatch.setattr(alerts, "guard_highlights", spy)
    monkeypatch.setattr(llm, "guard_highlights", spy, raising=False)
    model = ScriptedChatModel(respond=lambda _: answer(("PROS", "Guests like it.", ["S1"])))
    rag = _llm_rag(store, model)
    result = rag.highlights(_entities()[0].key, ["pool", "room", "bed"])
    assert result.meta.synthesizer == "llm" and not result.failures
    assert sorted(calls) == ["bed", "pool", "room"]  # once each, not twice
    # the guard still works: the bed-bug sentence is cited by a CON, never by a PRO
    assert not any("bed bugs" in e.text for h in result.pros for e in h.evidence)
    assert any("bed bugs" in e.text for h in result.cons for e in h.evidence)


def test_a_long_context_synthesizer_object_runs_the_long_context_baseline(store: Path) -> None:
    from opinio_agents.synthesis.long_context import LongContextSynthesizer

    reply = json.dumps({"pros": [{"query": "pool", "text": "Lovely pool."}], "cons": []})
    model = ScriptedChatModel(respond=[reply])
    rag = _llm_rag(store, model, synthesizer=LongContextSynthesizer(model))
    key = _entities()[0].key
    result = rag.highlights(key, ["pool", "wi-fi"])
    assert result.meta.synthesizer == "long-context"
    assert len(model.calls) == 1  # one prompt with all reviews, not one per query
    assert [h.text for h in result.pros] == ["Lovely pool."] and result.meta.mode == "queries"
    extractive = OpinioRAG(store, encoder=HashEncoder()).highlights(key, ["pool"])
    assert "bed bugs" in [a.category for a in result.alerts]
    assert result.alerts == extractive.alerts  # the same post-processing, from the store's sentences


class _FixedSummarizer(Summarizer):
    name = "fixed"

    def __init__(self, index, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(index, **kwargs)
        self.runs = 0

    def draft(self, request: HighlightRequest) -> Draft:
        self.runs += 1
        entity_key = request.entity_key
        asked = list(request.queries or ["beds"])
        item = QueryEvidence(query=asked[0], evidence=[])
        from opinio_agents.models import Evidence

        item.evidence = [Evidence(sentence_id=f"{entity_key}:x:0", text=BED_BUGS, sentiment=-0.5)]
        pro = Highlight(query=asked[0], polarity=Polarity.PROS, text="Comfy beds.", evidence=list(item.evidence))
        outcomes = [SynthesisOutcome(item=item, highlights=[pro])]
        return Draft(entity_key, "", asked, outcomes, RunMeta(synthesizer=self.name))


def test_any_summarizer_object_runs_exactly_as_given(store: Path) -> None:
    probe = OpinioRAG(store, encoder=HashEncoder())
    mine = _FixedSummarizer(probe.store)
    rag = OpinioRAG(store, encoder=HashEncoder(), synthesizer=mine)
    result = rag.highlights(_entities()[0].key)
    assert mine.runs == 1 and result.meta.synthesizer == "fixed"
    # the shared post-processing still ran: the softened complaint became a CON, alerts were added
    assert result.pros == [] and result.cons[0].text == "Guests report bed bugs."
    assert result.alerts
    with pytest.raises(ConfigError, match="run as it is"):
        rag.highlights(_entities()[0].key, top_k=3)
    with pytest.raises(ConfigError, match="neither a kind"):
        OpinioRAG(store, encoder=HashEncoder(), synthesizer=object())  # type: ignore[arg-type]


def test_retrievers_are_cached_across_queries_and_calls(rag: OpinioRAG, monkeypatch: pytest.MonkeyPatch) -> None:
    from opinio_agents.retrieval.factory import RetrieverFactory
    from opinio_agents.stores.derived import VectorCopies
    from opinio_agents.stores.sentence_store import SentenceStore
    from opinio_agents.stores.vectors import ChromaVectors

    built: list[str] = []
    real_bm25, real_dense = RetrieverFactory._bm25, RetrieverFactory._dense
    real_load, real_vectors = SentenceStore.load_bm25, ChromaVectors.get

    def counting(name, real):  # type: ignore[no-untyped-def]
        def wrapper(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            built.append(name)
            return real(self, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(RetrieverFactory, "_bm25", counting("bm25 retriever", real_bm25))
    monkeypatch.setattr(RetrieverFactory, "_dense", counting("dense retriever", real_dense))
    monkeypatch.setattr(SentenceStore, "load_bm25", counting("bm25 index read", real_load))
    monkeypatch.setattr(ChromaVectors, "get", counting("vectors read", real_vectors))
    real_copy = VectorCopies.load

    def copy_read(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        found = real_copy(self, *args, **kwargs)
        if found is not None:  # the query path's matrix copy of the vectors, read instead of Chroma
            built.append("vectors read")
        return found

    monkeypatch.setattr(VectorCopies, "load", copy_read)
    rag.retrievers.invalidate()
    rag.store._cache.clear()
    queries = ["pool", "room", "bed", "breakfast", "staff"]
    rag.highlights(_entities()[0].key, queries)
    # The BM25 index and the stored vectors are read once for all queries; the query path scores
    # on those cached arrays and builds no LlamaIndex retriever object at all.
    assert sorted(built) == ["bm25 index read", "vectors read"]
    rag.highlights(_entities()[0].key, queries)
    rag.highlights(_entities()[0].key, ["pool"])
    assert len(built) == 2  # the façade's factory keeps them for the next call


def test_reindexing_an_entity_refreshes_its_retrievers_and_hiro_paths(tmp_path: Path) -> None:
    entity = _entities()[1]
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    rag.index(_entities()[:2])
    before = rag.retrieve(entity.key, "jacuzzi", retriever="bm25")
    paths_before = rag.hiro.paths(entity.key).shape[0]
    extra = entity.user_reviews[0].model_copy(update={"review_id": "new-1", "text": "The jacuzzi was broken."})
    rag.index(entity.model_copy(update={"user_reviews": [*entity.user_reviews, extra]}))
    after = rag.retrieve(entity.key, "jacuzzi", retriever="bm25")
    assert not before and [h.sentence.text for h in after] == ["The jacuzzi was broken."]
    assert rag.hiro.paths(entity.key).shape[0] == paths_before + 1


# -- modes ----------------------------------------------------------------------------------
def test_no_silent_mode_switch(rag: OpinioRAG) -> None:
    with pytest.raises(ConfigError, match="query_free=True"):
        rag.highlights("plain")
    with pytest.raises(ConfigError, match="query_free=True"):
        rag.query_mode("plain")
    assert rag.query_mode("plain", query_free="auto") == "query-free"
    assert rag.query_mode("plain", ["pool"], query_free="auto") == "queries"
    assert rag.query_mode(_entities()[0].key) == "expert-queries"
    free = rag.highlights("plain", query_free=True)
    assert free.meta.mode == "query-free" and free.meta.synthesizer == "hiro-extractive" and free.highlights
    auto = rag.highlights("plain", query_free="auto")
    assert _comparable(auto) == _comparable(free)
    assert rag.highlights("plain", ["pool"], query_free="auto").meta.mode == "queries"
    key = _entities()[0].key
    assert rag.highlights(key, query_free="auto").meta.mode == "expert-queries"
    with pytest.raises(ConfigError, match="takes no queries"):
        rag.highlights("plain", ["pool"], query_free=True)
    with pytest.raises(ConfigError, match="query_free="):
        rag.highlights("plain", query_free="sometimes")  # type: ignore[arg-type]


# -- the façade's HIRO index -------------------------------------------------------------------
def test_hiro_is_fitted_by_index_and_never_by_a_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from opinio_agents.agents.toolkit import ReviewToolkit
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    fits: list[int] = []
    real_fit = ResidualKMeansIndexer.fit

    def counting_fit(self, embeddings):  # type: ignore[no-untyped-def]
        fits.append(len(embeddings))
        return real_fit(self, embeddings)

    monkeypatch.setattr(ResidualKMeansIndexer, "fit", counting_fit)
    entities = _entities()
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    rag.index(entities[:2])
    assert len(fits) == 1 and rag.hiro_fitted
    hiro = rag.hiro
    key = entities[0].key
    rag.aspects(key, top_k=4)
    rag.query_free_highlights(key)
    rag.highlights(key, query_free=True)
    assert rag.compare(key, top_k=3).items
    overview = ReviewToolkit(rag).aspect_overview(key, top_k=3)
    assert overview.source == "hiro"
    rag.index(entities[2])  # a later entity is encoded with the existing hierarchy, not refitted
    rag.aspects("plain", top_k=3)
    assert len(fits) == 1 and rag.hiro is hiro
    assert rag.fit_hiro() is False and rag.fit_hiro(refit=True) is True and len(fits) == 2


def test_unfitted_store_says_how_to_fit(tmp_path: Path) -> None:
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    rag.index(_entities()[0], fit_hiro=False)
    key = _entities()[0].key
    with pytest.raises(StoreError, match="fit_hiro"):
        rag.aspects(key)
    with pytest.raises(StoreError, match="fit_hiro"):
        rag.highlights(key, query_free=True)
    assert not rag.hiro_fitted and not (tmp_path / "store" / "hiro").exists()
    from opinio_agents.agents.toolkit import ReviewToolkit

    assert ReviewToolkit(rag).aspect_overview(key, top_k=3).source == "expert-queries"
    assert rag.fit_hiro() is True and rag.aspects(key, top_k=3)


def test_one_facade_shared_by_threads(rag: OpinioRAG) -> None:
    key = _entities()[0].key
    expected = {
        "highlights": _comparable(rag.highlights(key)),
        "free": _comparable(rag.highlights("plain", query_free=True)),
        "aspects": [a.aspect for a in rag.aspects(key, top_k=5)],
    }
    fresh = OpinioRAG(rag.store.store_dir, encoder=HashEncoder())  # cold caches, shared by the threads
    got: list[dict] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        try:
            barrier.wait()
            got.append(
                {
                    "aspects": [a.aspect for a in fresh.aspects(key, top_k=5)],
                    "highlights": _comparable(fresh.highlights(key)),
                    "free": _comparable(fresh.highlights("plain", query_free=True)),
                }
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(got) == 4 and all(g == expected for g in got)
