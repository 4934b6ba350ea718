"""LangChain's standard retriever tests (langchain-tests) for OpinioReviewRetriever."""

from __future__ import annotations

from typing import Any

import pytest

standard = pytest.importorskip("langchain_tests.integration_tests")

from opinio_agents.agents.retriever import OpinioReviewRetriever  # noqa: E402


@pytest.fixture(scope="class")
def _tiny_rag(request, tmp_path_factory, encoder):
    from opinio_agents.api import OpinioRAG
    from opinio_agents.models import Entity
    from tests.conftest import tiny_entity_dict

    rag = OpinioRAG(tmp_path_factory.mktemp("standard-retriever"))
    rag.index(Entity.model_validate(tiny_entity_dict()))
    request.cls.rag = rag
    yield rag
    rag.close()


@pytest.mark.usefixtures("_tiny_rag")
class TestOpinioReviewRetrieverStandard(standard.RetrieversIntegrationTests):
    rag: Any = None

    @property
    def retriever_constructor(self) -> type[OpinioReviewRetriever]:
        return OpinioReviewRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"rag": self.rag, "entity_id": 7, "kind": "hybrid"}

    @property
    def retriever_query_example(self) -> str:
        return "pool"
