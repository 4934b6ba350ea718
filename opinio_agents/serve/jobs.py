"""Background indexing jobs behind ``POST /index`` and ``GET /jobs/{id}``.

An uploaded file is indexed exactly as ``opinio index`` indexes it: the whole file is
validated first (:func:`opinio_agents.io.loaders.iter_valid_entities`, with the same
``max_review_chars`` / ``max_file_bytes`` limits), so a file with an error writes nothing
and its job fails with the file, line, entity, review and field at fault; then the
entities go through :meth:`OpinioRAG.index <opinio_agents.api.OpinioRAG.index>` under the
store's writer lock. Jobs run one at a time on one worker thread (one writer per store);
readers keep being served meanwhile. Only the last ``keep`` jobs are remembered.

States: ``queued`` -> ``validating`` -> ``indexing`` -> ``done`` | ``failed``.

Example:
    >>> jobs = IndexJobs(rag)                                             # doctest: +SKIP
    >>> job = jobs.submit(Path("/tmp/upload/reviews.json"), "reviews.json")  # doctest: +SKIP
    >>> jobs.get(job.job_id).state                                        # doctest: +SKIP
    'indexing'
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from opinio_agents.errors import DataError, OpinioError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS
from opinio_agents.serve.errors import classify

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG

__all__ = ["IndexJobs", "JobStatus", "JobState"]

log = logging.getLogger("opinio_agents.serve")

JobState = Literal["queued", "validating", "indexing", "done", "failed"]


class JobStatus(BaseModel):
    """What ``GET /jobs/{id}`` returns."""

    job_id: str
    state: JobState = "queued"
    filename: str
    skip_invalid: bool = False
    entities_total: int | None = Field(default=None, description="Entities in the file (known once validated).")
    entities_done: int = Field(default=0, description="Entities indexed so far.")
    reviews_total: int | None = None
    progress: float = Field(default=0.0, description="0..1: entities indexed / entities in the file.")
    current_entity: str | None = None
    message: str | None = Field(default=None, description="What the job waits for, when it waits.")
    stats: list[dict[str, Any]] = Field(default_factory=list, description="Per-entity IndexStats once done.")
    skipped: list[dict[str, str]] = Field(default_factory=list, description="Records skipped (skip_invalid).")
    error: dict[str, Any] | None = Field(default=None, description="The error body when the job failed.")
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None


class IndexJobs:
    """Runs indexing jobs one at a time on a worker thread.

    Args:
        rag: The shared façade the jobs index into.
        max_review_chars: Longest review text accepted (as ``opinio index --max-review-chars``).
        max_file_bytes: Largest file accepted.
        keep: Jobs remembered (oldest finished ones are forgotten first).
    """

    def __init__(
        self,
        rag: OpinioRAG,
        *,
        max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS,
        max_file_bytes: int = 64 << 20,
        keep: int = 100,
    ) -> None:
        self.rag = rag
        self.max_review_chars = max_review_chars
        self.max_file_bytes = max_file_bytes
        self.keep = keep
        self._jobs: OrderedDict[str, JobStatus] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opinio-index")

    def submit(self, path: Path, filename: str, *, skip_invalid: bool = False) -> JobStatus:
        """Queue ``path`` (a private copy of the upload, removed when the job ends); return its status."""
        job = JobStatus(job_id=uuid.uuid4().hex, filename=filename, skip_invalid=skip_invalid, created_at=time.time())
        with self._lock:
            self._jobs[job.job_id] = job
            self._trim()
            snapshot = job.model_copy(deep=True)
        self._pool.submit(self._run, job.job_id, path)
        return snapshot

    def get(self, job_id: str) -> JobStatus | None:
        """A copy of the job's status (None when unknown or forgotten)."""
        with self._lock:
            job = self._jobs.get(job_id)
            return None if job is None else job.model_copy(deep=True)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; wait for the running one when ``wait``."""
        self._pool.shutdown(wait=wait, cancel_futures=True)

    # -- the worker ------------------------------------------------------------------
    def _update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                for key, value in changes.items():
                    setattr(job, key, value)

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.state in ("done", "failed")]
        while len(self._jobs) > self.keep and finished:
            self._jobs.pop(finished.pop(0), None)

    def _run(self, job_id: str, path: Path) -> None:
        from opinio_agents.io.base import LoadReport
        from opinio_agents.io.loaders import iter_entities, iter_valid_entities

        job = self.get(job_id)
        if job is None:  # pragma: no cover - forgotten before it ran
            shutil.rmtree(path.parent, ignore_errors=True)
            return
        try:
            self._update(job_id, state="validating", started_at=time.time())
            total = reviews = 0
            for entity in iter_entities(
                path,
                skip_invalid=job.skip_invalid,
                report=LoadReport(),
                max_review_chars=self.max_review_chars,
                max_file_bytes=self.max_file_bytes,
            ):
                total += 1
                reviews += len(entity.user_reviews)
            self._update(job_id, state="indexing", entities_total=total, reviews_total=reviews)
            report = LoadReport()
            done = 0

            def counted() -> Any:
                nonlocal done
                for entity in iter_valid_entities(
                    path,
                    skip_invalid=job.skip_invalid,
                    report=report,
                    max_review_chars=self.max_review_chars,
                    max_file_bytes=self.max_file_bytes,
                ):
                    self._update(job_id, current_entity=entity.key)
                    yield entity
                    done += 1
                    self._update(job_id, entities_done=done, progress=done / total if total else 1.0)

            def waiting(_text: str) -> None:  # another process holds the store's writer lock
                self._update(job_id, message="waiting for another process that is writing to the store")

            stats = self.rag.index(counted(), wait=True, on_wait=waiting)
            self._update(
                job_id,
                state="done",
                message=None,
                entities_done=len(stats),
                progress=1.0,
                current_entity=None,
                stats=[dataclasses.asdict(s) for s in stats],
                skipped=[{"where": _renamed(w, path, job.filename), "reason": r} for w, r in report.skipped],
                finished_at=time.time(),
            )
        except OpinioError as exc:
            if isinstance(exc, DataError) and exc.source and str(path) in exc.source:
                exc = DataError(exc.message, source=job.filename, line=exc.line, entity_id=exc.entity_id,
                                review_id=exc.review_id, field=exc.field)
            _, body = classify(exc)
            body["error"]["message"] = _renamed(body["error"]["message"], path, job.filename)
            self._update(job_id, state="failed", error=body["error"], current_entity=None, finished_at=time.time())
        except Exception as exc:  # noqa: BLE001 - a job must end in a state, never die silently
            _, body = classify(exc)  # logs the traceback, answers a generic message
            self._update(job_id, state="failed", error=body["error"], current_entity=None, finished_at=time.time())
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)


def _renamed(text: str, path: Path, filename: str) -> str:
    """``text`` with the private upload path replaced by the name the client gave."""
    return text.replace(str(path), filename)
