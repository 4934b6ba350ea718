"""Reference-based metrics against the expert PROS/CONS (OpinioRAG Table 2, Sec. 6).

* :func:`side_texts` turns a :class:`~opinio_agents.models.HighlightSet` and an
  :class:`~opinio_agents.models.ExpertReview` into one system text and one
  reference text per side (highlights joined by newlines, in order), the unit
  of Table 2: the PROS of a system are compared with the expert PROS, the CONS
  with the expert CONS.
* :func:`rouge_side_scores` gives ROUGE-1/2/L F1 per side (our implementation,
  equal to ``rouge_score``'s); :class:`BertScoreMetric` adds BERTScore F1 with a
  local model (MiniLM, 6 layers, by default; ``bert-score`` from the ``eval``
  extra; no baseline rescaling).
* :func:`sentiment_alignment` is Sec. 6's TPR/TNR with a pluggable classifier (offline
  default: :class:`ScorerClassifier`, the blended MiniLM-head + VADER scorer used at
  indexing; a local SiEBERT-like model via :class:`TransformersSentimentClassifier`).

Example:
    >>> from opinio_agents.models import ExpertReview, HighlightSet, Highlight, Polarity
    >>> pro = Highlight(query="wifi", polarity=Polarity.PROS, text="Fast wifi.")
    >>> hs = HighlightSet(entity_id=1, pros=[pro])
    >>> side_texts(hs, ExpertReview(pros={"wifi": "The wifi is fast."}))["pros"]
    ('Fast wifi.', 'The wifi is fast.')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.evaluation.rouge import rouge_scores
from opinio_agents.models import SENTIMENT_THRESHOLD, ExpertReview, HighlightSet, Polarity

__all__ = [
    "side_texts",
    "rouge_side_scores",
    "BertScoreMetric",
    "SentimentClassifier",
    "ScorerClassifier",
    "VaderClassifier",
    "default_classifier",
    "TransformersSentimentClassifier",
    "AlignmentCounts",
    "sentiment_alignment",
]

def side_texts(result: HighlightSet, expert: ExpertReview) -> dict[str, tuple[str, str]]:
    """``{polarity value: (system_text, reference_text)}`` for the polarities the expert annotated."""
    out: dict[str, tuple[str, str]] = {}
    for side in (p.value for p in Polarity):
        reference = list(getattr(expert, side).values())
        if not reference:
            continue
        system = [h.text for h in getattr(result, side)]
        out[side] = ("\n".join(system), "\n".join(reference))
    return out


def rouge_side_scores(
    result: HighlightSet, expert: ExpertReview, *, use_stemmer: bool = True
) -> dict[str, dict[str, float]]:
    """``{side: {"R1", "R2", "RL"}}`` F1 x 100 for each annotated side (0 when a side is empty).

    Example:
        >>> from opinio_agents.models import HighlightSet
        >>> expert = ExpertReview(cons={"noise": "Noisy street."})
        >>> rouge_side_scores(HighlightSet(entity_id=1), expert)
        {'cons': {'R1': 0.0, 'R2': 0.0, 'RL': 0.0}}
    """
    out: dict[str, dict[str, float]] = {}
    for side, (system, reference) in side_texts(result, expert).items():
        scores = rouge_scores(
            system, reference, rouge_types=("rouge1", "rouge2", "rougeL"), use_stemmer=use_stemmer
        )
        out[side] = {
            "R1": 100 * scores["rouge1"].fmeasure,
            "R2": 100 * scores["rouge2"].fmeasure,
            "RL": 100 * scores["rougeL"].fmeasure,
        }
    return out


class BertScoreMetric:
    """BERTScore F1 (x 100) with a local model, fully offline.

    Args:
        model_path: A local Hugging Face model directory; the shipped
            all-MiniLM-L6-v2 when ``None``.
        num_layers: Which hidden layer's embeddings to use (6 = MiniLM's last).
        batch_size: Pairs per forward pass.

    Raises:
        MissingDependencyError: On first use when ``bert-score`` is not installed.

    Example:
        >>> metric = BertScoreMetric()                                    # doctest: +SKIP
        >>> metric.f1(["Fast wifi."], ["The wifi is fast."])              # doctest: +SKIP
        [71.3]
    """

    def __init__(
        self, model_path: str | Path | None = None, *, num_layers: int = 6, batch_size: int = 16
    ) -> None:
        self.model_path = model_path
        self.num_layers = num_layers
        self.batch_size = batch_size
        self._scorer: Any = None

    @staticmethod
    def available() -> bool:
        """Whether ``bert-score`` is importable."""
        import importlib.util

        return importlib.util.find_spec("bert_score") is not None

    def _get(self) -> Any:
        if self._scorer is None:
            try:
                from bert_score import BERTScorer
            except ImportError as exc:
                raise MissingDependencyError(
                    "bert-score", extra="eval", purpose="BERTScore"
                ) from exc
            from opinio_agents.embeddings import default_model_path

            path = Path(self.model_path) if self.model_path is not None else default_model_path()
            if not path.is_dir():
                raise ConfigError(
                    f"BERTScore model_path={str(path)!r} is not a directory of a local model"
                )
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            self._scorer = BERTScorer(
                model_type=str(path), num_layers=self.num_layers, batch_size=self.batch_size
            )
        return self._scorer

    def f1(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 x 100 of each prediction/reference pair (0 for an empty prediction)."""
        if len(predictions) != len(references):
            raise ConfigError(f"{len(predictions)} predictions but {len(references)} references")
        keep = [i for i, p in enumerate(predictions) if p.strip() and references[i].strip()]
        out = [0.0] * len(predictions)
        if keep:
            _, _, f = self._get().score(
                [predictions[i] for i in keep], [references[i] for i in keep]
            )
            for i, value in zip(keep, f.tolist(), strict=False):
                out[i] = 100 * float(value)
        return out


#: ``classifier(texts) -> one label per text in {-1, 0, 1}``.
SentimentClassifier = Callable[[Sequence[str]], list[int]]


class ScorerClassifier:
    """Labels from a sentiment scorer's score in [-1, 1], thresholded at +-``threshold``.

    The default scorer is the library's offline blended scorer (MiniLM sentiment
    head + review-tuned VADER), the same one that scores sentences at indexing
    time, so baseline labels and TPR/TNR agree.

    Args:
        scorer: Any object with ``score(texts) -> list[float]``.
        threshold: Scores within +-threshold are neutral.

    Example:
        >>> ScorerClassifier()(["Spotless room!", "Rude staff."])       # doctest: +SKIP
        [1, -1]
    """

    def __init__(self, scorer: Any | None = None, *, threshold: float = SENTIMENT_THRESHOLD) -> None:
        self._scorer = scorer
        self.threshold = threshold

    @property
    def scorer(self) -> Any:
        """The underlying scorer (the blended one unless given)."""
        if self._scorer is None:
            from opinio_agents.text.sentiment_head import BlendedSentimentScorer

            self._scorer = BlendedSentimentScorer()
        return self._scorer

    def __call__(self, texts: Sequence[str]) -> list[int]:
        """Labels -1/0/1 of the texts."""
        from opinio_agents.text.sentiment import sentiment_label

        if not texts:
            return []
        return [sentiment_label(s, self.threshold) for s in self.scorer.score(list(texts))]


class VaderClassifier(ScorerClassifier):
    """The review-tuned VADER alone (no model at all), thresholded at +-0.05.

    Example:
        >>> VaderClassifier()(["Spotless room!", "Rude staff."])
        [1, -1]
    """

    def __init__(self, *, threshold: float = SENTIMENT_THRESHOLD) -> None:
        from opinio_agents.text.sentiment import default_sentiment_scorer

        super().__init__(default_sentiment_scorer(), threshold=threshold)


def default_classifier() -> SentimentClassifier:
    """The offline default: :class:`ScorerClassifier` over the blended indexing-time scorer."""
    return ScorerClassifier()


class TransformersSentimentClassifier:
    """A local transformers sentiment model (e.g. a SiEBERT copy on disk), never downloaded.

    Labels containing ``NEG`` map to -1, ``POS`` to 1, anything else to 0
    (SiEBERT's ``NEGATIVE``/``POSITIVE``; ``LABEL_0``/``LABEL_1`` are read as
    negative/positive for two-label models).

    Args:
        model_path: Directory of a sequence-classification model.
        batch_size: Texts per forward pass.
    """

    def __init__(self, model_path: str | Path, *, batch_size: int = 32) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_dir():
            raise ConfigError(
                f"sentiment model path {str(self.model_path)!r} is not a directory; pass a local "
                "transformers model (models are never downloaded)"
            )
        self.batch_size = batch_size
        self._pipe: Any = None

    def __call__(self, texts: Sequence[str]) -> list[int]:
        """Labels -1/0/1 of the texts."""
        if not texts:
            return []
        if self._pipe is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from transformers import pipeline

            self._pipe = pipeline("text-classification", model=str(self.model_path), device="cpu")
        out: list[int] = []
        for pred in self._pipe(list(texts), batch_size=self.batch_size, truncation=True):
            label = str(pred["label"]).upper()
            out.append(
                -1
                if "NEG" in label or label == "LABEL_0"
                else 1
                if "POS" in label or label == "LABEL_1"
                else 0
            )
        return out


@dataclass
class AlignmentCounts:
    """TPR/TNR counts: expert PROS matched by positive system text, CONS by negative."""

    positives: int = 0
    true_positives: int = 0
    negatives: int = 0
    true_negatives: int = 0

    @property
    def tpr(self) -> float | None:
        """True positive rate x 100 (None without expert PROS)."""
        return 100 * self.true_positives / self.positives if self.positives else None

    @property
    def tnr(self) -> float | None:
        """True negative rate x 100 (None without expert CONS)."""
        return 100 * self.true_negatives / self.negatives if self.negatives else None

    def add(self, other: AlignmentCounts) -> AlignmentCounts:
        """Sum of two count sets."""
        return AlignmentCounts(
            self.positives + other.positives,
            self.true_positives + other.true_positives,
            self.negatives + other.negatives,
            self.true_negatives + other.true_negatives,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with the rates."""
        return {**asdict(self), "TPR": self.tpr, "TNR": self.tnr}


def _text_for(result: HighlightSet, query: str, side: Polarity) -> str | None:
    """The system's text for ``query``: its own polarity first, else the other one, else None."""
    bank = result.to_opiniobank()
    other = Polarity.CONS if side is Polarity.PROS else Polarity.PROS
    return bank[side.value].get(query) or bank[other.value].get(query)


def sentiment_alignment(
    result: HighlightSet,
    expert: ExpertReview,
    classifier: SentimentClassifier,
) -> AlignmentCounts:
    """Sec. 6 sentiment alignment of one entity's highlights with the expert's.

    Each expert PRO (query ``q``) is a positive: it is a *true positive* when the
    system's text for ``q`` on the PROS side (or, if it only has a CON for
    ``q``, that CON) is classified positive. Expert CONS and true negatives
    likewise with negative. A query the system says nothing about counts as a
    miss. ``TPR = TP / #expert PROS``, ``TNR = TN / #expert CONS``.

    Example:
        >>> from opinio_agents.models import Highlight, Polarity
        >>> con = Highlight(query="wifi", polarity=Polarity.CONS, text="Wifi kept dropping.")
        >>> expert = ExpertReview(cons={"wifi": "Unreliable wifi."})
        >>> result = HighlightSet(entity_id=1, cons=[con])
        >>> sentiment_alignment(result, expert, lambda t: [-1] * len(t)).tnr
        100.0
    """
    counts = AlignmentCounts()
    jobs: list[tuple[Polarity, str | None]] = [
        (side, _text_for(result, query, side)) for side in Polarity for query in getattr(expert, side.value)
    ]
    texts = [text for _, text in jobs if text]
    labels = iter(classifier(texts)) if texts else iter(())
    for side, text in jobs:
        label = next(labels) if text else None
        if side is Polarity.PROS:
            counts.positives += 1
            counts.true_positives += int(label == 1)
        else:
            counts.negatives += 1
            counts.true_negatives += int(label == -1)
    return counts
