"""Every surface's count and side split for the same aspects of one entity (issue 25's table).

Run, in an empty directory (the CLI's outputs are read back from files):
    opinio sample sample.json
    opinio highlight sample.json --entity 101 -q wi-fi -q "breakfast buffet" -q parking -q room --format json > hl.json
    opinio aspects sample.json --entity 101 --format json > aspects.json
    python benchmarks/one_truth.py .opinio

It prints, per aspect, "reviews (positive+/negative-/neutral n) of total [side]" from the CLI JSON
(the table prints the same support line), ``opinio aspects``, ``rag.support``, ``rag.highlights``,
the chat's support line (with its first three cited sentences), the MCP toolkit, the page's chips
(``GET /entities/101/aspects``; an aspect not listed is typed in the page's box, and its chip
shows the support of ``GET /entities/101/highlights``) and panel
(``GET /entities/101/highlights/stream``), ``/search`` and the report.
``tests/test_one_truth.py`` asserts the same equalities on every run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ASPECTS = ["wi-fi", "breakfast buffet", "parking", "room"]
QUESTIONS = {
    "wi-fi": "How is the wifi?",
    "breakfast buffet": "How is the breakfast buffet?",
    "parking": "Is parking easy?",
    "room": "How are the rooms?",
}
#: The aspect list names "breakfast", not "breakfast buffet": shown on that row, with its name.
LISTED = {"breakfast": "breakfast buffet"}


def _split(d: dict[str, Any]) -> str:
    neutral = d.get("neutral", "?")
    return f"{d['reviews']} ({d['positive']}+/{d['negative']}-/{neutral}n) of {d.get('total_reviews', '?')}"


def main(store: str = ".opinio") -> None:
    from fastapi.testclient import TestClient

    from opinio_agents.agents.chat import ReviewChat
    from opinio_agents.agents.toolkit import ReviewToolkit
    from opinio_agents.api import OpinioRAG
    from opinio_agents.report.html import build_report
    from opinio_agents.serve.app import create_app

    rows: dict[str, dict[str, str]] = {a: {} for a in ASPECTS}

    def put(surface: str, aspect: str, value: str) -> None:
        row = rows.setdefault(LISTED.get(aspect, aspect), {})
        row[surface] = f"{row[surface]} ; {value}" if surface in row else value

    rag = OpinioRAG(store)
    cli = json.loads(Path("hl.json").read_text())
    for side in ("pros", "cons"):
        for h in cli[side]:
            put("CLI table/json", h["query"], f"{_split(h['support'])} [{side}]")
    for a in json.loads(Path("aspects.json").read_text()):
        if a["aspect"] in ASPECTS or a["aspect"] in LISTED:
            put("opinio aspects", a["aspect"], f"{a['mentions']} ({a['positive']}+/{a['negative']}-) [{a['aspect']}]")
    for q in ASPECTS:
        put("API rag.support", q, _split(rag.support("101", q).model_dump()))
    for h in rag.highlights("101", ASPECTS).highlights:
        put("API rag.highlights", h.query, f"{_split(h.support.model_dump())} [{h.polarity.value}]")
    for q, question in QUESTIONS.items():
        chat = ReviewChat(rag, "101")
        chat.invoke(question)
        answer = chat.last_answer
        assert answer is not None
        cites = " / ".join(c.text[:50] for c in answer.citations[:3])
        put("chat support line", q, f"{answer.support.summary} | cites {cites} (query {answer.search_query!r})")
    toolkit = ReviewToolkit(rag)
    for item in toolkit.aspect_overview("101", top_k=10).aspects:
        if item.aspect in ASPECTS or item.aspect in LISTED:
            put("MCP aspect_overview", item.aspect, f"{_split(item.support.model_dump())} [{item.aspect}]")
    for q in ASPECTS:
        put("MCP search_reviews", q, _split(toolkit.search_reviews("101", q).support.model_dump()))
    client = TestClient(create_app(rag), base_url="http://127.0.0.1")
    for a in client.get("/entities/101/aspects?top_k=12").json()["aspects"]:
        if a["aspect"] in ASPECTS or a["aspect"] in LISTED:
            put("page chip", a["aspect"], f"{a['mentions']} ({a['positive']}+/{a['negative']}-) [{a['aspect']}]")
    typed = client.get("/entities/101/highlights", params=[("query", q) for q in ASPECTS]).json()
    for h in typed["pros"] + typed["cons"]:  # an aspect typed in the page's box: its chip shows this support
        put("page chip (typed)", h["query"], f"{_split(h['support'])} [{h['polarity']}]")
    for q in ASPECTS:
        body = client.get("/entities/101/highlights/stream", params={"query": q}).text
        for line in body.splitlines():
            if line.startswith("data:") and '"failure"' in line:
                for h in json.loads(line[5:])["highlights"]:
                    put("page panel", q, f"{_split(h['support'])} [{h['polarity']}]")
        put("HTTP /search", q, _split(client.get("/entities/101/search", params={"q": q}).json()["support"]))
    for h in build_report(rag, "101", ASPECTS, verify=False).result.highlights:
        put("report", h.query, f"{_split(h.support.model_dump())} [{h.polarity.value}]")
    for aspect, row in rows.items():
        print(f"\n### {aspect}")
        for surface, value in row.items():
            print(f"- {surface}: {value}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
