"""Verification benchmark: how often highlights are contradicted by their own evidence, and what checking costs.

Run:
    python benchmarks/verification.py                         # the sample + SPACE dev, both paths
    python benchmarks/verification.py --sets sample           # only the shipped sample
    python benchmarks/verification.py --entities 5            # the first 5 entities of each set
    python benchmarks/verification.py --store /tmp/vb         # keep the indexes between runs
    nice -n 10 python benchmarks/verification.py --sets sample,space_dev --entities 4 --paths extractive
    python benchmarks/verification.py --sets sample --paths extractive --modes cold --index-time 512
    nice -n 10 python benchmarks/verification.py --sets sample --paths extractive --repeat 3

For every entity of each set (the shipped sample: entities 101 and 202 with their
expert queries; SPACE dev, ``../shared/data/real-reviews/space_dev.json`` or
``$OPINIO_REAL_REVIEWS``: 19 hotels, the 6 annotated hotel aspects as queries) it runs
``OpinioRAG.highlights(..., verify=True)`` on two paths:

* **extractive** - the default synthesizer;
* **llm-fake** - the LLM synthesizer with :class:`WrongSideChatModel`, a LangChain chat
  model (no weights exist here) that writes each query's highlights from the evidence
  it is shown (text of a cited sentence, side by VADER) and plants errors on a fixed
  share of the queries (deterministic by query): a flipped side (``--flip``, default
  1 query in 4: both of its highlights change side) or an aspect the evidence never
  mentions (``--off-aspect``, 1 in 6: the first highlight's text is replaced).

It prints, per set and path: highlights, supported / weak / contradicted (the first
verdict; every contradicted one is rewritten or dropped), rewritten / dropped, for the
fake the planted errors caught and the false alarms on the clean ones, and the cost:
verification seconds over synthesis seconds of the *same runs*
(``meta.timings["verification"]`` / ``meta.timings["synthesis"]``: the time the run waits
for verification), with the triplet model and the phrase encoder (the retrieval encoder's
session, which OF similarity uses) loaded once beforehand (their load times are printed apart),
in the modes of ``--modes``: ``off`` (no verification: the baseline of the added time),
``before`` (a fresh in-memory triplet cache per entity: a one-off run without the store cache),
``seq`` (the store-side caches, empty at the start, each query verified in turn: the code
before the background extraction), ``cold`` (the same with
:meth:`~opinio_agents.synthesis.verification.HighlightVerifier.prefetch`: a query's triplets
are extracted in a background thread while the next query is synthesized) and ``warm`` (new
verifiers over the caches ``cold`` filled: a later process). Since background extraction
competes with synthesis for the cores, part of its cost shows as slower synthesis, so each
verifying mode also gets the **added** time: its synthesis plus verification seconds minus the
``off`` run's synthesis seconds (same round), over the latter, and the added CPU seconds of the
whole run. ``--repeat N`` runs the modes N times in
turn (alternating) and the last table gives the medians. It also prints the ratio to the
whole run, the load average, and whether each mode gives the same highlights and verdicts as
the first verifying mode.

The triplet runtime is the extractor's default (``onnx``); ``OPINIO_TRIPLET_RUNTIME=torch`` measures
the torch one (the load line names it).

Needs nothing but the package; SPACE is skipped when absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import real_reviews_dir  # noqa: E402  # this folder's module (the script runs from here)
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

#: Text of the planted off-aspect highlights (aspects a hotel's evidence for another query rarely names).
OFF_ASPECT = {
    "PROS": "The rooftop infinity pool and the spa were the best part of the stay.",
    "CONS": "The casino was smoky and the slot machines were broken.",
}


def _bucket(query: str, modulo: int) -> bool:
    if modulo <= 0:
        return False
    return int(hashlib.sha1(query.encode()).hexdigest(), 16) % modulo == 0


class WrongSideChatModel(BaseChatModel):
    """A fake chat model that writes plausible highlights from the evidence, with planted errors.

    It reads the evidence block of the highlight prompt (``{"id": "S1", "text": ...}``
    lines), sides each sentence by VADER, and answers one PROS (the positive sentences) and
    one CONS (the negative ones) when both exist, else the majority side. On queries
    chosen by a hash of the query: ``flip`` swaps the sides (a PRO citing negative
    sentences), ``off_aspect`` replaces the first highlight's text with one about an
    aspect the evidence does not discuss. ``planted`` records what was planted, by query.
    """

    flip: int = 4
    off_aspect: int = 6
    planted: dict[str, str] = {}

    @property
    def _llm_type(self) -> str:
        return "wrong-side-fake"

    def _answer(self, messages: list[BaseMessage]) -> str:
        from opinio_agents.text.sentiment import default_sentiment_scorer

        prompt = str(messages[-1].content)
        query_match = re.search(r"^Query: (.*)$", prompt, re.M)
        query = json.loads(query_match.group(1)) if query_match and query_match.group(1).startswith('"') else (
            query_match.group(1) if query_match else ""
        )
        block = prompt.rsplit("<evidence>", 1)[-1].split("</evidence>", 1)[0]
        items = []
        for line in block.strip().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "id" in row and "text" in row:
                items.append((str(row["id"]), str(row["text"])))
        if not items:
            return json.dumps({"highlights": []})
        scores = default_sentiment_scorer().score([t for _, t in items])
        pos = [(i, t) for (i, t), s in zip(items, scores, strict=True) if s > 0.05]
        neg = [(i, t) for (i, t), s in zip(items, scores, strict=True) if s < -0.05]
        sides = [("PROS", pos), ("CONS", neg)] if pos and neg else [("PROS", pos)] if len(pos) >= len(neg) else [
            ("CONS", neg)
        ]
        out = []
        for side, chosen in sides:
            if not chosen:
                continue
            out.append({"polarity": side, "text": chosen[0][1][:200], "sentence_ids": [i for i, _ in chosen[:3]]})
        key = str(query)
        if out and _bucket(key, self.flip):
            for h in out:
                h["polarity"] = "CONS" if h["polarity"] == "PROS" else "PROS"
            self.planted[key] = "flip"
        elif out and _bucket(key + "#aspect", self.off_aspect):
            out[0]["text"] = OFF_ASPECT[out[0]["polarity"]]
            self.planted[key] = "off-aspect"
        return json.dumps({"highlights": out})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self._answer(messages)))])


def _load_sets(names: Sequence[str], limit: int | None) -> dict[str, list[Any]]:
    from opinio_agents.datasets import load_sample
    from opinio_agents.io.loaders import iter_entities

    sets: dict[str, list[Any]] = {}
    for name in names:
        if name == "sample":
            sets["sample"] = list(load_sample())
        elif name == "space_dev":
            folder = real_reviews_dir()
            path = folder / "space_dev.json" if folder else None
            if path is None or not path.is_file():
                print("space_dev: no ../shared/data/real-reviews/space_dev.json (set OPINIO_REAL_REVIEWS); skipped")
                continue
            sets["space_dev"] = list(iter_entities(path))
        else:
            raise SystemExit(f"unknown set {name!r}: use sample, space_dev")
        if limit:
            sets[name] = sets[name][:limit]
    return sets


def _counts(results: Sequence[Any], planted: dict[str, str] | None) -> dict[str, Any]:
    verdicts: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    false_alarms = clean = 0
    for entity_key, result in results:
        for h in [*result.highlights, *result.meta.dropped]:
            v = h.verification
            if v is None:
                continue
            actions[v.action] += 1
            verdicts["contradicted" if v.action != "kept" else v.verdict] += 1
            if planted is not None:
                kind = planted.get(f"{entity_key}\x00{h.query}")
                marked = any(t in h.text or any(t in n for n in h.notes) for t in OFF_ASPECT.values())
                if kind == "off-aspect" and not marked:
                    kind = None  # only the one highlight whose text was replaced is planted
                guard = any(n.startswith("critical-complaint guard: added") for n in h.notes)
                if kind is not None and not guard:
                    (caught if v.action != "kept" else missed)[kind] += 1
                elif not guard:
                    clean += 1
                    false_alarms += v.action != "kept"
    synthesis = sum(r.meta.timings.get("synthesis", 0.0) for _, r in results)
    verification = sum(r.meta.timings.get("verification", 0.0) for _, r in results)
    total = sum(r.meta.timings.get("total", 0.0) for _, r in results)
    return {
        "entities": len(results),
        "highlights": sum(actions.values()),
        "supported": verdicts["supported"],
        "weak": verdicts["weak"],
        "contradicted": verdicts["contradicted"],
        "rewritten": actions["rewritten"],
        "dropped": actions["dropped"],
        "planted_caught": dict(caught),
        "planted_missed": dict(missed),
        "clean_highlights": clean,
        "false_alarms": false_alarms,
        "synthesis_s": round(synthesis, 3),
        "verification_s": round(verification, 3),
        "total_s": round(total, 3),
        "cost_vs_synthesis": round(verification / synthesis, 3) if synthesis else None,
        "cost_vs_total": round(verification / total, 3) if total else None,
    }


MODES = ("off", "before", "seq", "cold", "warm")


def _verifier(mode: str, extractor: Any, rag: Any, caches: Path) -> Any:
    """A fresh verifier for one entity: none (``off``), a one-off run (``before``) or one over the store-side caches."""
    from opinio_agents.retrieval.query_cache import CachedQueryEncoder
    from opinio_agents.synthesis.verification import HighlightVerifier
    from opinio_agents.triplets.cache import CachedTripletExtractor

    if mode == "off":
        return False
    if mode == "before":
        return HighlightVerifier(extractor, encoder=rag.encoder)
    return HighlightVerifier(
        CachedTripletExtractor(extractor, cache_dir=caches),
        encoder=CachedQueryEncoder(rag.encoder, cache_dir=caches),
        prefetch=mode != "seq",
    )


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _verdicts(results: Sequence[Any]) -> list[tuple[str, ...]]:
    """Every highlight's (entity, query, side, text, verdict, action), shown and dropped, in order."""
    out = []
    for key, result in results:
        for h in [*result.highlights, *result.meta.dropped]:
            v = h.verification
            out.append((str(key), h.query, str(h.polarity), h.text, v.verdict if v else "-", v.action if v else "-"))
    return out


def _index_time_cost(rag: Any, extractor: Any, entities: Sequence[Any], n: int, name: str) -> None:
    """CPU cost of extracting every stored sentence's triplets at index time, against what a cold run extracts."""
    stored = [s.sentence.text for e in entities for s in rag.store.sentences(e.key)]
    texts = list(dict.fromkeys(stored))[:n]
    start = time.process_time()
    extractor.extract(texts)
    triplet_ms = 1000 * (time.process_time() - start) / len(texts)
    start = time.process_time()
    rag.encoder.encode(texts)
    encode_ms = 1000 * (time.process_time() - start) / len(texts)
    cited: set[str] = set()
    for entity in entities:
        for h in rag.highlights(entity.key, verify=False).highlights:
            cited.update([h.text, *(e.text for e in h.evidence)])
    print(
        f"index-time triplets ({name}, {len(texts)} sentences): extractor {triplet_ms:.1f} CPU ms/sentence, "
        f"index encoder {encode_ms:.1f} ({triplet_ms / encode_ms:.1f}x the encoding cost); the set's "
        f"{len(set(stored))} distinct stored sentences against {len(cited)} texts a cold verification of its "
        f"default queries extracts ({len(set(stored)) / max(1, len(cited)):.0f}x)"
    )


def _line(label: str, mode: str, round_: str, row: dict[str, Any]) -> str:
    """One row of the summary table."""
    verdicts = "-" if mode == "off" else f"{row['supported']}/{row['weak']}/{row['contradicted']}"
    ratio = row["cost_vs_synthesis"]
    added = f"{row['added_vs_synthesis']:.2f}x" if "added_vs_synthesis" in row else "-"
    cpu = f"{row['added_cpu_s']:+.2f}" if "added_cpu_s" in row else "-"
    return (
        f"{label:<24} {mode:<5} {round_:>2} {row['highlights']:>6} {verdicts:>15} {row['verification_s']:>8.2f} "
        f"{row['synthesis_s']:>8.2f} {(f'{ratio:.2f}x' if ratio is not None else '-'):>6} {added:>6} {cpu:>7} "
        f"{('yes' if row['same_verdicts_as_first_mode'] else 'NO'):>5}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="sample,space_dev", help="Comma-separated: sample, space_dev.")
    parser.add_argument("--paths", default="extractive,llm-fake", help="Comma-separated: extractive, llm-fake.")
    parser.add_argument("--entities", type=int, default=None, help="Only the first N entities of each set.")
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "opinio-verification-bench")
    parser.add_argument("--flip", type=int, default=4, help="The fake flips the side on 1 query in N.")
    parser.add_argument("--off-aspect", type=int, default=6, help="The fake writes off-aspect on 1 query in N.")
    parser.add_argument(
        "--modes",
        default="off,seq,cold,warm",
        help="Comma-separated, run in this order: off (no verification), before (no cache beyond one entity), "
        "seq (the store-side triplet and phrase caches, empty at the start, no background extraction), cold "
        "(the same with background extraction), warm (new verifiers over the caches cold filled: a later process).",
    )
    parser.add_argument("--repeat", type=int, default=1, help="Run the modes this many times in turn (medians last).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures as JSON here.")
    parser.add_argument(
        "--index-time",
        type=int,
        default=0,
        metavar="N",
        help="Also price triplets computed at index time: CPU ms per sentence of the triplet extractor and of the "
        "index encoder on N stored sentences of the first entity of each set, and the sentences a cold run extracts.",
    )
    args = parser.parse_args()

    from opinio_agents.api import OpinioRAG
    from opinio_agents.triplets.factory import get_triplet_extractor

    sets = _load_sets([s.strip() for s in args.sets.split(",") if s.strip()], args.entities)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := [m for m in modes if m not in MODES]:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}: use {', '.join(MODES)}")
    table: list[tuple[str, str, dict[str, Any]]] = []
    extractor = get_triplet_extractor("embedded")
    started = time.perf_counter()
    extractor.extract(["The triplet model loads on this first call."])
    load_s = time.perf_counter() - started
    runtime = getattr(extractor, "runtime", "-")
    print(f"triplet model load ({runtime} runtime; once per process, not counted below): {load_s:.2f} s")

    figures: dict[str, Any] = {"triplet_model_load_s": round(load_s, 3), "triplet_runtime": runtime, "sets": {}}
    for name, entities in sets.items():
        for path in paths:
            fake = None
            if path == "llm-fake":
                fake = WrongSideChatModel(flip=args.flip, off_aspect=args.off_aspect, planted={})
            rag = OpinioRAG(args.store / name, llm=fake, llm_options={"cache_path": None} if fake else None)
            rag.index(entities, show_progress=False, fit_hiro=False)
            started = time.perf_counter()
            rag.encoder.encode(["The phrase encoder loads on this first call."])  # OF similarity's model
            print(f"phrase encoder load (the retrieval encoder's session, not counted below): "
                  f"{time.perf_counter() - started:.2f} s")
            if args.index_time and path == paths[0]:
                _index_time_cost(rag, extractor, entities, args.index_time, name)
            caches = Path(tempfile.mkdtemp(prefix="opinio-vb-caches-"))  # a fresh store-side cache for cold/warm
            reference: list[tuple[str, ...]] | None = None
            for round_ in range(max(1, args.repeat)):
                off_row: dict[str, Any] | None = None
                for mode in modes:
                    results = []
                    planted: dict[str, str] = {}
                    if mode in ("seq", "cold"):
                        for stale in caches.glob("*.sqlite*"):
                            stale.unlink()
                    cpu0 = time.process_time()
                    for entity in entities:
                        verifier = _verifier(mode, extractor, rag, caches)
                        result = rag.highlights(entity.key, verify=verifier)
                        if fake is not None:
                            planted.update({f"{entity.key}\x00{q}": kind for q, kind in fake.planted.items()})
                            fake.planted.clear()
                        results.append((entity.key, result))
                        t = result.meta.timings
                        print(
                            f"  {name}/{path}/{mode} entity {entity.key}: {len(result.highlights)} shown, "
                            f"{len(result.meta.dropped)} dropped, verification {t.get('verification', 0):.2f} s, "
                            f"synthesis {t.get('synthesis', 0):.2f} s, total {t.get('total', 0):.2f} s",
                            flush=True,
                        )
                    row = _counts(results, planted if fake else None)
                    row["cpu_s"] = round(time.process_time() - cpu0, 3)
                    row["round"] = round_ + 1
                    if mode == "off":
                        off_row = row
                        row["same_verdicts_as_first_mode"] = True
                    else:
                        verdicts = _verdicts(results)
                        reference = verdicts if reference is None else reference
                        row["same_verdicts_as_first_mode"] = verdicts == reference
                    if off_row is not None and mode != "off" and off_row["synthesis_s"]:
                        loop = row["synthesis_s"] + row["verification_s"]
                        row["added_s"] = round(loop - off_row["synthesis_s"], 3)
                        row["added_vs_synthesis"] = round(row["added_s"] / off_row["synthesis_s"], 3)
                        row["added_cpu_s"] = round(row["cpu_s"] - off_row["cpu_s"], 3)
                    figures["sets"][f"{name}/{path}/{mode}/{round_ + 1}"] = row
                    print(f"\n{name} / {path} / {mode} (round {round_ + 1}): {row['entities']} entities")
                    if mode != "off":
                        print(
                            f"  highlights {row['highlights']}: supported {row['supported']}, weak {row['weak']}, "
                            f"contradicted {row['contradicted']} -> rewritten {row['rewritten']}, "
                            f"dropped {row['dropped']}"
                        )
                    if fake is not None and mode != "off":
                        print(
                            f"  planted errors caught {row['planted_caught']}, missed {row['planted_missed']}; "
                            f"false alarms {row['false_alarms']} of {row['clean_highlights']} clean highlights"
                        )
                    ratio = row["cost_vs_synthesis"]
                    print(
                        f"  cost: verification {row['verification_s']:.2f} s / synthesis {row['synthesis_s']:.2f} s = "
                        f"{ratio:.0%} of synthesis time" if ratio is not None else
                        f"  no verification: synthesis {row['synthesis_s']:.2f} s, whole run {row['total_s']:.2f} s",
                    )
                    if "added_s" in row:
                        print(
                            f"        added: synthesis + verification {row['added_s']:+.2f} s over the off run's "
                            f"synthesis = {row['added_vs_synthesis']:.0%} of it; {row['added_cpu_s']:+.2f} CPU s"
                        )
                    table.append((f"{name}/{path}", mode, row))
            rag.close()
    print(f"\nload: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min)")
    print(f"{'set/path':<24} {'mode':<5} {'rd':>2} {'highl.':>6} {'sup/weak/contr':>15} {'verif s':>8} "
          f"{'synth s':>8} {'ratio':>6} {'added':>6} {'+cpu s':>7} {'same':>5}")
    for label, mode, row in table:
        print(_line(label, mode, str(row["round"]), row))
    if args.repeat > 1:
        print(f"\nmedians of {args.repeat} rounds")
        for label, mode in dict.fromkeys((label, mode) for label, mode, _ in table):
            rows = [r for lab, m, r in table if (lab, m) == (label, mode)]
            median = dict(rows[-1])
            for key in ("verification_s", "synthesis_s", "added_s", "added_vs_synthesis", "added_cpu_s"):
                if all(key in r for r in rows):
                    median[key] = _median([r[key] for r in rows])
            median["cost_vs_synthesis"] = (
                _median([r["cost_vs_synthesis"] for r in rows]) if rows[0]["cost_vs_synthesis"] is not None else None
            )
            median["same_verdicts_as_first_mode"] = all(r["same_verdicts_as_first_mode"] for r in rows)
            figures["sets"][f"{label}/{mode}/median"] = median
            print(_line(label, mode, "md", median))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
