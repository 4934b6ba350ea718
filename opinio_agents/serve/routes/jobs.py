"""``POST /index`` (upload a dataset, indexed in the background) and ``GET /jobs/{job_id}``."""

import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, UploadFile

from opinio_agents.io.loaders import supported_extensions
from opinio_agents.serve.deps import Settings, get_jobs
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.jobs import IndexJobs, JobStatus
from opinio_agents.serve.streaming import json_response

__all__ = ["router", "safe_name"]

router = APIRouter(tags=["indexing"])

Jobs = Annotated[IndexJobs, Depends(get_jobs)]


def safe_name(filename: str | None) -> str:
    """A plain file name for the private copy of an upload (its extension picks the reader)."""
    base = Path((filename or "").replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._") or "upload"
    return base[-120:]


@router.post("/index", response_model=JobStatus, status_code=202)
def index(
    jobs: Jobs,
    settings: Settings,
    file: Annotated[UploadFile, File(description="OpinioBank JSON / JSONL or a reviews CSV.")],
    skip_invalid: Annotated[bool, Form(description="Skip bad records instead of refusing the file.")] = False,
) -> Any:
    """Index an uploaded dataset in the background; poll ``GET /jobs/{job_id}``.

    The file is validated completely before anything is written (a bad record fails the job
    with its file, line, entity, review and field, and the store is unchanged), exactly as
    ``opinio index`` does.
    """
    name = safe_name(file.filename)
    suffix = Path(name).suffix.lower()
    accepted = supported_extensions()
    if suffix not in accepted:
        raise ApiError(
            400, "bad_request",
            f"file {file.filename!r}: unsupported extension {suffix or '(none)'!r}; use one of {', '.join(accepted)}",
            field="file",
        )
    job = jobs.submit_upload(file.file, name, file.filename or name, skip_invalid=skip_invalid,
                             max_bytes=settings.max_upload_bytes)
    return json_response(job, status=202, headers={"Location": f"jobs/{job.job_id}"})


@router.get("/jobs/{job_id}", response_model=JobStatus)
def get_job(jobs: Jobs, job_id: str) -> Any:
    """The state and progress of an indexing job (``failed`` jobs carry the error body)."""
    job = jobs.get(job_id)
    if job is None:
        raise ApiError(404, "not_found", f"no job {job_id!r} (finished jobs are kept for a while)", field="job_id")
    return json_response(job)
