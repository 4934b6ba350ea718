"""Fine-tuned top encoder layers of the triplet head: training-time features equal inference-time ones.

A tiny random BERT (2 layers, 16 wide) is built under tmp_path, so nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opinio_agents.errors import ConfigError

pytestmark = pytest.mark.slow  # builds and loads a (tiny) transformer model


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from opinio_agents.triplets.features import load_encoder

    torch.manual_seed(0)
    base = tmp_path_factory.mktemp("tiny-bert")
    words = "the staff was friendly room dirty view nice but shower leaked".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *"abcdefghijklmnopqrstuvwxyz.,!"]
    (base / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(base / "vocab.txt")).save_pretrained(base)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(base)
    return load_encoder(str(base))


SENTENCES = [["The", "staff", "was", "friendly", "."], ["Nice", "view", "but", "the", "shower", "leaked", "!"]]


def test_encoder_top_reproduces_encode_words(tiny_encoder):
    import torch

    from opinio_agents.triplets.features import encode_words
    from opinio_agents.triplets.finetune import EncoderTop, piece_features, top_layer_indices

    trained = top_layer_indices(2, 1)
    assert trained == (1,)
    layers = (1, 2)
    reference = encode_words(tiny_encoder, SENTENCES, layers=layers)
    cached = piece_features(tiny_encoder, SENTENCES, layers=layers, first_trained=trained[0])
    top = EncoderTop(tiny_encoder, trained, layers).eval()
    with torch.no_grad():
        batch, mask = top(cached)
    for row, ref in enumerate(reference):
        assert int(mask[row].sum()) == len(SENTENCES[row])
        assert torch.allclose(batch[row, : len(SENTENCES[row])], ref, atol=1e-5)
    assert all(p.requires_grad for p in top.parameters())
    with pytest.raises(ConfigError, match="finetune_layers"):
        top_layer_indices(2, 3)
    with pytest.raises(ConfigError, match="top ones"):
        EncoderTop(tiny_encoder, (0,), layers)


def test_tuned_encoder_carries_the_trained_layers(tiny_encoder, tmp_path: Path):
    import torch
    from safetensors.torch import save_file

    from opinio_agents.triplets.features import encode_words
    from opinio_agents.triplets.finetune import EncoderTop, piece_features, tuned_encoder

    layers = (1, 2)
    top = EncoderTop(tiny_encoder, (1,), layers)
    with torch.no_grad():
        for param in top.parameters():
            param.add_(0.1 * torch.randn_like(param))  # stands in for training
    top.eval()
    save_file({k: v.contiguous() for k, v in top.hf_state_dict().items()}, str(tmp_path / "top.safetensors"))
    before = encode_words(tiny_encoder, SENTENCES, layers=layers)
    tuned = tuned_encoder(tiny_encoder, tmp_path / "top.safetensors", (1,))
    after = encode_words(tuned, SENTENCES, layers=layers)
    with torch.no_grad():
        batch, _ = top(piece_features(tiny_encoder, SENTENCES, layers=layers, first_trained=1))
    for row, feats in enumerate(after):
        assert torch.allclose(batch[row, : len(SENTENCES[row])], feats, atol=1e-5)
        assert not torch.allclose(before[row], feats, atol=1e-3)  # the shared encoder is left as it was
    again = encode_words(tiny_encoder, SENTENCES, layers=layers)
    assert all(torch.equal(a, b) for a, b in zip(before, again, strict=True))
    with pytest.raises(ConfigError, match="does not match"):
        tuned_encoder(tiny_encoder, tmp_path / "top.safetensors", (0,))
    with pytest.raises(ConfigError, match="not found"):
        tuned_encoder(tiny_encoder, tmp_path / "missing.safetensors", (1,))


def test_encode_words_extra_layers_concatenate_a_second_group(tiny_encoder):
    import torch

    from opinio_agents.triplets.features import encode_words

    top = encode_words(tiny_encoder, SENTENCES, layers=(1, 2))
    low = encode_words(tiny_encoder, SENTENCES, layers=(0,))
    both = encode_words(tiny_encoder, SENTENCES, layers=(1, 2), extra_layers=(0,))
    for t, lo, b in zip(top, low, both, strict=True):
        assert b.shape == (t.shape[0], 32)
        assert torch.allclose(b, torch.cat([t, lo], dim=-1), atol=1e-6)
    with pytest.raises(ConfigError, match="layers must be"):
        encode_words(tiny_encoder, SENTENCES, extra_layers=(7,))


def test_refit_trains_every_seed_with_the_calibration_of_the_calibration_seeds(tiny_encoder, tmp_path: Path):
    from opinio_agents.triplets.head import HeadConfig
    from opinio_agents.triplets.training import DATASETS, TrainConfig, train_ensemble

    lines = [
        f"The staff was friendly {i} .####[([1], [3], 'POS')]" for i in range(12)
    ] + [f"The room was dirty {i} .####[([1], [3], 'NEG')]" for i in range(12)]
    for name in DATASETS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "train_triplets.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tmp_path / name / "dev_triplets.txt").write_text(
            "Nice view but the shower leaked .####[([4], [5], 'NEG')]\n", encoding="utf-8"
        )
    config = TrainConfig(
        epochs=1, threads=1, holdout_fraction=0.3, epoch_selection="last", refit=True,
        head=HeadConfig(encoder_layers=(1, 2), enc_dim=16, hidden=16, span_dim=8, pair_hidden=8),
    )
    logged: list[str] = []
    heads, report = train_ensemble(
        tmp_path, config, [1, 2, 3], encoder=tiny_encoder, cache_dir=tmp_path / "cache",
        log=logged.append, calibration_seeds=[2],
    )
    assert len(heads) == 3 and report["calibration_seeds"] == [2]
    assert [m["seed"] for m in report["members"]] == [1, 2, 3]
    assert "history" in report["members"][1] and "history" not in report["members"][0]
    assert all("refit_history" in m for m in report["members"])
    assert sum("refit on" in line for line in logged) == 3
    assert sum("best epoch" in line for line in logged) == 1  # one held-out fit, for seed 2
    assert report["calibration"]["on"] == "held-out train slice"


def test_unscored_epochs_keep_the_last_epoch_and_the_same_weights(tiny_encoder, tmp_path: Path):
    from opinio_agents.triplets.head import HeadConfig
    from opinio_agents.triplets.training import DATASETS, TrainConfig, train_ensemble

    lines = [f"The staff was friendly {i} .####[([1], [3], 'POS')]" for i in range(8)]
    for name in DATASETS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "train_triplets.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tmp_path / name / "dev_triplets.txt").write_text("The bed was hard .####[([1], [3], 'NEG')]\n")
    head = HeadConfig(encoder_layers=(1, 2), enc_dim=16, hidden=16, span_dim=8, pair_hidden=8)
    runs = {}
    for scored in (True, False):
        logged: list[str] = []
        config = TrainConfig(epochs=2, threads=1, holdout_fraction=0.3, epoch_selection="last",
                             calibrate=False, score_epochs=scored, head=head)
        heads, report = train_ensemble(tmp_path, config, [1], encoder=tiny_encoder,
                                       cache_dir=tmp_path / "cache", log=logged.append)
        runs[scored] = heads[0].state_dict()
        epochs = [line for line in logged if line.startswith("epoch")]
        assert len(epochs) == 2 and ("F1" in epochs[0]) is scored
        assert report["best_epoch"] == 2
    import torch

    assert all(torch.equal(runs[True][k], runs[False][k]) for k in runs[True])  # scoring changes nothing
