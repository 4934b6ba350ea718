"""The trainable triplet head on top of frozen encoder word features.

Architecture (about 1.2M parameters, 1.6M with the BiLSTM):

1. projection of the (pre-averaged) frozen encoder word features;
2. two residual 1-D convolution blocks (kernel 3) over words, optionally
   followed by a residual bidirectional LSTM (sentence-wide context);
3. two BIO taggers (aspect spans, opinion spans);
4. span representations ``[h_first; h_last; mean(h_first..last)]`` projected
   separately for aspects and opinions;
5. a pair classifier over ``[a; o; a*o; mean of the words between them;
   distance bucket; order]`` -> {none, NEG, NEU, POS};
6. an opinion-polarity classifier (used for opinions without an aspect, i.e.
   implicit aspects).

Import this module only when torch is wanted (it defines ``nn.Module`` s).

Example:
    >>> import torch
    >>> head = TripletHead(HeadConfig())
    >>> h = head.encode(torch.zeros(1, 4, 384), torch.ones(1, 4, dtype=torch.bool))
    >>> tuple(h.shape)
    (1, 4, 256)
"""

from __future__ import annotations

import torch
from torch import nn

from opinio_agents.triplets.headconfig import (
    _DIST_EDGES,
    PAIR_LABELS,
    HeadConfig,
    distance_bucket,
    pair_geometry,
)

__all__ = ["HeadConfig", "TripletHead", "PAIR_LABELS", "distance_bucket"]


def _range_mean(
    states: torch.Tensor, rows: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor
) -> torch.Tensor:
    """Mean of ``states[row, lo:hi]`` per item (zeros for empty ranges), via prefix sums."""
    prefix = torch.cat([states.new_zeros(states.shape[0], 1, states.shape[2]), states.cumsum(1)], 1)
    total = prefix[rows, hi] - prefix[rows, lo]
    count = (hi - lo).clamp(min=1).unsqueeze(-1).to(states.dtype)
    return total / count


class _ConvBlock(nn.Module):
    """Residual 1-D convolution over words (padding masked out)."""

    def __init__(self, dim: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2)
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        y = self.conv((x * mask.unsqueeze(-1)).transpose(1, 2)).transpose(1, 2)
        return self.norm(x + self.drop(nn.functional.gelu(y)))


class TripletHead(nn.Module):
    """Convolutional tagger + span-pair classifier over frozen word features."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        hid = c.hidden
        self.proj = nn.Linear(c.enc_dim * (2 if c.extra_layers else 1), hid)
        self.drop = nn.Dropout(c.dropout)
        self.convs = nn.ModuleList(
            _ConvBlock(hid, c.kernel_size, c.dropout) for _ in range(c.conv_layers)
        )
        self.lstm = (
            nn.LSTM(hid, hid // 2, num_layers=c.lstm_layers, batch_first=True, bidirectional=True)
            if c.lstm_layers > 0
            else None
        )
        self.lstm_norm = nn.LayerNorm(hid) if c.lstm_layers > 0 else None
        self.aspect_tagger = nn.Linear(hid, 3)
        self.opinion_tagger = nn.Linear(hid, 3)
        self.aspect_span = nn.Sequential(nn.Linear(3 * hid, c.span_dim), nn.GELU())
        self.opinion_span = nn.Sequential(nn.Linear(3 * hid, c.span_dim), nn.GELU())
        self.dist_emb = nn.Embedding(len(_DIST_EDGES), 32)
        self.order_emb = nn.Embedding(2, 8)
        self.between = nn.Linear(hid, c.span_dim)
        self.pair_mlp = nn.Sequential(
            nn.Linear(4 * c.span_dim + 32 + 8, c.pair_hidden),
            nn.GELU(),
            nn.Dropout(c.dropout),
            nn.Linear(c.pair_hidden, len(PAIR_LABELS)),
        )
        self.opinion_polarity = nn.Linear(c.span_dim, 3)

    def encode(self, feats: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Contextual word states.

        Args:
            feats: ``(B, T, enc_dim)`` encoder features (``2 * enc_dim`` with ``extra_layers``).
            mask: ``(B, T)`` bool, True for real words.

        Returns:
            ``(B, T, hidden)``.
        """
        x = self.drop(nn.functional.gelu(self.proj(feats)))
        for conv in self.convs:
            x = conv(x, mask)
        if self.lstm is not None and self.lstm_norm is not None:
            lengths = mask.sum(1).clamp(min=1).cpu()
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, _ = self.lstm(packed)
            y, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
            x = self.lstm_norm(x + self.drop(y))
        return x * mask.unsqueeze(-1)

    def tag_logits(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Aspect and opinion BIO logits, each ``(B, T, 3)``."""
        return self.aspect_tagger(states), self.opinion_tagger(states)

    @staticmethod
    def _span_vectors(
        states: torch.Tensor, rows: list[int], spans: list[tuple[int, int]]
    ) -> torch.Tensor:
        device = states.device
        r = torch.tensor(rows, device=device)
        first = torch.tensor([s[0] for s in spans], device=device)
        last = torch.tensor([s[1] for s in spans], device=device)
        return torch.cat(
            [states[r, first], states[r, last], _range_mean(states, r, first, last + 1)], -1
        )

    def aspect_vectors(
        self, states: torch.Tensor, rows: list[int], spans: list[tuple[int, int]]
    ) -> torch.Tensor:
        """Aspect span representations ``(N, span_dim)``."""
        return self.aspect_span(self._span_vectors(states, rows, spans))

    def opinion_vectors(
        self, states: torch.Tensor, rows: list[int], spans: list[tuple[int, int]]
    ) -> torch.Tensor:
        """Opinion span representations ``(N, span_dim)``."""
        return self.opinion_span(self._span_vectors(states, rows, spans))

    def pair_logits(
        self,
        states: torch.Tensor,
        rows: list[int],
        aspects: list[tuple[int, int]],
        opinions: list[tuple[int, int]],
    ) -> torch.Tensor:
        """Pair-class logits ``(N, 4)`` for aligned lists of (row, aspect span, opinion span)."""
        a = self.aspect_vectors(states, rows, aspects)
        o = self.opinion_vectors(states, rows, opinions)
        lo, hi, dists, orders = pair_geometry(aspects, opinions)
        device = states.device
        r = torch.tensor(rows, device=device)
        between = _range_mean(
            states, r, torch.tensor(lo, device=device), torch.tensor(hi, device=device)
        )
        feats = torch.cat(
            [
                a,
                o,
                a * o,
                self.between(between),
                self.dist_emb(torch.tensor(dists, device=device)),
                self.order_emb(torch.tensor(orders, device=device)),
            ],
            dim=-1,
        )
        return self.pair_mlp(feats)

    def opinion_polarity_logits(
        self, states: torch.Tensor, rows: list[int], opinions: list[tuple[int, int]]
    ) -> torch.Tensor:
        """Opinion sentiment logits ``(N, 3)`` over (NEG, NEU, POS)."""
        return self.opinion_polarity(self.opinion_vectors(states, rows, opinions))
