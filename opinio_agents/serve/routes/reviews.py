"""``GET /entities/{id}/reviews/{review_id}``: one full review with its sentences' offsets."""

from typing import Any

from fastapi import APIRouter

from opinio_agents.serve.deps import EntityKey, State
from opinio_agents.serve.schemas import ReviewOut, SentenceSpan
from opinio_agents.serve.streaming import json_response

__all__ = ["router"]

router = APIRouter(tags=["reviews"])


@router.get("/entities/{entity_id:path}/reviews/{review_id:path}", response_model=ReviewOut)
def review(key: EntityKey, state: State, review_id: str) -> Any:
    """The full review, with each stored sentence's id and offsets (to mark the quoted one)."""
    item, sentences = state.reviews.get(key, review_id)
    return json_response(
        ReviewOut(
            entity_id=key,
            review_id=str(item.review_id),
            text=item.text,
            rating=item.rating,
            helpful_votes=item.helpful_votes,
            publication_date=item.publication_date,
            user_reviews_posted=item.user_reviews_posted,
            user_cities_visited=item.user_cities_visited,
            user_helpful_votes=item.user_helpful_votes,
            sentences=[
                SentenceSpan(
                    sentence_id=s.sentence.sentence_id,
                    index=s.sentence.index,
                    start=s.sentence.start,
                    end=s.sentence.end,
                    text=s.sentence.text,
                    sentiment=round(s.sentiment, 4),
                )
                for s in sentences
            ],
        )
    )
