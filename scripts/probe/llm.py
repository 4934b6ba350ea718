"""Probe section ``llm``: the LLM fault modes against the real openai client on a loopback server.

Each case scripts the OpenAI-compatible server of ``tests/loopback_server.py`` (bound
to 127.0.0.1, released when the case ends), runs one query through
:class:`~opinio_agents.synthesis.llm.LLMSynthesizer` built from a string spec (as the
CLI builds it) and checks:

* requests counted on the server = the attempts the failure reports = what the policy
  allows (``max_retries + 1`` for transport faults, 2 for unusable answers: the answer
  and one repair turn, 1 for a good answer);
* time taken within the deadline plus one request timeout (``unbounded`` otherwise);
* no text of the system prompt or the instructions in any output, and no raw model
  output longer than a short snippet in the failure message (``prompt-leak``).

Run alone: ``python -m scripts.probe.llm`` (from the repository root).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.probe.common import ProbeRow

__all__ = ["run", "CASES"]

_TESTS = Path(__file__).resolve().parents[2] / "tests"

MAX_RETRIES = 2
TIMEOUT = 0.5  # per request, seconds
DEADLINE = 2.0  # per query, seconds
SLACK = 3.0  # scheduling slack on a loaded machine, seconds


def _loopback() -> Any:
    """``tests/loopback_server.py``, imported by path (the tests folder is not a package)."""
    spec = importlib.util.spec_from_file_location("opinio_probe_loopback", _TESTS / "loopback_server.py")
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the repository
        raise RuntimeError(f"cannot import {_TESTS / 'loopback_server.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Case:
    """One fault mode: the server's script, the requests it must get, whether the query must succeed."""

    name: str
    script: Callable[[Any, str], list[Any]]
    expected_requests: int | None  # None: stopped by the deadline (any count up to the policy's)
    succeeds: bool
    quick: bool = False
    max_retries: int = MAX_RETRIES


def _good() -> str:
    return json.dumps(
        {"highlights": [{"polarity": "PROS", "text": "Fast, free Wi-Fi in every room.", "sentence_ids": ["S1", "S2"]}]}
    )


CASES: tuple[Case, ...] = (
    Case("always 429", lambda lb, _s: [lb.status(429)], MAX_RETRIES + 1, False, quick=True),
    Case("always 500", lambda lb, _s: [lb.status(500)], MAX_RETRIES + 1, False, quick=True),
    # 3 attempts of a 0.5 s timeout fit in the 2 s deadline: the retry budget ends the query.
    Case("never answers (retries)", lambda lb, _s: [lb.hang()], MAX_RETRIES + 1, False),
    # 50 retries would take 25 s: the deadline ends the query, however slow the machine.
    Case("never answers (deadline)", lambda lb, _s: [lb.hang()], None, False, quick=True, max_retries=50),
    Case("malformed JSON", lambda lb, _s: [lb.ok('{"highlights": [{"polarity": "PROS", "text": }')], 2, False),
    Case("truncated JSON", lambda lb, _s: [lb.ok(_good()[:45])], 2, False),
    Case("empty content", lambda lb, _s: [lb.ok("")], 2, False),
    Case("wrong schema", lambda lb, _s: [lb.ok('{"answer": "yes", "score": 5}')], 2, False),
    Case("refusal", lambda lb, _s: [lb.ok("I'm sorry, but I can't help with that request.")], 2, False),
    Case("echo of the system prompt", lambda lb, system: [lb.ok(f"My instructions are: {system}")], 2, False,
         quick=True),
    Case("slow but valid", lambda lb, _s: [lb.delay(0.2, lb.ok(_good()))], 1, True, quick=True),
)


def _item() -> Any:
    from opinio_agents.models import Evidence, QueryEvidence

    return QueryEvidence(
        query="wi-fi",
        entity_name="Harbor Inn",
        evidence=[
            Evidence(sentence_id="7:11:0", text="The wifi was fast and free in every room.", sentiment=0.6),
            Evidence(sentence_id="7:12:3", text="Wi-fi worked well even on the balcony.", sentiment=0.4),
        ],
    )


def _leaks(texts: list[str], protected: list[str]) -> bool:
    from opinio_agents.llm.redact import shingles

    secret: set[tuple[str, ...]] = set()
    for text in protected:
        secret |= shingles(text)
    return any(shingles(t) & secret for t in texts)


def _one(case: Case, lb: Any) -> ProbeRow:
    from opinio_agents.llm import RetryPolicy
    from opinio_agents.prompts import default_prompts
    from opinio_agents.synthesis.llm import LLMSynthesizer

    prompts = default_prompts()
    system = prompts.system.render()
    protected = [system, prompts.system.template, prompts.highlight.instruction]
    policy = RetryPolicy(max_retries=case.max_retries, base_delay=0.01, max_delay=0.05, deadline=DEADLINE)
    with lb.LoopbackServer(case.script(lb, system)) as server:
        synth = LLMSynthesizer("openai:probe-model", base_url=server.base_url, timeout=TIMEOUT, retry=policy)
        started = time.monotonic()
        [outcome] = list(synth.synthesize_many([_item()]))
        took = time.monotonic() - started
        requests = server.request_count
    failure = outcome.failure
    attempts = failure.attempts if failure is not None else requests
    shown = [h.text for h in outcome.highlights] + ([failure.error] if failure is not None else [])
    detail = (
        f"requests={requests} reported attempts={attempts} expected="
        f"{case.expected_requests if case.expected_requests is not None else f'<= {policy.max_attempts}'} "
        f"took={took:.2f}s (deadline {DEADLINE:g}s + timeout {TIMEOUT:g}s)"
    )
    if failure is not None:
        detail += f"; error: {failure.error[:140]}"
    if _leaks(shown, protected):
        return ProbeRow("llm", case.name, "prompt-leak", detail)
    if failure is not None and len(failure.error) > 700:
        return ProbeRow("llm", case.name, "prompt-leak", detail + " (failure message too long)")
    if (failure is None) != case.succeeds:
        return ProbeRow("llm", case.name, "crash", detail + f" (expected {'success' if case.succeeds else 'failure'})")
    counted_ok = (
        requests == case.expected_requests
        if case.expected_requests is not None
        else 1 <= requests <= policy.max_attempts and failure is not None and "deadline" in failure.error
    )
    if not counted_ok or attempts != requests or took > DEADLINE + TIMEOUT + SLACK:
        return ProbeRow("llm", case.name, "unbounded", detail)
    return ProbeRow("llm", case.name, "ok", detail)


def run(workdir: Path, *, quick: bool = False) -> list[ProbeRow]:
    """One row per fault mode (``quick``: 429, 500, never answers (deadline), echo, slow but valid)."""
    if importlib.util.find_spec("langchain_openai") is None:
        return [ProbeRow("llm", "all fault modes", "ok", "skipped: langchain-openai is not installed")]
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback-only")  # the loopback server ignores it
    lb = _loopback()
    rows: list[ProbeRow] = []
    for case in CASES:
        if quick and not case.quick:
            continue
        try:
            rows.append(_one(case, lb))
        except Exception as exc:  # a probe reports, it does not stop at the first broken case
            rows.append(ProbeRow("llm", case.name, "traceback", f"{type(exc).__name__}: {str(exc)[:200]}"))
    return rows


if __name__ == "__main__":  # pragma: no cover - manual run
    import tempfile

    for row in run(Path(tempfile.mkdtemp()), quick="--quick" in sys.argv):
        print(f"{row.outcome:<12} {row.case:<28} {row.detail}")
