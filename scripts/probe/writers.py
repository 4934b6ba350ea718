"""Probe section ``writers``: two writers on one store, a waiting writer, a dead holder, readers during a write.

A writer subprocess is paused at a named checkpoint while it holds the store's
writer lock (``OPINIO_PAUSE_AT`` / ``OPINIO_PAUSE_FILE``, see
:mod:`opinio_agents.stores.checkpoints`); the probe acts while it waits there and
then lets it go. No case depends on timing: the pause is a gate the probe opens.

Cases:

* **second writer fails fast**: it exits 2 with one ``error:`` line naming the store
  and the holder's pid, no traceback, no Chroma error; the first writer then finishes.
* **second writer with --wait**: it says it is waiting, finishes after the first, and
  the store is identical to a clean build.
* **holder killed**: a writer killed with ``kill -9`` while holding the lock leaves no
  stale lock; the next writer succeeds.
* **readers during indexing**: while a writer is paused mid-update, a reader process
  lists entities and runs BM25 queries; it finishes while the writer still waits, so
  readers never block on the writer.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from scripts.probe.common import ProbeRow
from scripts.probe.kills import REPO, compare_to_clean, index_command, probe_env, run_index, write_datasets

SECTION = "writers"
_GATE_LIMIT_S = 300.0

_READER = """
import sys
from opinio_agents.stores import SentenceStore
from opinio_agents.retrieval.factory import RetrieverFactory
from opinio_agents.indexing.stages import AppendixDTokenizer
from scripts.probe._index_run import ProbeHashEncoder
store = SentenceStore(sys.argv[1])
factory = RetrieverFactory(store, ProbeHashEncoder(), tokenizer=AppendixDTokenizer())
hits = 0
for key in store.entity_keys():
    store.entity_record(key)
    hits += len(factory.retriever(key, "bm25", top_k=3).retrieve("clean room"))
print(f"read {len(store.entity_keys())} entities, {hits} hits")
"""


def _has_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" in text or "chromadb.errors" in text


def _paused_writer(store: Path, data: Path, gate: Path, point: str, *, encoder: str) -> subprocess.Popen[str]:
    """Start a writer that pauses at ``point`` (holding the lock) until ``gate`` exists."""
    env = probe_env({"OPINIO_PAUSE_AT": point, "OPINIO_PAUSE_FILE": str(gate)})
    return subprocess.Popen(
        index_command(store, data, encoder=encoder),
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_reached(gate: Path, proc: subprocess.Popen[str]) -> bool:
    """Wait until the writer reports it reached its pause point (False if it exited first)."""
    reached = Path(str(gate) + ".reached")
    started = time.monotonic()
    while not reached.exists():
        if proc.poll() is not None or time.monotonic() - started > _GATE_LIMIT_S:
            return False
        time.sleep(0.05)
    return True


def _finish(proc: subprocess.Popen[str], gate: Path) -> tuple[int, str]:
    gate.touch()
    _, stderr = proc.communicate(timeout=600)
    return proc.returncode, stderr


def _one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines)[:220]


def _second_writer_fails_fast(workdir: Path, data: Path, encoder: str) -> ProbeRow:
    case = "two writers at once: the second fails fast"
    store, gate = workdir / "two-writers", workdir / "gate-two"
    first = _paused_writer(store, data, gate, "after-catalog", encoder=encoder)
    if not _wait_reached(gate, first):
        return ProbeRow(SECTION, case, "crash", f"first writer exited early: {_one_line(first.communicate()[1])}")
    second = subprocess.run(
        index_command(store, data, encoder=encoder), cwd=REPO, env=probe_env(), capture_output=True, text=True,
        timeout=600,
    )
    rc, first_err = _finish(first, gate)
    lines = [line for line in second.stderr.strip().splitlines() if line.strip()]
    if _has_traceback(second.stderr) or _has_traceback(first_err):
        return ProbeRow(SECTION, case, "traceback", _one_line(second.stderr or first_err))
    named = len(lines) == 1 and str(store) in lines[0] and str(first.pid) in lines[0]
    if second.returncode != 2 or not named or rc != 0:
        return ProbeRow(
            SECTION, case, "crash", f"second rc={second.returncode}, first rc={rc}: {_one_line(second.stderr)}"
        )
    return ProbeRow(SECTION, case, "ok", lines[0][:200])


def _second_writer_waits(workdir: Path, data: Path, clean: Path, encoder: str) -> ProbeRow:
    case = "two writers, the second with --wait"
    store, gate = workdir / "waiting-writer", workdir / "gate-wait"
    first = _paused_writer(store, data, gate, "after-catalog", encoder=encoder)
    if not _wait_reached(gate, first):
        return ProbeRow(SECTION, case, "crash", f"first writer exited early: {_one_line(first.communicate()[1])}")
    second = subprocess.Popen(
        index_command(store, data, encoder=encoder, wait=True), cwd=REPO, env=probe_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # Let the first writer go only once the second has said that it waits (it reads its stderr line).
    assert second.stderr is not None
    announced = second.stderr.readline()
    rc, first_err = _finish(first, gate)
    _, rest = second.communicate(timeout=600)
    if _has_traceback(announced + rest + first_err):
        return ProbeRow(SECTION, case, "traceback", _one_line(announced + rest))
    if "waiting" not in announced or rc != 0 or second.returncode != 0:
        return ProbeRow(
            SECTION, case, "crash", f"first rc={rc}, second rc={second.returncode}: {_one_line(announced + rest)}"
        )
    diffs = compare_to_clean(clean, store)
    if diffs:
        return ProbeRow(SECTION, case, "not-identical", "; ".join(diffs)[:300])
    return ProbeRow(SECTION, case, "ok", f"{announced.strip()[:120]}; then identical to a clean build")


def _holder_killed(workdir: Path, data: Path, clean: Path, encoder: str) -> ProbeRow:
    case = "lock holder killed -9, next writer"
    store = workdir / "dead-holder"
    killed = run_index(store, data, encoder=encoder, kill_at="after-catalog")
    if killed.returncode != -9:
        return ProbeRow(SECTION, case, "crash", f"writer was not killed (rc={killed.returncode})")
    rerun = run_index(store, data, encoder=encoder)
    if rerun.returncode != 0:
        return ProbeRow(SECTION, case, "crash", f"next writer rc={rerun.returncode}: {_one_line(rerun.stderr)}")
    diffs = compare_to_clean(clean, store)
    if diffs:
        return ProbeRow(SECTION, case, "not-identical", "; ".join(diffs)[:300])
    return ProbeRow(SECTION, case, "ok", "no stale lock; the next writer completed the store")


def _readers_during_write(workdir: Path, v1: Path, v2: Path, clean: Path, encoder: str) -> ProbeRow:
    case = "readers while a writer updates the store"
    store, gate = workdir / "readers", workdir / "gate-readers"
    shutil.copytree(clean, store)
    writer = _paused_writer(store, v2, gate, "chroma-chunk", encoder=encoder)
    if not _wait_reached(gate, writer):
        return ProbeRow(SECTION, case, "crash", f"writer exited early: {_one_line(writer.communicate()[1])}")
    reader = subprocess.run(
        [sys.executable, "-c", _READER, str(store)], cwd=REPO, env=probe_env(), capture_output=True, text=True,
        timeout=600,
    )
    still_waiting = writer.poll() is None  # the reader finished while the writer held the lock
    rc, writer_err = _finish(writer, gate)
    if _has_traceback(reader.stderr) or _has_traceback(writer_err):
        return ProbeRow(SECTION, case, "traceback", _one_line(reader.stderr or writer_err))
    if reader.returncode != 0 or rc != 0 or not still_waiting:
        return ProbeRow(
            SECTION, case, "crash", f"reader rc={reader.returncode}, writer rc={rc}: {_one_line(reader.stderr)}"
        )
    return ProbeRow(SECTION, case, "ok", f"{reader.stdout.strip()} while the writer held the lock")


def run(workdir: Path, *, quick: bool = False) -> list[ProbeRow]:
    """Run the concurrency cases (``quick``: only the fail-fast case, with the hash encoder)."""
    encoder = "hash" if quick else "minilm"
    workdir.mkdir(parents=True, exist_ok=True)
    v1, v2 = write_datasets(workdir, reviews=30)
    rows = [_second_writer_fails_fast(workdir, v1, encoder)]
    if quick:
        return rows
    clean = workdir / "clean-v1"
    done = run_index(clean, v1, encoder=encoder)
    if done.returncode != 0:
        return [*rows, ProbeRow(SECTION, "clean build", "crash", _one_line(done.stderr))]
    rows.append(_readers_during_write(workdir, v1, v2, clean, encoder))
    rows.append(_second_writer_waits(workdir, v1, clean, encoder))
    rows.append(_holder_killed(workdir, v1, clean, encoder))
    return rows
