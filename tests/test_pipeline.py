"""End-to-end pipeline and façade: planted opinions recovered, evidence resolves, alerts surface."""

from __future__ import annotations

import pytest

from opinio_agents.api import OpinioRAG
from opinio_agents.errors import ConfigError
from opinio_agents.models import HighlightSet
from opinio_agents.pipeline import HighlightPipeline
from opinio_agents.retrieval import RetrieverFactory
from opinio_agents.synthesis.summarizer import SummaryDone


def _resolve_all(store, result: HighlightSet) -> None:
    known = {s.sentence.sentence_id: s.sentence.text for s in store.sentences(str(result.entity_id))}
    for highlight in result.highlights:
        assert highlight.evidence, f"{highlight.query} has no evidence"
        for item in highlight.evidence:
            assert known[item.sentence_id] == item.text


@pytest.mark.slow
def test_planted_opinions_land_on_their_side(synthetic_store, synthetic_dataset, encoder) -> None:
    _, index = synthetic_store
    pipeline = HighlightPipeline(RetrieverFactory(index, encoder), top_k=10)
    recovered = total = 0
    for entity in synthetic_dataset.entities:
        result = pipeline.run(entity.key)  # queries = the planted aspects (expert review)
        _resolve_all(index, result)
        truth = synthetic_dataset.truth[entity.key]
        pros = {h.query for h in result.pros}
        cons = {h.query for h in result.cons}
        for aspect in truth["pros"]:
            total += 1
            recovered += aspect in pros
        for aspect in truth["cons"]:
            total += 1
            recovered += aspect in cons
        for highlight in result.highlights:
            assert highlight.support.reviews > 0
    assert recovered == total, f"recovered {recovered} of {total} planted opinions"


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_other_retrievers_run(synthetic_store, synthetic_dataset, retriever, encoder) -> None:
    _, index = synthetic_store
    entity = synthetic_dataset.entities[0]
    result = HighlightPipeline(RetrieverFactory(index, encoder), retriever=retriever, top_k=5).run(entity.key)
    assert result.meta.retriever == retriever and result.meta.top_k == 5
    assert result.highlights
    assert all(len(h.evidence) <= 5 for h in result.highlights)
    _resolve_all(index, result)


@pytest.mark.slow
def test_stream_yields_every_query(synthetic_store, synthetic_dataset, encoder) -> None:
    _, index = synthetic_store
    entity = synthetic_dataset.entities[1]
    pipeline = HighlightPipeline(RetrieverFactory(index, encoder))
    *outcomes, done = pipeline.stream(entity.key, ["pool", "parking", "wi-fi"])
    assert sorted(o.item.query for o in outcomes) == ["parking", "pool", "wi-fi"]
    assert isinstance(done, SummaryDone) and done.result.meta.queries == ["pool", "parking", "wi-fi"]


@pytest.mark.slow
def test_facade_on_tiny_entity(tmp_path, encoder, tiny_entity) -> None:
    rag = OpinioRAG(tmp_path / "store")
    rag.index(tiny_entity)
    result = rag.highlights(7)
    assert result.meta.queries == ["pool", "wi-fi"]
    assert [h.query for h in result.pros] == ["pool"]
    assert [h.query for h in result.cons] == ["wi-fi"]
    assert result.to_opiniobank()["cons"]["wi-fi"] == result.cons[0].text
    assert rag.support(7, "wi-fi").negative >= 3
    hits = rag.retrieve(7, "pool", top_k=2, retriever="bm25")
    assert len(hits) == 2 and all("pool" in h.sentence.text.lower() for h in hits)


@pytest.mark.slow
def test_critical_complaints_become_alerts_and_cons(tmp_path, encoder) -> None:
    from opinio_agents.models import Entity

    entity = Entity.model_validate(
        {
            "entity_id": "h1",
            "entity_name": "Sea Breeze",
            "user_reviews": [
                {"review_id": 1, "text": "Lovely room with a great view. We found bed bugs on the second night."},
                {"review_id": 2, "text": "Great room, very spacious and clean."},
                {"review_id": 3, "text": "Beautiful room, amazing view, comfortable bed."},
                {"review_id": 4, "text": "Our room was wonderful and quiet."},
            ],
        }
    )
    rag = OpinioRAG(tmp_path / "store")
    rag.index(entity)
    result = rag.highlights("h1", ["room"])
    assert any(a.category == "bed bugs" and a.support == 1 for a in result.alerts)
    cited_pros = {e.text for h in result.pros for e in h.evidence}
    assert not any("bed bugs" in t for t in cited_pros)
    assert any("bed bugs" in e.text for h in result.cons for e in h.evidence)


@pytest.mark.slow
def test_no_queries_and_no_expert_review(tmp_path, encoder, tiny_entity) -> None:
    tiny_entity.expert_review = None
    rag = OpinioRAG(tmp_path / "store")
    rag.index(tiny_entity)
    with pytest.raises(ConfigError, match="no expert-review queries"):
        rag.highlights(7)


def test_facade_argument_errors(tmp_path) -> None:
    with pytest.raises(ConfigError, match="top_k=0"):
        OpinioRAG(tmp_path, top_k=0)
    with pytest.raises(ConfigError, match="needs an LLM"):
        OpinioRAG(tmp_path, synthesizer="llm")
    with pytest.raises(ConfigError, match="synthesizer='magic'"):
        OpinioRAG(tmp_path, synthesizer="magic")  # type: ignore[arg-type]


@pytest.mark.slow
def test_long_context_baseline_through_the_facade(tmp_path, encoder, tiny_entity) -> None:
    """The long-context synthesizer: all reviews in one request, 512 max tokens, same output schema."""
    pytest.importorskip("langchain_openai")
    import json

    from tests.loopback_server import LoopbackServer, ok

    reply = json.dumps(
        {"pros": [{"query": "pool", "text": "Clean, uncrowded pool."}],
         "cons": [{"query": "wi-fi", "text": "Slow, paid wi-fi."}]}
    )
    OpinioRAG(tmp_path / "store").index(tiny_entity)
    with LoopbackServer([ok(reply, prompt_tokens=900, completion_tokens=40)]) as server:
        rag = OpinioRAG(tmp_path / "store", llm="openai:loopback-model", base_url=server.base_url,
                        synthesizer="long-context")
        result = rag.highlights(7)
        assert server.request_count == 1
        body = server.requests[0]["body"]
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 512
    prompt = json.dumps(body["messages"])
    assert all(review.text.split(".")[0] in prompt for review in tiny_entity.user_reviews)
    assert result.meta.synthesizer != "extractive"
    assert [h.text for h in result.pros] == ["Clean, uncrowded pool."]
    assert [h.text for h in result.cons] == ["Slow, paid wi-fi."]
    assert result.meta.tokens.prompt_tokens == 900
