"""Prompt tokens per entity sent to the LLM: one call per query, one call per entity, and the long-context baseline.

Runs the real LLM synthesizer chains (per query: ``HighlightChain``; per entity:
``EntityHighlightChain``) through the façade's retrieval pipeline against a local
scripted chat model (no network, no weights), so every prompt is rendered exactly as
it would be for a provider. The scripted model records each prompt and answers with
valid JSON citing the first evidence label of each query. The long-context baseline
is rendered without calling any model: all reviews in one prompt, before and after
dropping the oldest reviews to fit a 128K-token window.

Tokens are counted over the messages (content plus 4 tokens of framing per message)
with tiktoken's ``cl100k_base`` BPE (GPT-4 / GPT-3.5) when it can be loaded offline
(LlamaIndex ships its file), else with the library's heuristic counter; the table says
which one was used. The share of the static prefix (system message, task, exemplars)
is also reported: that is the part a provider-side prompt cache serves after the first
call.

Usage:
    python benchmarks/llm_tokens.py                      # sample entities + one ~10.5K-sentence entity
    python benchmarks/llm_tokens.py --synthetic-reviews 1500 --top-k 5 10 --work-dir /tmp/opinio-query-latency
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedModel(BaseChatModel):
    """Answers every highlight prompt (per query or per entity) with one CON citing the first label."""

    prompts: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "benchmark-scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.prompts.append(list(messages))
        user = str(messages[-1].content)
        point = {"polarity": "CONS", "text": "Benchmark key point.", "sentence_ids": ["S1"]}
        if "<queries>" in user:
            block = user.split("<queries>\n")[1].split("\n</queries>")[0]
            asked = [json.loads(line) for line in block.splitlines()]
            text = json.dumps({"results": [
                {"query_id": q["id"], "highlights": [{**point, "sentence_ids": q["evidence"][:1]}]} for q in asked
            ]})
        else:
            text = json.dumps({"highlights": [point]})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


class TiktokenCounter:
    """``cl100k_base`` token counts (the BPE of GPT-4 / GPT-3.5), loaded offline."""

    name = "tiktoken cl100k_base"

    def __init__(self) -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding("cl100k_base")

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=())) if text else 0


def token_counter() -> Any:
    """tiktoken ``cl100k_base`` when its file is available offline, else the library's heuristic counter."""
    try:
        import llama_index.core

        cache = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache"
        if cache.is_dir():
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
        return TiktokenCounter()
    except Exception:  # noqa: BLE001 - tiktoken missing, or its file cannot be loaded offline
        from opinio_agents.llm.tokens import HeuristicTokenCounter

        counter = HeuristicTokenCounter()
        counter.name = "heuristic (~4 characters per token)"  # type: ignore[attr-defined]
        return counter


def count(messages: list[BaseMessage], counter: Any) -> int:
    from opinio_agents.llm.tokens import count_message_tokens

    return count_message_tokens(messages, counter)


def run(entities: list[Any], store: Path, top_ks: list[int], counter: Any) -> list[dict[str, Any]]:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.synthesis.llm import LLMSynthesizer
    from opinio_agents.synthesis.long_context import LongContextSynthesizer

    rag = OpinioRAG(store)
    rows = []
    for entity in entities:
        rag.index(entity, show_progress=True)
        queries = entity.queries
        long_context = LongContextSynthesizer(ScriptedModel(), context_window_tokens=128_000, counter=counter)
        all_reviews = long_context.estimate_prompt_tokens(entity, queries, fit=False)
        fitted = long_context.estimate_prompt_tokens(entity, queries, fit=True)
        review_tokens = sum(counter.count(r.text) for r in entity.user_reviews)
        for k in top_ks:
            row: dict[str, Any] = {
                "entity": f"{entity.entity_name} ({entity.key})",
                "reviews": len(entity.user_reviews),
                "review_tokens": review_tokens,
                "queries": len(queries),
                "top_k": k,
                "lc_all": all_reviews,
                "lc_fitted": fitted,
            }
            for mode in ("per-query", "per-entity"):
                model = ScriptedModel(prompts=[])
                try:
                    synth = LLMSynthesizer(model, structured_output="parser", max_concurrency=1, llm_calls=mode)
                except TypeError:  # a version without llm_calls (to measure an older checkout): per query only
                    if mode != "per-query":
                        row[mode] = {"prompt_tokens": 0, "calls": 0, "static_tokens": 0, "highlights": 0, "failures": 0}
                        continue
                    synth = LLMSynthesizer(model, structured_output="parser", max_concurrency=1)
                result = rag.highlights(entity.key, queries, top_k=k, synthesizer=synth)
                tokens = [count(p, counter) for p in model.prompts]
                static = [count(p[:-1], counter) for p in model.prompts]  # every turn but the last is static
                row[mode] = {
                    "prompt_tokens": sum(tokens),
                    "calls": len(model.prompts),
                    "static_tokens": sum(static),
                    "highlights": len(result.pros) + len(result.cons),
                    "failures": len(result.failures),
                }
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthetic-reviews", type=int, default=1500)
    parser.add_argument("--top-k", type=int, nargs="*", default=[5, 10])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--work-dir", type=Path, default=None,
        help="reuse the stores of benchmarks/query_latency.py (store-REVIEWS-SEED) instead of indexing anew",
    )
    args = parser.parse_args()

    from opinio_agents.datasets import generate_dataset, load_sample

    counter = token_counter()
    synthetic = generate_dataset(1, args.synthetic_reviews, seed=args.seed).entities
    groups: list[tuple[list[Any], Path | None]] = [(load_sample(), None)]
    reuse = args.work_dir / f"store-{args.synthetic_reviews}-{args.seed}" if args.work_dir else None
    groups.append((synthetic, reuse if reuse is not None and reuse.is_dir() else None))
    rows: list[dict[str, Any]] = []
    for entities, store in groups:
        if store is not None:
            rows += run(entities, store, args.top_k, counter)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                rows += run(entities, Path(tmp), args.top_k, counter)
    print(
        "\n| entity | reviews | queries | top-K | long-context prompt (all reviews) "
        "| per query: prompt tokens (calls) | % of LC | per entity: prompt tokens (calls) | % of LC "
        "| static prefix share, per query / per entity |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        q, e = r["per-query"], r["per-entity"]
        print(
            f"| {r['entity']} | {r['reviews']:,} | {r['queries']} | {r['top_k']} | {r['lc_all']:,} "
            f"| {q['prompt_tokens']:,} ({q['calls']}) | {100 * q['prompt_tokens'] / max(r['lc_all'], 1):.2f}% "
            f"| {e['prompt_tokens']:,} ({e['calls']}) | {100 * e['prompt_tokens'] / max(r['lc_all'], 1):.2f}% "
            f"| {100 * q['static_tokens'] / max(q['prompt_tokens'], 1):.0f}% / "
            f"{100 * e['static_tokens'] / max(e['prompt_tokens'], 1):.0f}% |"
        )
    failures = sum(r[m]["failures"] for r in rows for m in ("per-query", "per-entity"))
    print(f"\nTokens counted with {counter.name}; failures in the scripted runs: {failures}.", file=sys.stderr)


if __name__ == "__main__":
    main()
