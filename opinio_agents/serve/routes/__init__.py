"""The service's routes, one :class:`fastapi.APIRouter` per resource.

* :mod:`.service`: ``/healthz``.
* :mod:`.highlights`: ``/entities/{id}/highlights`` and its event stream.
* :mod:`.search`: ``/entities/{id}/search`` and ``/entities/{id}/aspects``.
* :mod:`.reviews`: ``/entities/{id}/reviews/{review_id}``.
* :mod:`.chat`: ``POST /entities/{id}/chat``.
* :mod:`.jobs`: ``POST /index`` and ``/jobs/{job_id}``.
* :mod:`.entities`: ``/entities`` and ``/entities/{id}``, included last: an id may contain
  ``/`` (the path converter), so its catch-all must not shadow the routes above.

Each route reaches the façade and the settings through :mod:`opinio_agents.serve.deps`
(``Depends`` on ``app.state``) and raises; :mod:`opinio_agents.serve.errors` maps errors to
statuses in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import APIRouter

__all__ = ["routers"]


def routers() -> list[APIRouter]:
    """The routers in the order they must be included (the entity catch-all last)."""
    from opinio_agents.serve.routes import chat, entities, highlights, jobs, reviews, search, service

    return [service.router, highlights.router, search.router, reviews.router, chat.router, jobs.router,
            entities.router]
