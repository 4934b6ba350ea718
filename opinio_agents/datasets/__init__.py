"""Datasets shipped with opinio_agents: the sample OpinioBank file and a synthetic generator.

Example:
    >>> from opinio_agents.datasets import generate_dataset, load_sample
    >>> len(load_sample()) >= 2
    True
    >>> data = generate_dataset(n_entities=1, reviews_per_entity=20, seed=0)
    >>> len(data.entities[0].user_reviews)
    20
"""

from typing import Any

from opinio_agents.datasets.phrases import mentions
from opinio_agents.datasets.sample import load_sample, sample_path, write_sample
from opinio_agents.datasets.synthetic import (
    PlantedOpinion,
    SyntheticDataset,
    generate_dataset,
    iter_synthetic,
    truth_path,
    write_synthetic,
)

__all__ = [
    "ASPECTS",
    "mentions",
    "sample_path",
    "load_sample",
    "write_sample",
    "PlantedOpinion",
    "SyntheticDataset",
    "generate_dataset",
    "iter_synthetic",
    "write_synthetic",
    "truth_path",
]


def __getattr__(name: str) -> Any:
    """``ASPECTS`` comes from the phrase bank, which is read on first use (not at import)."""
    if name == "ASPECTS":
        from opinio_agents.datasets import phrases

        return phrases.ASPECTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
