"""Schemathesis: the whole HTTP API fuzzed from its own OpenAPI schema (slow tier, bounded examples).

Every operation of ``/openapi.json`` gets ``OPINIO_FUZZ_EXAMPLES`` generated requests (default
25: valid and invalid path/query/body values, entity ids known and unknown) against a small
store built with the hashing encoder. Checks: no ``5xx``, every status documented, every
``Content-Type`` and JSON body as the schema says. The run summary (operations, examples,
failures) is printed at the end of the session with ``-s``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from conftest import tiny_entity_dict  # noqa: E402
from fake_encoder import HashEncoder  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from opinio_agents.api import OpinioRAG  # noqa: E402
from opinio_agents.models import Entity  # noqa: E402
from opinio_agents.serve import create_app  # noqa: E402
from opinio_agents.serve.settings import ServeSettings  # noqa: E402

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("OPINIO_FUZZ_EXAMPLES", "12"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _known_entity_half_the_time(strategy: Any) -> Any:
    """Cases whose ``entity_id`` is the indexed entity's half the time (random ids only ever find 404)."""
    from hypothesis import strategies as st

    def pick(pair: tuple[Any, bool]) -> Any:
        case, known = pair
        if known and case.path_parameters and "entity_id" in case.path_parameters:
            case.path_parameters["entity_id"] = "7"
        return case

    return st.tuples(strategy, st.booleans()).map(pick)


def test_api_answers_every_generated_request_by_its_schema(tmp_path: Any) -> None:
    from hypothesis import given

    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    rag.index([Entity.model_validate(tiny_entity_dict())])
    model = FakeListChatModel(responses=["Reviewers say the wi-fi is slow [S1]."])  # chat without a model is 503
    serve_settings = ServeSettings(rate_limit=None, allowed_hosts=("testserver",),  # schemathesis' ASGI client's Host
                             max_upload_bytes=1 << 16, job_queue_depth=10_000, chat_verify=False)
    app = create_app(rag, llm=model, settings=serve_settings)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    tally = {"requests": 0}
    by_status: dict[int, int] = {}
    for operation in operations:

        @given(case=_known_entity_half_the_time(operation.as_strategy()))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                  database=None)
        def run(case: Any) -> None:
            response = case.call_and_validate(checks=CHECKS)
            tally["requests"] += 1
            by_status[response.status_code] = by_status.get(response.status_code, 0) + 1

        run()
    rag.close()
    assert len(operations) >= 10 and tally["requests"] >= len(operations)
    print(f"\nschemathesis: {len(operations)} operations, {tally['requests']} requests "
          f"(statuses {dict(sorted(by_status.items()))}), checks {', '.join(c.__name__ for c in CHECKS)}: "
          "no failure")
