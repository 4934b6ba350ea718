"""``GET /entities`` (paginated: ``limit``, ``cursor``) and ``GET /entities/{id}``.

Included after every other ``/entities/{id}/...`` router: an id may contain ``/`` (the path
converter), so the catch-all ``/entities/{id}`` must not shadow them.
"""

import base64
import binascii
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from opinio_agents.serve.deps import EntityKey, Rag, Settings, complete_entities, entity_summary
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.schemas import EntityDetail, EntitySummary
from opinio_agents.serve.streaming import json_response

__all__ = ["router", "encode_cursor", "decode_cursor"]

router = APIRouter(tags=["entities"])


def encode_cursor(key: str) -> str:
    """The opaque cursor that resumes a listing after entity ``key``.

    Example:
        >>> decode_cursor(encode_cursor("101/a"))
        '101/a'
    """
    return base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The entity key a cursor resumes after (``400`` naming ``cursor`` when it is not one)."""
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise ApiError(400, "bad_request", "cursor is not one this server gave; start without it",
                       field="cursor") from exc


@router.get(
    "/entities",
    response_model=list[EntitySummary],
    responses={200: {"headers": {"Link": {"description": 'The next page: `<entities?...>; rel="next"`',
                                          "schema": {"type": "string"}}}}},
)
def list_entities(
    rag: Rag,
    settings: Settings,
    limit: Annotated[int | None, Query(ge=1, description="Entities per page (default 100, at most 1000).")] = None,
    cursor: Annotated[str | None, Query(max_length=2000, description="From the previous page's Link header.")] = None,
) -> Any:
    """The indexed entities (names, review and sentence counts, expert aspects), one page at a time.

    The next page, when there is one, is in the ``Link`` header (``rel="next"``) and
    ``X-Next-Cursor``.
    """
    size = settings.entities_page if limit is None else limit
    if size > settings.max_entities_page:
        raise ApiError(400, "bad_request", f"limit={size} is above the largest page, {settings.max_entities_page}",
                       field="limit", limit=settings.max_entities_page)
    keys = complete_entities(rag)
    start = 0
    if cursor is not None:
        after = decode_cursor(cursor)
        if after not in keys:
            raise ApiError(400, "bad_request", "cursor names an entity that is no longer listed; start without it",
                           field="cursor")
        start = keys.index(after) + 1
    page = keys[start:start + size]
    headers = {}
    if start + size < len(keys):
        token = encode_cursor(page[-1])
        headers = {"Link": f'<entities?limit={size}&cursor={token}>; rel="next"', "X-Next-Cursor": token}
    return JSONResponse([entity_summary(rag, key) for key in page], headers=headers)


@router.get("/entities/{entity_id:path}", response_model=EntityDetail)
def get_entity(key: EntityKey, rag: Rag) -> Any:
    """One entity: counts, expert review, last update, whether HIRO aspects are available."""
    record = rag.store.entity_record(key)
    return json_response(
        EntityDetail(
            **entity_summary(rag, key),
            expert_review=None if record.expert_review is None else record.expert_review.model_dump(mode="json"),
            updated_at=record.updated_at,
            generation=record.generation,
            hiro_fitted=rag.hiro_fitted,
        )
    )
