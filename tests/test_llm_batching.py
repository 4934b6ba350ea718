"""The gate that gathers concurrent calls on one in-process model into batches (no model needed)."""

from __future__ import annotations

import threading

from opinio_agents.llm.batching import BatchGate, BatchRequest


def _submit_all(gate: BatchGate, requests: list[BatchRequest], run, wait: float, max_batch: int = 8) -> None:  # type: ignore[no-untyped-def]
    threads = [
        threading.Thread(target=gate.submit, args=(r, run), kwargs={"max_batch": max_batch, "wait": wait})
        for r in requests
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)


def test_concurrent_calls_meet_in_one_batch_and_each_gets_its_own_result() -> None:
    gate, sizes = BatchGate(), []

    def run(batch: list[BatchRequest]) -> None:
        sizes.append(len(batch))
        for request in batch:
            request.result = sum(request.ids)

    requests = [BatchRequest(ids=[i, 10], schema=None, budget=4, group="g") for i in range(4)]
    _submit_all(gate, requests, run, wait=5.0, max_batch=4)  # the fourth arrival closes the batch at once
    assert sizes == [4] and gate.batches == 1
    assert [r.result for r in requests] == [10, 11, 12, 13] and all(r.done and r.error is None for r in requests)


def test_batches_are_capped_and_groups_never_mixed() -> None:
    gate, batches = BatchGate(), []

    def run(batch: list[BatchRequest]) -> None:
        batches.append(sorted((r.group, r.ids[0]) for r in batch))
        for request in batch:
            request.result = request.ids[0]

    requests = [BatchRequest(ids=[i], schema=None, budget=4, group=i % 2) for i in range(6)]
    _submit_all(gate, requests, run, wait=0.2, max_batch=2)
    assert sum(len(b) for b in batches) == 6 and all(len(b) <= 2 for b in batches)
    assert all(len({group for group, _ in b}) == 1 for b in batches)
    assert [r.result for r in requests] == list(range(6))


def test_a_failed_batch_gives_every_caller_the_error() -> None:
    gate = BatchGate()

    def run(batch: list[BatchRequest]) -> None:
        raise RuntimeError("decoding failed")

    requests = [BatchRequest(ids=[i], schema=None, budget=4, group="g") for i in range(3)]
    _submit_all(gate, requests, run, wait=1.0, max_batch=3)
    assert all(isinstance(r.error, RuntimeError) and r.result is None for r in requests)


def test_a_call_alone_is_run_alone() -> None:
    gate, sizes = BatchGate(), []

    def run(batch: list[BatchRequest]) -> None:
        sizes.append(len(batch))
        batch[0].result = "ok"

    request = BatchRequest(ids=[1], schema=None, budget=4, group="g")
    gate.submit(request, run, max_batch=8, wait=0.01)
    assert request.result == "ok" and sizes == [1]
