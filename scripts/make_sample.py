"""Regenerate the sample OpinioBank dataset shipped with opinio_agents.

Writes ``opinio_agents/datasets/resources/sample_opiniobank.json`` (or the path
given as the first argument): two hotels with realistic, noisy reviews whose
opinions support their expert PROS and CONS. Deterministic (fixed seed).

Usage:
    python scripts/make_sample.py [OUTPUT.json]
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from opinio_agents.datasets.compose import Mention, ReviewComposer
from opinio_agents.datasets.phrases import ASPECTS
from opinio_agents.models import Entity, Sentiment

SEED = 20250401
DEFAULT_OUTPUT = (
    Path(__file__).resolve().parents[1] / "opinio_agents" / "datasets" / "resources" / "sample_opiniobank.json"
)


@dataclass
class Profile:
    """What one sample entity is like: planted aspects, extras and complaints."""

    entity_id: int
    name: str
    n_reviews: int
    #: aspect -> (side, prevalence, strength)
    planted: dict[str, tuple[str, float, float]]
    pros: dict[str, str]
    cons: dict[str, str]
    extra: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: review number -> critical complaint category
    critical: dict[int, str] = field(default_factory=dict)


CITY_HOTEL = Profile(
    entity_id=101,
    name="Harborview City Hotel",
    n_reviews=240,
    planted={
        "location": ("pros", 0.45, 0.92),
        "front desk staff": ("pros", 0.38, 0.85),
        "housekeeping": ("pros", 0.18, 0.8),
        "breakfast buffet": ("pros", 0.3, 0.78),
        "bed comfort": ("pros", 0.2, 0.82),
        "noise level": ("cons", 0.35, 0.85),
        "wi-fi": ("cons", 0.25, 0.85),
        "room decor": ("cons", 0.22, 0.8),
        "parking": ("cons", 0.12, 0.8),
        "elevators": ("cons", 0.1, 0.75),
    },
    pros={
        "location": "Prime location a short walk from the harbour, the old town and the central metro station.",
        "front desk staff": "Warm, professional front desk staff who go out of their way to help.",
        "housekeeping": "Attentive housekeeping keeps rooms tidy throughout the stay.",
        "breakfast buffet": "Varied breakfast buffet with hot dishes, fresh pastries and local specialities.",
        "bed comfort": "Comfortable beds with quality mattresses and a choice of pillows.",
    },
    cons={
        "noise level": (
            "Street-facing rooms are noisy at night, with traffic and bar crowds audible through the windows."
        ),
        "wi-fi": "Wi-Fi requires a daily fee, which may be inconvenient for guests expecting complimentary access.",
        "room decor": "Dated room decor that may not appeal to guests seeking modern aesthetics.",
        "parking": "No on-site parking; the nearby public garage is expensive.",
        "elevators": "Only two small elevators, leading to waits at busy times.",
    },
    extra={
        "wi-fi": {
            "negative": [
                "They charge 15 euros a day for wi-fi, in this day and age!",
                "Wifi is NOT free, you pay per device per day, which nobody told us at booking.",
                "The free wi-fi is only on the ground floor, in the rooms you have to buy a daily pass.",
                "Paid for the premium internet package and it was still slow.",
                "Seriously, charging for wifi in a city hotel in 2023?",
            ],
            "positive": ["The paid wi-fi was at least fast once you bought the pass."],
        },
        "noise level": {
            "negative": [
                "Our room faced the harbour road and the noise from the trams started at 5am.",
                "Very noisy on Friday and Saturday night, the crowd from the pubs outside was loud until 2.",
                "Ask for a room at the back, the street side is really noisy.",
                "The windows are single glazed so the traffic noise never stops, earplugs are a must.",
            ],
            "positive": ["We had a courtyard room which was perfectly quiet."],
        },
        "room decor": {
            "negative": [
                "The decor is straight out of the 80s, floral bedspreads and brass lamps.",
                "Clean but the furniture is old and scuffed, the room decor badly needs an update.",
                "Dated decor, the carpet had seen better days.",
            ],
        },
        "location": {
            "positive": [
                "The location is unbeatable, the harbour and the old town are right on the doorstep.",
                "Two minutes to the metro, ten minutes walk to the cathedral, great location.",
                "Perfect location for exploring on foot, we never needed a taxi.",
            ],
        },
        "front desk staff": {
            "positive": [
                "Maria at the front desk was a star, she booked us a boat trip and a table at a seafood place in town.",
                "The staff at reception were lovely and let us leave our bags after checkout.",
            ],
        },
        "parking": {
            "negative": [
                "There is no parking at the hotel, we paid 35 a day at the public garage around the corner.",
                "Parking is a nightmare, the closest car park is expensive and often full.",
            ],
        },
        "elevators": {
            "negative": [
                "Only two tiny lifts for the whole building, so we usually took the stairs.",
                "Waiting for the elevator in the morning took forever.",
            ],
        },
    },
    critical={37: "bed bugs", 151: "theft"},
)

BEACH_RESORT = Profile(
    entity_id=202,
    name="Palm Cove Beach Resort",
    n_reviews=220,
    planted={
        "pool": ("pros", 0.42, 0.88),
        "beach": ("pros", 0.4, 0.9),
        "breakfast buffet": ("pros", 0.33, 0.82),
        "spa": ("pros", 0.12, 0.8),
        "view": ("pros", 0.2, 0.88),
        "kids club": ("pros", 0.1, 0.8),
        "check-in": ("cons", 0.25, 0.82),
        "restaurant": ("cons", 0.22, 0.8),
        "noise level": ("cons", 0.2, 0.83),
        "bar": ("cons", 0.12, 0.75),
        "shuttle service": ("cons", 0.1, 0.78),
    },
    pros={
        "pool": "Large lagoon-style pool with plenty of loungers and a separate children's area.",
        "beach": "Direct access to a clean, sandy beach with complimentary loungers and umbrellas.",
        "breakfast buffet": "Extensive breakfast buffet with fresh tropical fruit and made-to-order eggs.",
        "spa": "Relaxing spa offering professional massages.",
        "view": "Many rooms offer sweeping ocean views.",
        "kids club": "Well-run kids club with daily activities for children.",
    },
    cons={
        "check-in": "Check-in can be slow, with long queues at peak arrival times.",
        "restaurant": "The a la carte restaurant is overpriced for the quality of the food.",
        "noise level": "Thin walls between rooms let in noise from neighbours and corridors.",
        "bar": "Drinks at the bar are expensive and the bar closes early.",
        "shuttle service": "The shuttle service to town is infrequent.",
    },
    extra={
        "check-in": {
            "negative": [
                "Check-in took almost 90 minutes, we sat in the heat with a welcome juice and nothing happening.",
                "Slow check-in, they only had two people at the desk for three coaches of arrivals.",
                "The wristband check-in system broke down and everyone had to wait.",
            ],
        },
        "restaurant": {
            "negative": [
                "The beachfront restaurant charges 45 dollars for a plate of pasta, completely overpriced.",
                "Overpriced restaurant, the steak was tough and the service slow.",
                "The Italian restaurant was nothing special for what they charge.",
            ],
        },
        "noise level": {
            "negative": [
                "The walls are paper thin, we heard our neighbours' conversations and snoring, so noisy.",
                "Thin walls and doors, the noise from the corridor woke us up every morning.",
                "Not a quiet room, you can hear the kids next door through the wall.",
            ],
        },
        "pool": {
            "positive": [
                "The lagoon pool is massive and winds through the gardens, the kids loved it.",
                "Pool was fantastic, warm water and a swim-up area for the grown-ups.",
            ],
        },
        "beach": {
            "positive": [
                "The beach is stunning, turquoise water and white sand right in front of the rooms.",
                "Loungers and umbrellas on the beach are free and there are always enough.",
            ],
        },
        "view": {
            "positive": [
                "Our ocean view room was worth every penny, we watched the sunrise every single day.",
            ],
        },
    },
)

PROFILES = (CITY_HOTEL, BEACH_RESORT)


def build_entity(profile: Profile, rng: random.Random) -> dict[str, object]:
    """Compose every review of one sample entity."""
    n = profile.n_reviews
    per_review: list[list[Mention]] = [[] for _ in range(n)]
    for aspect, (side, prevalence, strength) in profile.planted.items():
        count = round(prevalence * n)
        agree = round(strength * count)
        majority: Sentiment = 1 if side == "pros" else -1
        minority: Sentiment = -1 if side == "pros" else 1
        for k, index in enumerate(rng.sample(range(n), count)):
            per_review[index].append(Mention(aspect, majority if k < agree else minority))
    unplanted = sorted(a for a in ASPECTS if a not in profile.planted)
    composer = ReviewComposer(
        rng, sentences_per_review=(1, 28), mean_sentences=7.0, extra=profile.extra, extra_share=0.45
    )
    reviews = []
    for index, mentions in enumerate(per_review):
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            sentiment: Sentiment = rng.choice((1, -1, 0))
            mentions.append(Mention(rng.choice(unplanted), sentiment))
        review_id = profile.entity_id * 10000 + index + 1
        reviews.append(composer.compose(review_id, mentions, critical=profile.critical.get(index)))
    return {
        "entity_id": profile.entity_id,
        "entity_name": profile.name,
        "expert_review": {"pros": profile.pros, "cons": profile.cons},
        "user_reviews": reviews,
    }


def main(argv: list[str]) -> int:
    """Write the sample dataset and print a short summary."""
    output = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUTPUT
    rng = random.Random(SEED)
    entities = [build_entity(profile, rng) for profile in PROFILES]
    for record in entities:
        Entity.model_validate(record)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(json.dumps(entities, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(output)
    reviews = sum(len(e["user_reviews"]) for e in entities)  # type: ignore[arg-type]
    print(f"wrote {output} ({len(entities)} entities, {reviews} reviews, {output.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
