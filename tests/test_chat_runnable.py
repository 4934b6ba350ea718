"""ReviewChat as a LangChain Runnable and a LangGraph graph (fast tier: hashing encoder, fake models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_encoder import HashEncoder
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import Runnable, RunnableLambda

from opinio_agents.agents.chat import ReviewChat
from opinio_agents.api import OpinioRAG
from opinio_agents.errors import ConfigError


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> OpinioRAG:
    from opinio_agents.datasets import generate_dataset

    rag = OpinioRAG(Path(tmp_path_factory.mktemp("chat")) / "store", encoder=HashEncoder())
    rag.index(generate_dataset(1, 25, seed=5).entities, fit_hiro=False)
    return rag


def _model(*replies: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.events.append(f"chain:{kwargs.get('name')}")

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append("model")


def test_review_chat_is_a_runnable_that_composes(rag: OpinioRAG) -> None:
    key = rag.entities()[0]
    chat = ReviewChat(rag, key, llm=_model("Guests love the pool [S1]."), verify=False)  # fast tier: no triplet model
    assert isinstance(chat, Runnable)
    recorder = Recorder()
    chain = RunnableLambda(lambda q: {"question": q}) | chat | StrOutputParser()
    assert chain.invoke("How is the pool?", config={"callbacks": [recorder]}) == "Guests love the pool [S1]."
    assert "chain:ReviewChat" in recorder.events and "model" in recorder.events  # traced, model call nested
    assert chat.history == []  # a dict input is stateless


def test_string_input_keeps_the_objects_own_conversation(rag: OpinioRAG) -> None:
    key = rag.entities()[0]
    chat = ReviewChat(rag, key, llm=_model("The room is large [S1].", "Yes, quiet [S2]."), verify=False)
    assert "".join(chat.stream("How is the room?")) == "The room is large [S1]."
    assert chat.last_answer is not None and chat.last_answer.search_query == "How is the room?"
    assert chat.invoke("Is it quiet?") == "Yes, quiet [S2]."
    assert chat.last_answer.search_query == "How is the room? Is it quiet?"  # follow-up reuses the topic
    assert [q for q, _ in chat.history] == ["How is the room?", "Is it quiet?"]


def test_messages_input_takes_history_from_the_input(rag: OpinioRAG) -> None:
    key = rag.entities()[0]
    chat = ReviewChat(rag, key)  # extractive
    answer = chat.answer({"messages": [("user", "How is the pool?"), ("ai", "Fine."), ("user", "Is it heated?")]})
    assert answer.mode == "extractive" and answer.search_query == "How is the pool? Is it heated?"
    assert chat.history == [] and chat.last_answer is None
    with pytest.raises(ConfigError, match="end with the user's question"):
        chat.invoke({"messages": [("user", "pool?"), ("ai", "ok")]})
    with pytest.raises(ConfigError, match="'question'"):
        chat.invoke({"q": "pool?"})
    with pytest.raises(ConfigError, match="empty"):
        chat.invoke("  ")


def test_langgraph_graph_keeps_memory_per_thread(rag: OpinioRAG) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    key = rag.entities()[0]
    # the synthetic hotel has rooms but no pool: a question about a pool is not covered (no model call)
    chat = ReviewChat(rag, key, llm=_model("The room is large [S1].", "Yes, quiet [S1].", "No idea."), verify=False)
    graph = chat.as_graph(checkpointer=InMemorySaver())
    first = {"configurable": {"thread_id": "a"}}
    out = graph.invoke({"messages": [("user", "How is the room?")]}, first)
    reply = out["messages"][-1]
    assert reply.content == "The room is large [S1]."
    assert reply.response_metadata["chat_answer"]["citations"][0]["marker"] == "S1"
    tokens = [chunk.content for chunk, _ in graph.stream({"messages": [("user", "Is it quiet?")]}, first,
                                                          stream_mode="messages")]
    assert tokens == ["Yes, quiet [S1]."]  # the graph streams the checked answer, never the raw model tokens
    state = graph.get_state(first).values["messages"]
    assert [m.type for m in state] == ["human", "ai", "human", "ai"]
    assert state[-1].response_metadata["chat_answer"]["search_query"] == "How is the room? Is it quiet?"
    other = graph.invoke({"messages": [("user", "Is it quiet?")]}, {"configurable": {"thread_id": "b"}})
    assert other["messages"][-1].response_metadata["chat_answer"]["search_query"] == "Is it quiet?"
    assert chat.history == []
