"""Review tools (toolkit, LangChain, LlamaIndex), filters, the retriever adapter and the agent loop."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from opinio_agents.agents import (
    OpinioReviewRetriever,
    ReviewFilters,
    ReviewToolkit,
    create_review_agent,
    make_langchain_tools,
    make_llamaindex_tools,
)
from opinio_agents.api import OpinioRAG
from opinio_agents.datasets import load_sample
from opinio_agents.errors import StoreError

TOOL_NAMES = ["list_entities", "search_reviews", "review_highlights", "aspect_overview", "compare_entities",
              "ask_reviews"]


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> OpinioRAG:
    entities = [e.model_copy(update={"user_reviews": e.user_reviews[:40]}) for e in load_sample()]
    rag = OpinioRAG(store_dir=tmp_path_factory.mktemp("agent-tools") / "store")
    rag.index(entities)
    yield rag
    rag.close()


@pytest.fixture(scope="module")
def toolkit(rag: OpinioRAG) -> ReviewToolkit:
    return ReviewToolkit(rag)


# -- filters ---------------------------------------------------------------------------
def test_filters_translate_to_numeric_metadata_filters() -> None:
    f = ReviewFilters(min_rating=2, max_rating=4, since=dt.date(2018, 1, 1), until=dt.date(2018, 12, 31),
                      min_helpful_votes=1, min_reviews_posted=3, min_cities_visited=2)
    got = [(x.key, x.operator.value, x.value) for x in f.to_metadata_filters().filters]
    assert got == [
        ("rating", ">=", 2.0), ("rating", "<=", 4.0),
        ("publication_ordinal", ">=", 20180101), ("publication_ordinal", "<=", 20181231),
        ("helpful_votes", ">=", 1), ("user_reviews_posted", ">=", 3), ("user_cities_visited", ">=", 2),
    ]
    assert ReviewFilters().to_metadata_filters() is None


@pytest.mark.parametrize("bad", [{"min_rating": 5, "max_rating": 2}, {"since": "2020-01-01", "until": "2019-01-01"},
                                 {"min_rating": -1}, {"colour": "red"}])
def test_filters_reject_bad_values(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ReviewFilters.model_validate(bad)


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
@pytest.mark.parametrize(
    "flt",
    [ReviewFilters(max_rating=2), ReviewFilters(min_rating=5), ReviewFilters(since=dt.date(2018, 6, 1)),
     ReviewFilters(until=dt.date(2017, 12, 31), min_helpful_votes=1)],
    ids=["low-rating", "top-rating", "since", "until+votes"],
)
@pytest.mark.slow
def test_filtered_retrieval_only_returns_matching_sentences(rag: OpinioRAG, kind: str, flt: ReviewFilters) -> None:
    unfiltered = rag.retrieve("101", "wi-fi room", top_k=30, retriever=kind)
    assert any(not flt.matches(h.sentence) for h in unfiltered), "the filter must exclude something here"
    hits = rag.retrieve("101", "wi-fi room", top_k=30, retriever=kind, filters=flt.to_metadata_filters())
    assert hits
    assert all(flt.matches(h.sentence) for h in hits)


# -- toolkit and LangChain tools ------------------------------------------------------------------
@pytest.mark.slow
def test_langchain_tool_schemas_are_described(toolkit: ReviewToolkit) -> None:
    tools = make_langchain_tools(toolkit)
    assert [t.name for t in tools] == TOOL_NAMES
    for tool in tools:
        assert len(tool.description) > 60
        schema = tool.tool_call_schema.model_json_schema()
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    search = {t.name: t for t in tools}["search_reviews"].args
    assert set(search) == {"entity", "query", "k", "filters"}


@pytest.mark.slow
def test_search_reviews_tool_returns_cited_hits(toolkit: ReviewToolkit) -> None:
    tool = {t.name: t for t in make_langchain_tools(toolkit)}["search_reviews"]
    out = json.loads(tool.invoke({"entity": 101, "query": "breakfast", "k": 4, "filters": {"min_rating": 4}}))
    assert out["entity_id"] == "101" and out["covered"] is True
    assert 1 <= len(out["hits"]) <= 4
    assert all(h["sentence_id"].startswith("101:") and h["rating"] >= 4 for h in out["hits"])
    assert any("breakfast" in h["text"].lower() for h in out["hits"])
    assert out["support"]["reviews"] > 0 and out["filters"] == "rating >= 4"
    assert "untrusted" in out["note"]


@pytest.mark.slow
def test_tool_errors_go_back_to_the_agent(toolkit: ReviewToolkit) -> None:
    tool = {t.name: t for t in make_langchain_tools(toolkit)}["search_reviews"]
    msg = tool.invoke({"entity": "999", "query": "wi-fi"})
    assert "unknown entity '999'" in msg and "101" in msg
    bad = tool.invoke({"entity": "101", "query": "wi-fi", "k": 0})
    assert "k" in bad and "greater than or equal to 1" in bad


@pytest.mark.slow
def test_ask_reviews_tool_answers_through_review_chat(toolkit: ReviewToolkit) -> None:
    tool = {t.name: t for t in make_langchain_tools(toolkit)}["ask_reviews"]
    answer = json.loads(tool.invoke({"entity": "202", "question": "Is it clean?",
                                     "history": [{"role": "user", "content": "How is the pool?"},
                                                 {"role": "assistant", "content": "Guests like it."}]}))
    assert answer["entity_id"] == "202" and answer["search_query"].startswith("How is the pool?")
    assert answer["mode"] == "extractive" and answer["citations"]  # no LLM on this façade
    ids = [c["sentence_id"] for c in answer["citations"]]
    assert len(ids) == len(set(ids)) and all(i.startswith("202:") for i in ids)
    nothing = toolkit.ask_reviews("101", "Is there a casino?")
    assert not nothing.covered and "do not cover" in nothing.answer
    bad = tool.invoke({"entity": "101", "question": "x", "history": [{"role": "robot", "content": "hi"}]})
    assert "history" in bad


@pytest.mark.slow
def test_uncovered_query_is_flagged(toolkit: ReviewToolkit) -> None:
    result = toolkit.search_reviews("202", "casino", k=3)
    assert result.covered is False and result.support.reviews == 0


@pytest.mark.slow
def test_entities_resolve_by_id_or_name(toolkit: ReviewToolkit) -> None:
    listed = toolkit.list_entities().entities
    assert {e.entity_id for e in listed} == {"101", "202"}
    assert all(e.reviews == 40 for e in listed)
    name = next(e.name for e in listed if e.entity_id == "202")
    assert toolkit.resolve_entity(name.upper()) == "202"
    with pytest.raises(StoreError):
        toolkit.resolve_entity("no such hotel")


@pytest.mark.slow
def test_aspect_overview_falls_back_to_expert_queries(toolkit: ReviewToolkit, rag: OpinioRAG) -> None:
    overview = toolkit.aspect_overview("101", top_k=4)
    expert = rag.store.entity("101").queries
    assert overview.source in ("hiro", "expert-queries")
    assert len(overview.aspects) == min(4, len(expert)) or overview.source == "hiro"
    counts = [a.support.reviews for a in overview.aspects]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    if overview.source == "expert-queries":
        assert {a.aspect for a in overview.aspects} <= set(expert)


@pytest.mark.slow
def test_compare_entities(toolkit: ReviewToolkit) -> None:
    cmp = toolkit.compare_entities(["101", "202"], "wi-fi", k=2)
    assert [side.entity_id for side in cmp.entities] == ["101", "202"]
    for side in cmp.entities:
        assert len(side.hits) == 2 and all(h.sentence_id.startswith(side.entity_id + ":") for h in side.hits)
    with pytest.raises(Exception, match="at least two"):
        toolkit.compare_entities(["101", "101"], "wi-fi")


@pytest.mark.slow
def test_review_highlights_tool(toolkit: ReviewToolkit) -> None:
    out = toolkit.review_highlights("101", ["breakfast", "wi-fi"])
    items = out.pros + out.cons
    assert {h.query for h in items} <= {"breakfast", "wi-fi"} and items
    assert all(h.sentence_ids and all(s.startswith("101:") for s in h.sentence_ids) for h in items)
    assert out.synthesizer == "extractive"


@pytest.mark.slow
def test_llamaindex_function_tools(toolkit: ReviewToolkit) -> None:
    tools = make_llamaindex_tools(toolkit)
    assert [t.metadata.name for t in tools] == TOOL_NAMES
    search = tools[1]
    params = search.metadata.get_parameters_dict()
    assert {"entity", "query", "k", "filters"} <= set(params["properties"])
    out = search.call(entity="202", query="pool", k=3)
    assert out.raw_output.entity_id == "202" and len(out.raw_output.hits) == 3
    err = search.call(entity="nope", query="pool")
    assert "unknown entity" in err.raw_output["error"]


# -- LangChain retriever adapter ------------------------------------------------------------------
@pytest.mark.slow
def test_retriever_adapter_returns_documents_with_filters(rag: OpinioRAG) -> None:
    retriever = OpinioReviewRetriever(rag=rag, entity_id="101", k=5, kind="hybrid")
    docs = retriever.invoke("breakfast")
    assert len(docs) == 5 and all(isinstance(d, Document) for d in docs)
    assert all(d.id and d.id == d.metadata["sentence_id"] for d in docs)
    assert len(retriever.invoke("breakfast", k=2)) == 2
    low = retriever.invoke("breakfast", filters={"max_rating": 3})
    assert low and all(d.metadata["rating"] <= 3 for d in low)
    fixed = OpinioReviewRetriever(rag=rag, entity_id="101", k=8, kind="bm25", filters=ReviewFilters(min_rating=5))
    assert all(d.metadata["rating"] == 5 for d in fixed.invoke("room"))


@pytest.mark.slow
def test_retriever_drops_into_a_chain(rag: OpinioRAG) -> None:
    from langchain_core.runnables import RunnableLambda

    retriever = OpinioReviewRetriever(rag=rag, entity_id="202", k=3)
    chain = retriever | RunnableLambda(lambda docs: " | ".join(d.page_content for d in docs))
    assert chain.invoke("pool").count(" | ") == 2


# -- agent loop with a scripted fake chat model -------------------------------------------------
class ScriptedToolModel(GenericFakeChatModel):
    """Replays scripted messages and records what it was sent; tool binding is a no-op."""

    seen: list[list[Any]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedToolModel:  # noqa: ARG002
        return self

    def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@pytest.mark.slow
def test_agent_loop_calls_the_tools(toolkit: ReviewToolkit) -> None:
    top = toolkit.search_reviews("101", "wi-fi", k=3).hits[0].sentence_id
    script = [
        AIMessage(content="", tool_calls=[{"name": "search_reviews", "id": "call-1",
                                           "args": {"entity": "101", "query": "wi-fi", "k": 3}}]),
        AIMessage(content="", tool_calls=[{"name": "aspect_overview", "id": "call-2", "args": {"entity": "101"}}]),
        AIMessage(content=f"Guests find the wi-fi unreliable [{top}]."),
    ]
    model = ScriptedToolModel(messages=iter(script), seen=[])
    agent = create_review_agent(model, toolkit, entity_id="101")
    out = agent.invoke({"messages": [("user", "How is the wi-fi?")]})
    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_msgs] == ["search_reviews", "aspect_overview"]
    payload = json.loads(tool_msgs[0].content)
    assert payload["hits"][0]["sentence_id"] == top and len(payload["hits"]) == 3
    assert "aspects" in json.loads(tool_msgs[1].content)
    assert out["messages"][-1].content.endswith(f"[{top}].")
    # The model saw the system prompt (untrusted-data rule) and, on its last turn, both tool results.
    assert len(model.seen) == 3
    assert "untrusted" in model.seen[0][0].content and "'101'" in model.seen[0][0].content
    assert sum(isinstance(m, ToolMessage) for m in model.seen[-1]) == 2
