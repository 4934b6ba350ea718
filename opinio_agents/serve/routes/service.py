"""``GET /healthz``: liveness, version, entity count, whether an LLM is configured."""

from typing import Any

from fastapi import APIRouter

import opinio_agents
from opinio_agents.serve.deps import State, complete_entities
from opinio_agents.serve.schemas import Health
from opinio_agents.serve.streaming import json_response

__all__ = ["router"]

router = APIRouter(tags=["service"])


@router.get("/healthz", response_model=Health)
def healthz(state: State) -> Any:
    """Liveness: the version, how many entities are indexed, whether an LLM is configured."""
    rag = state.rag
    return json_response(
        Health(
            version=opinio_agents.__version__,
            entities=len(complete_entities(rag)),
            llm=rag.llm_spec is not None or state.llm is not None,
            hiro_fitted=rag.hiro_fitted,
        )
    )
