"""Background indexing jobs behind ``POST /index`` and ``GET /jobs/{id}``, with a durable record.

An uploaded file is indexed exactly as ``opinio index`` indexes it: the whole file is
validated first (:func:`opinio_agents.io.loaders.iter_valid_entities`, with the same
``max_review_chars`` / ``max_file_bytes`` limits, plus ``max_entities`` and ``max_reviews``
per upload, named in the error), so a file with an error writes nothing and its job fails
with the file, line, entity, review and field at fault; then the entities go through
:meth:`OpinioRAG.index <opinio_agents.api.OpinioRAG.index>` under the store's writer lock.
Jobs run one at a time on one worker thread (one writer per store); at most ``queue_depth``
wait behind it (``503`` with ``Retry-After`` past that). Readers keep being served meanwhile.

**Crash recovery.** Each job lives in its own folder under ``jobs_dir``: ``job.json`` (its
status, rewritten atomically at each state change) and the upload, kept until the job ends.
A new :class:`IndexJobs` over the same folder (the server restarted after a crash) queues
every job that had not ended again; indexing is incremental and each entity's completion
marker comes last, so the rerun finishes what was cut (entities already written are
found up to date) and the store answers for every entity of the file. Folders of uploads
cut mid-transfer (no ``job.json``) are removed. Without ``jobs_dir`` the folder is a
temporary one, removed at shutdown (no recovery).

States: ``queued`` -> ``validating`` -> ``indexing`` -> ``done`` | ``failed``.

Example:
    >>> jobs = IndexJobs(rag, jobs_dir=Path(".opinio/serve-jobs"))              # doctest: +SKIP
    >>> job = jobs.submit_upload(open("reviews.json", "rb"), "reviews.json", "reviews.json",
    ...                          max_bytes=1 << 26)                              # doctest: +SKIP
    >>> jobs.get(job.job_id).state                                             # doctest: +SKIP
    'indexing'
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from pydantic import BaseModel, Field, ValidationError

from opinio_agents.errors import DataError, OpinioError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS
from opinio_agents.serve.errors import ApiError, classify

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.io.base import LoadReport
    from opinio_agents.models import Entity

__all__ = ["IndexJobs", "JobStatus", "JobState", "JOBS_FOLDER"]

log = logging.getLogger("opinio_agents.serve")

JobState = Literal["queued", "validating", "indexing", "done", "failed"]
#: The folder of ``opinio serve``'s job records inside the store directory.
JOBS_FOLDER = "serve-jobs"
_RECORD = "job.json"
_ENDED = ("done", "failed")


class JobStatus(BaseModel):
    """What ``GET /jobs/{id}`` returns."""

    job_id: str
    state: JobState = "queued"
    filename: str
    upload: str = Field(default="", description="The private copy's file name (inside the job's folder).")
    skip_invalid: bool = False
    entities_total: int | None = Field(default=None, description="Entities in the file (known once validated).")
    entities_done: int = Field(default=0, description="Entities indexed so far.")
    reviews_total: int | None = None
    progress: float = Field(default=0.0, description="0..1: entities indexed / entities in the file.")
    current_entity: str | None = None
    message: str | None = Field(default=None, description="What the job waits for, when it waits.")
    resumed: int = Field(default=0, description="Times the job was queued again after a server restart.")
    stats: list[dict[str, Any]] = Field(default_factory=list, description="Per-entity IndexStats once done.")
    skipped: list[dict[str, str]] = Field(default_factory=list, description="Records skipped (skip_invalid).")
    error: dict[str, Any] | None = Field(default=None, description="The error body when the job failed.")
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None


class IndexJobs:
    """Runs indexing jobs one at a time on a worker thread, each recorded durably in ``jobs_dir``.

    Args:
        rag: The shared façade the jobs index into.
        max_review_chars: Longest review text accepted (as ``opinio index --max-review-chars``).
        max_file_bytes: Largest file accepted.
        keep: Jobs remembered (oldest finished ones are forgotten first, their folders removed).
        jobs_dir: The folder of job records and uploads (None: a temporary one, no recovery).
        queue_depth: Jobs that may wait behind the running one.
        max_entities: Entities per upload.
        max_reviews: Reviews per upload.
    """

    def __init__(
        self,
        rag: OpinioRAG,
        *,
        max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS,
        max_file_bytes: int = 64 << 20,
        keep: int = 100,
        jobs_dir: Path | None = None,
        queue_depth: int = 4,
        max_entities: int = 1_000,
        max_reviews: int = 200_000,
    ) -> None:
        self.rag = rag
        self.max_review_chars = max_review_chars
        self.max_file_bytes = max_file_bytes
        self.keep = keep
        self.queue_depth = queue_depth
        self.max_entities = max_entities
        self.max_reviews = max_reviews
        # A temporary folder is removed at shutdown, and also when the runner is garbage-collected
        # or the interpreter exits: an app that is built and never served (a test, a notebook)
        # leaves nothing behind.
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if jobs_dir is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="opinio-jobs-", ignore_cleanup_errors=True)
            jobs_dir = Path(self._temporary.name)
        self.jobs_dir = Path(jobs_dir)
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._jobs: OrderedDict[str, JobStatus] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opinio-index")
        self.recovered = self._recover()

    # -- submitting --------------------------------------------------------------------
    def submit_upload(
        self, stream: BinaryIO, name: str, filename: str, *, skip_invalid: bool = False, max_bytes: int
    ) -> JobStatus:
        """Copy an upload into a new job's folder (``413`` past ``max_bytes``) and queue the job.

        Args:
            stream: The uploaded bytes.
            name: A safe file name for the copy (its extension picks the reader).
            filename: The name the client gave (shown in the job and its errors).
            skip_invalid: Skip bad records instead of failing the job.
            max_bytes: Largest upload.

        Raises:
            ApiError: ``503`` when the queue is full, ``413`` when the upload is too large.
        """
        self._check_room()
        job = JobStatus(job_id=uuid.uuid4().hex, filename=filename, upload=name, skip_invalid=skip_invalid,
                        created_at=time.time())
        folder = self.jobs_dir / job.job_id
        folder.mkdir()
        try:
            _copy(stream, folder / name, max_bytes)
            self._write_record(job)  # from here on the job survives a crash
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return self._queue(job)

    def submit(self, path: Path, filename: str, *, skip_invalid: bool = False) -> JobStatus:
        """Queue a copy of the file ``path`` (the original is left alone); return the job's status."""
        with open(path, "rb") as stream:
            return self.submit_upload(stream, path.name, filename, skip_invalid=skip_invalid,
                                      max_bytes=self.max_file_bytes)

    def get(self, job_id: str) -> JobStatus | None:
        """A copy of the job's status (None when unknown or forgotten)."""
        with self._lock:
            job = self._jobs.get(job_id)
            return None if job is None else job.model_copy(deep=True)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; wait for the running one when ``wait``. A temporary jobs folder is removed."""
        self._pool.shutdown(wait=wait, cancel_futures=True)
        if self._temporary is None:
            return
        if wait:
            self._temporary.cleanup()
        else:  # remove the temporary folder once the running job ends
            threading.Thread(target=self.shutdown, kwargs={"wait": True}, daemon=True).start()

    def _check_room(self) -> None:
        with self._lock:
            waiting = sum(1 for j in self._jobs.values() if j.state == "queued")
        if waiting >= self.queue_depth:
            raise ApiError(503, "queue_full",
                           f"{waiting} index jobs are already waiting (at most {self.queue_depth}); retry later",
                           headers={"Retry-After": "30"}, retry_after=30)

    def _queue(self, job: JobStatus) -> JobStatus:
        with self._lock:
            self._jobs[job.job_id] = job
            self._trim()
            snapshot = job.model_copy(deep=True)
        self._pool.submit(self._run, job.job_id)
        return snapshot

    # -- the durable record ------------------------------------------------------------
    def _write_record(self, job: JobStatus) -> None:
        folder = self.jobs_dir / job.job_id
        if not folder.is_dir():
            return
        temporary = folder / f".{_RECORD}.tmp"
        temporary.write_text(job.model_dump_json(), encoding="utf-8")
        os.replace(temporary, folder / _RECORD)

    def _recover(self) -> list[str]:
        """Queue again every job a previous server left unfinished; drop cut uploads; return the resumed ids."""
        found: list[JobStatus] = []
        for folder in sorted(p for p in self.jobs_dir.iterdir() if p.is_dir()):
            try:
                job = JobStatus.model_validate_json((folder / _RECORD).read_text(encoding="utf-8"))
            except (OSError, ValidationError):
                shutil.rmtree(folder, ignore_errors=True)  # an upload cut mid-transfer: no job was accepted
                continue
            if job.state in _ENDED:
                _remove_uploads(folder)
            else:
                job = job.model_copy(update={"state": "queued", "resumed": job.resumed + 1, "current_entity": None,
                                             "message": "queued again after a server restart"})
                self._write_record(job)
            found.append(job)
        resumed = []
        for job in sorted(found, key=lambda j: j.created_at):
            if job.state == "queued":
                resumed.append(self._queue(job).job_id)
                log.warning("index job %s (%s) was cut by a restart; running it again", job.job_id, job.filename)
            else:
                with self._lock:
                    self._jobs[job.job_id] = job
                    self._trim()
        return resumed

    # -- the worker --------------------------------------------------------------------
    def _update(self, job_id: str, **changes: Any) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            for key, value in changes.items():
                setattr(job, key, value)
            snapshot = job.model_copy(deep=True)
        if "state" in changes or "entities_done" in changes:
            self._write_record(snapshot)

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.state in _ENDED]
        while len(self._jobs) > self.keep and finished:
            job_id = finished.pop(0)
            self._jobs.pop(job_id, None)
            shutil.rmtree(self.jobs_dir / job_id, ignore_errors=True)

    def _read(self, path: Path, job: JobStatus, report: LoadReport, *, validated: bool) -> Iterator[Entity]:
        from opinio_agents.io.loaders import iter_entities, iter_valid_entities

        read = iter_valid_entities if validated else iter_entities
        return read(path, skip_invalid=job.skip_invalid, report=report, max_review_chars=self.max_review_chars,
                    max_file_bytes=self.max_file_bytes)

    def _count(self, path: Path, job: JobStatus) -> tuple[int, int]:
        """Entities and reviews in the file, refusing it past the per-upload limits."""
        from opinio_agents.io.base import LoadReport

        total = reviews = 0
        for entity in self._read(path, job, LoadReport(), validated=False):
            total += 1
            reviews += len(entity.user_reviews)
            if total > self.max_entities:
                raise DataError(f"the upload has more than {self.max_entities:,} entities (max_upload_entities); "
                                "split the file", source=job.filename, field="entities")
            if reviews > self.max_reviews:
                raise DataError(f"the upload has more than {self.max_reviews:,} reviews (max_upload_reviews); "
                                "split the file", source=job.filename, entity_id=entity.key, field="user_reviews")
        return total, reviews

    def _run(self, job_id: str) -> None:
        job = self.get(job_id)
        if job is None:  # pragma: no cover - forgotten before it ran
            return
        path = self.jobs_dir / job_id / job.upload
        try:
            self._index(job, path)
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
            _remove_uploads(self.jobs_dir / job_id)

    def _index(self, job: JobStatus, path: Path) -> None:
        from opinio_agents.io.base import LoadReport

        job_id = job.job_id
        self._update(job_id, state="validating", started_at=time.time())
        total, reviews = self._count(path, job)
        self._update(job_id, state="indexing", entities_total=total, reviews_total=reviews)
        report = LoadReport()
        done = 0

        def counted() -> Iterator[Entity]:
            nonlocal done
            for entity in self._read(path, job, report, validated=True):
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


def _copy(stream: BinaryIO, target: Path, max_bytes: int) -> None:
    written = 0
    with open(target, "wb") as out:
        while chunk := stream.read(1 << 20):
            written += len(chunk)
            if written > max_bytes:
                raise ApiError(413, "too_large", f"the upload is larger than {max_bytes:,} bytes",
                               field="file", limit=max_bytes)
            out.write(chunk)


def _remove_uploads(folder: Path) -> None:
    """Everything in a job's folder but its record (the upload is kept only until the job ends)."""
    for path in folder.glob("*"):
        if path.name != _RECORD:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _renamed(text: str, path: Path, filename: str) -> str:
    """``text`` with the private upload path replaced by the name the client gave."""
    return text.replace(str(path), filename)
