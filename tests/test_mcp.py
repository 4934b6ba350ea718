"""`opinio mcp`: the review tools served over stdio, exercised with the mcp SDK's own client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from opinio_agents.api import OpinioRAG  # noqa: E402
from opinio_agents.datasets import load_sample  # noqa: E402

# Runs the real `opinio mcp` command (cli.agents.register on a Typer app) in a subprocess.
_LAUNCH = "import typer; from opinio_agents.cli.agents import register; app = typer.Typer(); register(app); app()"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "store"
    rag = OpinioRAG(store_dir=path)
    rag.index([e.model_copy(update={"user_reviews": e.user_reviews[:30]}) for e in load_sample()])
    rag.close()
    return path


async def _session_run(store: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-c", _LAUNCH, "mcp", "--store", str(store)], cwd=str(store.parent)
    )
    out: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = (await session.list_tools()).tools
        out["entities"] = await session.call_tool("list_entities", {})
        out["search"] = await session.call_tool(
            "search_reviews", {"entity": "101", "query": "breakfast", "k": 3, "filters": {"min_rating": 4}}
        )
        out["compare"] = await session.call_tool("compare_entities", {"entities": ["101", "202"], "query": "pool"})
        out["overview"] = await session.call_tool("aspect_overview", {"entity": "202", "top_k": 3})
        out["unknown"] = await session.call_tool("search_reviews", {"entity": "999", "query": "wi-fi"})
        out["invalid"] = await session.call_tool("search_reviews", {"entity": "101", "query": "wi-fi", "k": 0})
    return out


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.mark.slow
def test_mcp_in_process_client(store: Path) -> None:
    from mcp import Client

    from opinio_agents.agents import ReviewToolkit, build_mcp_server

    rag = OpinioRAG(store_dir=store)
    server = build_mcp_server(ReviewToolkit(rag))

    async def run() -> dict[str, Any]:
        async with Client(server) as client:
            return {
                "tools": (await client.list_tools()).tools,
                "search": await client.call_tool("search_reviews", {"entity": 202, "query": "pool", "k": 2}),
                "bad": await client.call_tool("compare_entities", {"entities": ["101"], "query": "pool"}),
            }

    try:
        out = anyio.run(run)
    finally:
        rag.close()
    assert len(out["tools"]) == 6
    search = _structured(out["search"])
    assert search["entity_id"] == "202" and len(search["hits"]) == 2
    assert out["bad"].is_error


@pytest.mark.slow
def test_mcp_round_trip(store: Path) -> None:
    """The real `opinio mcp` subprocess over stdio with the SDK's stdio_client + ClientSession."""
    out = anyio.run(_session_run, store)
    tools = {t.name: t for t in out["tools"]}
    assert set(tools) == {"list_entities", "search_reviews", "review_highlights", "aspect_overview",
                          "compare_entities", "ask_reviews"}
    search_schema = tools["search_reviews"].input_schema
    assert search_schema["required"] == ["entity", "query"]
    assert "filters" in search_schema["properties"] and tools["search_reviews"].description

    entities = _structured(out["entities"])["entities"]
    assert {e["entity_id"] for e in entities} == {"101", "202"}

    search = _structured(out["search"])
    assert search["covered"] is True and len(search["hits"]) == 3
    assert all(h["rating"] >= 4 and h["sentence_id"].startswith("101:") for h in search["hits"])

    compare = _structured(out["compare"])
    assert [side["entity_id"] for side in compare["entities"]] == ["101", "202"]

    overview = _structured(out["overview"])
    assert len(overview["aspects"]) == 3

    assert out["unknown"].is_error and "unknown entity '999'" in out["unknown"].content[0].text
    assert out["invalid"].is_error
