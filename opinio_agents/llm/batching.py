"""Concurrent calls on one in-process model answered together: a gate that gathers them into batches.

A local model on a CPU answers one call at a time (a lock), yet the calls of one run often
arrive together: the per-query synthesizer asks an entity's queries ``max_concurrency`` at a
time, LangChain's ``batch`` runs its inputs on a thread pool. Each decoding step of a small
model mostly reads its weights, so answering several prompts in one forward pass costs little
more than answering one (SmolLM2-135M on one thread: one token of 8 prompts 0.12 CPU-s, of one
prompt 0.05). :class:`BatchGate` lets such calls meet: a caller that finds no batch running
becomes its leader, waits :attr:`~opinio_agents.llm.local.LocalChatModel.batch_wait` seconds
for more calls to join (as long as new ones keep arriving, up to the largest batch), runs them
all in one ``run`` and hands each caller its own result; the others wait for theirs. Calls
whose settings differ (``group``) are never mixed. Nothing here imports torch.

Example:
    >>> gate = BatchGate()
    >>> def run(batch):
    ...     for request in batch:
    ...         request.result = sum(request.ids)
    >>> request = BatchRequest(ids=[1, 2, 3], schema=None, budget=8, group="greedy")
    >>> gate.submit(request, run, max_batch=4, wait=0.0)
    >>> request.result, request.done
    (6, True)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["BatchGate", "BatchRequest"]


@dataclass
class BatchRequest:
    """One call waiting to be decoded with others.

    Attributes:
        ids: The prompt's token ids.
        schema: The JSON schema the answer is constrained to, or None.
        budget: Most tokens of the answer.
        group: The settings that must agree for calls to share a batch.
        result: Set by the batch's ``run``.
        error: Set instead of ``result`` when the batch failed.
        done: True once ``result`` or ``error`` is set.
    """

    ids: list[int]
    schema: str | None
    budget: int
    group: Hashable
    result: Any = None
    error: BaseException | None = None
    done: bool = False


class BatchGate:
    """Gathers concurrent :class:`BatchRequest` s into batches, one batch running at a time (see the module)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[BatchRequest] = []
        self._leading = False
        self.batches = 0  # batches run so far, for tests and benchmarks

    def submit(
        self,
        request: BatchRequest,
        run: Callable[[list[BatchRequest]], None],
        *,
        max_batch: int,
        wait: float,
    ) -> None:
        """Return once ``request`` is done, decoded by ``run`` in a batch of at most ``max_batch`` requests.

        ``run(batch)`` sets ``result`` on each request of ``batch`` (an exception it raises becomes every
        request's ``error``). The caller reads ``request.result`` or raises ``request.error``.
        """
        with self._cond:
            self._pending.append(request)
            self._cond.notify_all()
            while not request.done:
                if self._leading:
                    self._cond.wait()
                    continue
                self._leading = True
                batch = self._gather(request.group, max_batch, wait)
                self._cond.release()
                try:
                    run(batch)
                except BaseException as exc:  # noqa: BLE001 - every caller of the batch gets it
                    for item in batch:
                        if item.result is None:
                            item.error = exc
                finally:
                    self._cond.acquire()
                    for item in batch:
                        item.done = True
                    self.batches += 1
                    self._leading = False
                    self._cond.notify_all()

    def _gather(self, group: Hashable, max_batch: int, wait: float) -> list[BatchRequest]:
        """Take up to ``max_batch`` pending requests of ``group``, waiting while new ones keep coming (lock held)."""

        def matching() -> list[BatchRequest]:
            return [r for r in self._pending if r.group == group]

        seen = len(matching())
        deadline = time.monotonic() + wait
        while seen < max_batch:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._cond.wait(left)
            now = len(matching())
            if now > seen:  # someone joined: give the next one as long again
                seen, deadline = now, time.monotonic() + wait
        batch = matching()[:max_batch]
        taken = {id(r) for r in batch}
        self._pending = [r for r in self._pending if id(r) not in taken]
        return batch
