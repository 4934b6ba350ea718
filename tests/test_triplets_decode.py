"""Tests of the triplet decoding extras: marginal spans, overlap resolution, ensembles, held-out split."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from opinio_agents.errors import ConfigError  # noqa: E402
from opinio_agents.triplets.aste import parse_aste_line  # noqa: E402
from opinio_agents.triplets.decode import (  # noqa: E402
    DecodeSettings,
    as_heads,
    candidate_spans,
    marginal_spans,
    predict_spans,
    resolve_overlaps,
    select_pairs,
)
from opinio_agents.triplets.head import HeadConfig, TripletHead  # noqa: E402


def _log_probs(rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(rows).log()


def _tiny_head(seed: int = 0, **kwargs) -> TripletHead:
    torch.manual_seed(seed)
    config = HeadConfig(enc_dim=8, hidden=16, span_dim=16, pair_hidden=16, dropout=0.0, **kwargs)
    return TripletHead(config).eval()


def test_marginal_spans_probabilities_by_hand():
    # words: O-ish, B-ish, half I / half O
    lp = _log_probs([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]])
    spans = dict(marginal_spans(lp, threshold=0.001))
    # P(B_1) * (1 - P(I_2)) and P(B_1) * P(I_2) (sentence end closes it)
    assert spans[(1, 1)] == pytest.approx(0.8 * 0.6, rel=1e-4)
    assert spans[(1, 2)] == pytest.approx(0.8 * 0.4, rel=1e-4)
    assert spans[(0, 0)] == pytest.approx(0.05 * 0.9, rel=1e-4)
    assert spans[(0, 2)] == pytest.approx(0.05 * 0.1 * 0.4, rel=1e-4)
    ordered = marginal_spans(lp, threshold=0.3)
    assert [s for s, _ in ordered] == [(1, 1), (1, 2)]  # most probable first
    assert marginal_spans(lp, threshold=1.01) == []
    assert (1, 2) not in dict(marginal_spans(lp, threshold=0.01, max_words=1))


def test_candidate_spans_bio_first_then_extras_and_cap():
    lp = _log_probs([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]])
    assert candidate_spans(lp) == [(1, 1)]
    assert candidate_spans(lp, span_threshold=0.3) == [(1, 1), (1, 2)]
    assert candidate_spans(lp, span_threshold=0.3, max_spans=1) == [(1, 1)]
    # a large bias makes every word part of a span; word 2 (I over B) continues word 1
    assert candidate_spans(lp, bias=5.0) == [(0, 0), (1, 2)]


def test_resolve_overlaps_keeps_the_most_probable_reading():
    pairs = [
        ((0, 0), (3, 3), 1, 0.55),  # shorter reading of the aspect, same opinion
        ((0, 1), (3, 3), 1, 0.90),
        ((0, 1), (3, 4), 1, 0.60),  # overlaps in both: dropped
        ((6, 6), (3, 3), -1, 0.70),  # other aspect, same opinion: kept (one-to-many)
        ((0, 1), (8, 8), 1, 0.65),  # same aspect, other opinion: kept
    ]
    kept = resolve_overlaps(pairs)
    assert [p[:2] for p in kept] == [((0, 1), (3, 3)), ((6, 6), (3, 3)), ((0, 1), (8, 8))]


def test_select_pairs_threshold_sentiment_and_rows():
    probs = torch.tensor(
        [
            [0.2, 0.7, 0.05, 0.05],  # kept, NEG
            [0.6, 0.1, 0.1, 0.2],  # none too likely at 0.5
            [0.1, 0.0, 0.8, 0.1],  # kept, NEU, second sentence
        ]
    )
    rows, aspects, opinions = [0, 0, 1], [(0, 0), (1, 1), (2, 2)], [(3, 3), (3, 3), (0, 0)]
    found = select_pairs(rows, aspects, opinions, probs, 2, 0.5)
    assert found == [[((0, 0), (3, 3), -1, 0.8)], [((2, 2), (0, 0), 0, 0.9)]]
    looser = select_pairs(rows, aspects, opinions, probs, 2, 0.7)
    assert len(looser[0]) == 2 and looser[0][1][2] == 1
    assert select_pairs([], [], [], torch.zeros(0, 4), 3, 0.5) == [[], [], []]


def test_predict_spans_extra_spans_and_ensemble_average():
    head = _tiny_head()
    feats = [torch.randn(7, 8), torch.randn(5, 8)]
    plain = predict_spans(head, feats, implicit_aspects=False,
                          settings=DecodeSettings(aspect_bias=2.0, opinion_bias=2.0, pair_threshold=1.01))
    wide = predict_spans(head, feats, implicit_aspects=False,
                         settings=DecodeSettings(aspect_bias=2.0, opinion_bias=2.0, pair_threshold=1.01,
                                                 span_threshold=0.0))
    for p, w in zip(plain, wide, strict=True):
        assert len(w) >= len(p) >= 1
        for a, o, _ in w:  # surviving pairs never overlap in both spans
            assert sum(1 for a2, o2, _ in w if a2[0] <= a[1] and a[0] <= a2[1]
                       and o2[0] <= o[1] and o[0] <= o2[1]) == 1
    # An ensemble of one head equals the head; two copies average to the same thing.
    assert predict_spans([head], feats) == predict_spans(head, feats)
    assert predict_spans([head, head], feats) == predict_spans(head, feats)
    other = _tiny_head(seed=5)
    mixed = predict_spans([head, other], feats, settings=DecodeSettings(pair_threshold=1.01))
    assert len(mixed) == 2
    with pytest.raises(ConfigError, match="at least one"):
        as_heads([])


def test_holdout_split_is_deterministic_and_disjoint():
    from opinio_agents.triplets.training import holdout_split

    examples = [parse_aste_line(f"sentence number {i} .####[]") for i in range(300)]
    train, held = holdout_split(examples, 0.2)
    assert sorted(train + held) == list(range(300)) and not set(train) & set(held)
    assert 30 < len(held) < 90
    assert holdout_split(list(reversed(examples)), 0.2)[1] == sorted(299 - i for i in held)
    assert holdout_split(examples, 0.0) == (list(range(300)), [])
    with pytest.raises(ConfigError, match="holdout"):
        holdout_split(examples, 1.0)


def test_calibration_searches_extra_spans_and_stores_them(tmp_path):
    from opinio_agents.triplets.training import calibrate_decoding, evaluate_spans

    heads = [_tiny_head(), _tiny_head(seed=3)]
    examples = [
        parse_aste_line("Nice view here .####[([1], [0], 'POS')]"),
        parse_aste_line("Bad bed and rude staff .####[([1], [0], 'NEG'), ([4], [3], 'NEG')]"),
    ]
    torch.manual_seed(1)
    feats = [torch.randn(len(e.tokens), 8) for e in examples]
    report = calibrate_decoding(heads, feats, examples, span_thresholds=(1.01, 0.2))
    assert report["span_threshold"] in (1.01, 0.2) and report["n_sentences"] == 2
    assert report["f1"] >= report["uncalibrated_f1"]
    assert all(h.config.span_threshold == report["span_threshold"] for h in heads)
    assert evaluate_spans(heads, feats, examples).f1 == pytest.approx(report["f1"])


def test_ensemble_save_and_load_round_trip(tmp_path):
    from opinio_agents.triplets.embedded import load_head, load_heads
    from opinio_agents.triplets.training import save_head

    heads = [_tiny_head(), _tiny_head(seed=3)]
    heads[0].config.span_threshold = 0.3
    save_head(heads, {"members": [{"seed": 1, "history": [1, 2]}]}, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["members"] == ["head.safetensors", "head-1.safetensors"]
    assert "history" not in config["training"]["members"][0]
    loaded = load_heads(tmp_path)
    assert len(loaded) == 2 and loaded[0].config.span_threshold == 0.3
    assert load_head(tmp_path) is loaded[0]
    feats = [torch.randn(5, 8)]
    # float16 on disk: decoding of the reloaded ensemble matches the float16-rounded originals
    for h in heads:
        h.load_state_dict({k: v.half().float() for k, v in h.state_dict().items()})
    assert predict_spans(loaded, feats) == predict_spans(heads, feats)
    # Re-saving a single head removes the stale member file.
    single = tmp_path / "single"
    save_head(heads, {}, single)
    save_head(heads[0], {}, single)
    assert not (single / "head-1.safetensors").exists()
    assert json.loads((single / "config.json").read_text())["members"] == ["head.safetensors"]


def test_extra_layers_widen_the_head_input_and_refit_needs_the_last_epoch(tmp_path):
    from opinio_agents.triplets.training import TrainConfig, train_ensemble

    head = _tiny_head(extra_layers=(0,))
    assert head.proj.in_features == 16
    states = head.encode(torch.randn(1, 3, 16), torch.ones(1, 3, dtype=torch.bool))
    assert states.shape == (1, 3, 16)
    again = HeadConfig.from_dict(json.loads(json.dumps(head.config.to_dict())))
    assert again.extra_layers == (0,) and HeadConfig.from_dict({}).extra_layers == ()
    with pytest.raises(ConfigError, match="last"):
        train_ensemble(tmp_path, TrainConfig(refit=True), [1])
    with pytest.raises(ConfigError, match="epoch_selection"):
        train_ensemble(tmp_path, TrainConfig(epoch_selection="middle"), [1])
    with pytest.raises(ConfigError, match="at least one seed"):
        train_ensemble(tmp_path, TrainConfig(), [])
    refit = TrainConfig(refit=True, epoch_selection="last")
    with pytest.raises(ConfigError, match="needs refit"):
        train_ensemble(tmp_path, TrainConfig(), [1, 2], calibration_seeds=[1])
    with pytest.raises(ConfigError, match="subset of seeds"):
        train_ensemble(tmp_path, refit, [1, 2], calibration_seeds=[3])
    with pytest.raises(ConfigError, match="subset of seeds"):
        train_ensemble(tmp_path, refit, [1, 2], calibration_seeds=[])
