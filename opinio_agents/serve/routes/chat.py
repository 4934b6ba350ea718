"""``POST /entities/{id}/chat``: a cited answer from the reviews, streamed as server-sent events.

The answer's tokens are pulled from the model only while the client listens
(:class:`~opinio_agents.serve.streaming.EventStream`): a client that leaves stops the model
stream and any further model call.
"""

from collections.abc import Generator
from typing import Any

from fastapi import APIRouter

from opinio_agents.agents.chat import ChatAnswer, ReviewChat
from opinio_agents.serve.deps import EntityKey, State
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.schemas import EVENT_STREAM_RESPONSES, ChatRequest
from opinio_agents.serve.streaming import EventStream, sse

__all__ = ["router"]

router = APIRouter(tags=["chat"])


@router.post(
    "/entities/{entity_id:path}/chat",
    response_class=EventStream,
    responses=EVENT_STREAM_RESPONSES,
)
def chat(key: EntityKey, state: State, body: ChatRequest) -> Any:
    """Answer the last user message from the reviews, streamed as server-sent events.

    Events: ``token`` (``{"text": piece}``), one per answer sentence once ReviewChat's guard
    has checked it (cited, backed by what it cites, not a repeat), then ``done`` (the
    ``ChatAnswer``: ``citations`` map each ``[S1]`` marker to its ``sentence_id`` and text,
    ``evidence`` lists every excerpt shown, ``support`` counts the reviews, ``guard`` and
    ``checks`` say what was removed and why); an error after
    the stream started is an ``error`` event. Without an LLM the route answers ``503``
    unless ``extractive`` is true.
    """
    if body.messages[-1].role != "user":
        raise ApiError(400, "bad_request", "the last message must be the user's question", field="messages")
    if not body.messages[-1].content.strip():
        raise ApiError(400, "bad_request", "the question is empty", field="messages")
    model = None if body.extractive else state.chat_model()
    if model is None and not body.extractive:
        raise ApiError(
            503, "llm_unavailable",
            "no LLM is configured for chat: start the server with --llm SPEC (and --base-url for an "
            "OpenAI-compatible server), or send \"extractive\": true for an answer quoting the reviews",
        )
    session = ReviewChat(state.rag, key, llm=model, k=body.k, retriever=body.retriever,
                         verify=state.settings.chat_verify)
    if body.extractive:
        session.llm = None
    history = [(m.role, m.content) for m in body.messages]

    def events() -> Generator[bytes, None, None]:
        for piece in session.stream_answer({"messages": history}):
            if isinstance(piece, ChatAnswer):
                yield sse("done", piece)
            else:
                yield sse("token", {"text": piece})

    return EventStream(events())  # retrieval and the first token first: an unreachable LLM is a 503
