"""The chat with the real local model (SmolLM2-135M-Instruct): multi-turn, streamed, CLI, HTTP and MCP.

The model is loaded once per session (``local_llm``, tests/conftest.py); each test asks one or
two questions with a small token budget, so the tier stays lean. What a 135M model writes is
not asserted: the guards are. Every sentence shown as fact carries a citation that resolves to
one of the turn's excerpts (or the answer says plainly that it quotes the reviews instead),
nothing repeats, and a question the reviews do not cover is answered as such without the model.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opinio_agents.agents import ReviewChat, ReviewToolkit
from opinio_agents.agents.chat import ChatAnswer
from opinio_agents.api import OpinioRAG
from opinio_agents.datasets import load_sample

_BUDGET = 48  # tokens per answer: two or three sentences


def _subset() -> list:
    return [e.model_copy(update={"user_reviews": e.user_reviews[:30]}) for e in load_sample()]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local-chat")
    path = folder / "hotels.json"
    path.write_text(json.dumps([e.model_dump(mode="json") for e in _subset()]), encoding="utf-8")
    rag = OpinioRAG(store_dir=folder / "store")
    rag.index(path)
    rag.close()
    return path


@pytest.fixture(scope="module")
def rag(dataset: Path, local_llm: Any) -> Iterator[OpinioRAG]:
    rag = OpinioRAG(store_dir=dataset.parent / "store", llm=local_llm)
    yield rag
    rag.close()


def assert_guarded(answer: ChatAnswer) -> None:
    """Every sentence shown as fact cites a resolvable excerpt; the rest was removed or is a quote."""
    markers = {c.marker for c in answer.evidence}
    assert answer.guard is not None and answer.guard.sentences == len(answer.checks)
    if answer.fallback:
        assert "[quoting the reviews" in answer.answer and answer.citations
    for check in answer.checks:
        if check.action in ("shown", "repaired"):
            assert check.shown in answer.answer
            assert set(check.citations) <= markers
            assert check.citations or check.reason in ("connective", "states what the reviews do not cover")
            assert check.verdict != "contradicted"
        else:
            assert check.action == "dropped" and check.issue is not None
    cited = re.findall(r"\[S(\d+)\]", answer.answer)
    assert {f"S{n}" for n in cited} <= markers
    shown = [c.shown for c in answer.checks if c.shown]
    assert len(shown) == len(set(shown))  # nothing said twice
    ids = [c.sentence_id for c in answer.citations]
    assert len(ids) == len(set(ids)) and len({c.text for c in answer.evidence}) == len(answer.evidence)


def test_multi_turn_streamed_answers_are_guarded(rag: OpinioRAG, local_llm: Any) -> None:
    chat = ReviewChat(rag, "101", k=4, max_tokens=_BUDGET)
    pieces = list(chat.stream("How is the wi-fi?"))
    first = chat.last_answer
    assert first is not None and first.mode == "llm" and first.covered
    assert "".join(pieces).strip() == first.answer and first.answer
    assert_guarded(first)

    follow = chat.ask("Is it free?")
    assert follow.search_query.startswith("How is the wi-fi?")  # the follow-up keeps the topic
    assert_guarded(follow)
    sent = chat.messages(follow.question, follow.search_query, follow.support, follow.evidence, chat.history[:1])
    assert [m.type for m in sent] == ["system", "human", "ai", "human"] and sent[2].content == first.answer

    calls = local_llm.stats.get("calls", 0)
    nothing = chat.ask("Is there a casino?")
    assert not nothing.covered and "do not cover" in nothing.answer and not nothing.citations
    assert local_llm.stats.get("calls", 0) == calls  # no evidence: the model is not asked to guess
    assert [q for q, _ in chat.history] == ["How is the wi-fi?", "Is it free?", "Is there a casino?"]


def test_http_route_and_mcp_tool_answer_through_the_same_guards(rag: OpinioRAG) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("mcp")
    import anyio
    from fastapi.testclient import TestClient
    from mcp import Client

    from opinio_agents.agents import build_mcp_server
    from opinio_agents.serve import create_app

    app = create_app(rag, rate_limit=None)
    body = {"messages": [{"role": "user", "content": "How is the breakfast?"}], "k": 4}
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        r = client.post("/entities/101/chat", json=body)
    assert r.status_code == 200, r.text
    blocks = [
        dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        for block in r.text.strip().split("\n\n")
    ]
    assert blocks[-1]["event"] == "done"
    done = ChatAnswer.model_validate(json.loads(blocks[-1]["data"]))
    tokens = "".join(json.loads(b["data"])["text"] for b in blocks[:-1] if b["event"] == "token")
    assert tokens.strip() == done.answer
    assert_guarded(done)

    server = build_mcp_server(ReviewToolkit(rag))

    async def ask() -> Any:
        async with Client(server) as client:
            return await client.call_tool(
                "ask_reviews",
                {"entity": "202", "question": "And is it clean?",
                 "history": [{"role": "user", "content": "How is the pool?"},
                             {"role": "assistant", "content": "Guests like the pool."}]},
            )

    result = anyio.run(ask)
    assert not result.is_error, result.content
    answer = ChatAnswer.model_validate(result.structured_content)
    assert answer.entity_id == "202" and answer.search_query.startswith("How is the pool?")
    assert_guarded(answer)


def test_cli_chat_with_the_real_model_in_a_subprocess(dataset: Path, local_llm_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "opinio_agents", "chat", str(dataset), "--entity", "101",
         "--llm", f"hf:{local_llm_path}", "--store", str(dataset.parent / "store"), "--k", "4"],
        input="How are the beds?\nIs there a casino?\n/quit\n", capture_output=True, text=True, timeout=600, env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    assert "mode: LLM" in out and out.count("opinio> ") == 2
    first, second = out.split("opinio> ")[1:]
    assert "Sources:" in first and re.search(r"\[S\d\] 101:\d+:\d+", first)
    assert "do not cover" in second and "Sources:" not in second
