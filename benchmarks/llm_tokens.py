"""Tokens sent to the LLM: OpinioRAG (per-query evidence) vs the long-context baseline.

Runs the real LLM synthesizer chain against a local scripted chat model (no
network, no weights) so every prompt is rendered exactly as it would be for a
provider, and counts its tokens with the library's offline estimate (the fake
model reports no usage; ~4 characters per BPE token, as GPT-4o and Llama 3
average on English). The long-context
baseline is counted without calling any model: all reviews in one prompt,
before and after dropping the oldest reviews to fit a 128K-token window.

Usage:
    python benchmarks/llm_tokens.py                      # sample entities + one ~10.5K-sentence synthetic entity
    python benchmarks/llm_tokens.py --synthetic-reviews 1500 --top-k 5 10
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class EchoFirstEvidenceModel(BaseChatModel):
    """Answers every highlight prompt with one CON citing S1 (valid JSON, no network)."""

    @property
    def _llm_type(self) -> str:
        return "benchmark-scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        text = json.dumps(
            {"highlights": [{"polarity": "CONS", "text": "Benchmark key point.", "sentence_ids": ["S1"]}]}
        )
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def run(entities, store: Path, top_ks: list[int]) -> list[dict[str, Any]]:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.llm.tokens import default_token_counter
    from opinio_agents.synthesis.llm import LLMSynthesizer
    from opinio_agents.synthesis.long_context import LongContextSynthesizer

    rag = OpinioRAG(store)
    rows = []
    counter = default_token_counter()
    for entity in entities:
        rag.index(entity, show_progress=True)
        queries = entity.queries
        long_context = LongContextSynthesizer(EchoFirstEvidenceModel(), context_window_tokens=128_000)
        all_reviews = long_context.estimate_prompt_tokens(entity, queries, fit=False)
        fitted = long_context.estimate_prompt_tokens(entity, queries, fit=True)
        review_tokens = sum(counter.count(r.text) for r in entity.user_reviews)
        for k in top_ks:
            synth = LLMSynthesizer(EchoFirstEvidenceModel(), structured_output="parser", max_concurrency=1)
            started = time.perf_counter()
            result = rag.highlights(entity.key, queries, top_k=k, synthesizer=synth)
            rows.append(
                {
                    "entity": f"{entity.entity_name} ({entity.key})",
                    "reviews": len(entity.user_reviews),
                    "review_tokens": review_tokens,
                    "queries": len(queries),
                    "top_k": k,
                    "rag_prompt": result.meta.tokens.prompt_tokens,
                    "rag_calls": result.meta.tokens.calls,
                    "lc_all": all_reviews,
                    "lc_fitted": fitted,
                    "seconds": time.perf_counter() - started,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthetic-reviews", type=int, default=1500)
    parser.add_argument("--top-k", type=int, nargs="*", default=[5, 10])
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()

    from opinio_agents.datasets import generate_dataset, load_sample

    entities = [*load_sample(), *generate_dataset(1, args.synthetic_reviews, seed=args.seed).entities]
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(entities, Path(tmp), args.top_k)
    print(
        "\n| entity | reviews | review tokens | queries | top-K | OpinioRAG prompt tokens (calls) "
        "| long-context, all reviews | long-context, fitted to 128K | OpinioRAG / long-context (all) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['entity']} | {r['reviews']:,} | {r['review_tokens']:,} | {r['queries']} | {r['top_k']} "
            f"| {r['rag_prompt']:,} ({r['rag_calls']}) | {r['lc_all']:,} | {r['lc_fitted']:,} "
            f"| {100 * r['rag_prompt'] / max(r['lc_all'], 1):.1f}% |"
        )
    print(
        "\nTokens estimated offline (HeuristicTokenCounter); real provider tokenizers differ by ~10-15%.",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
