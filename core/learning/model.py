"""A nanoGPT-style character transformer in one file, with a KV cache for incremental decoding.

Pre-LayerNorm blocks, output head tied to the token embedding, and one of two position schemes:
a learned table of absolute positions (nanoGPT's), or rotary embeddings (RoPE) that rotate queries and
keys by their position, so attention depends on offsets and a copying head works alike at every offset. `forward` with a
`KVCache` appends the new positions' keys and values, so decoding one more token costs one
position, not the whole sequence.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

from breadth.core.world.runs.settings import POSITIONS, ModelShape
from breadth.core.world.text.vocab import VOCAB_SIZE


@dataclass
class GPTConfig:
    """Shape of the model."""

    vocab_size: int = VOCAB_SIZE  # characters in the vocabulary (core.world.text.vocab)
    block_size: int = ModelShape.block_size  # longest sequence (context) in tokens: an episode's limit
    n_layer: int = ModelShape.n_layer  # transformer blocks (the defaults are the shape pre-training makes)
    n_head: int = ModelShape.n_head  # attention heads per block
    n_embd: int = ModelShape.n_embd  # residual stream width
    dropout: float = 0.0  # dropout in attention, MLP and embeddings while training
    position: str = ModelShape.position  # "learned": absolute position table; "rope": rotary embeddings in attention

    def to_dict(self) -> dict:
        """Plain fields, for checkpoint metadata."""
        return asdict(self)


class KVCache:
    """Keys and values of every layer for the positions decoded so far, for a fixed batch."""

    def __init__(self, config: GPTConfig, batch: int):
        hs = config.n_embd // config.n_head
        shape = (config.n_layer, batch, config.n_head, config.block_size, hs)
        self.k = torch.zeros(shape)  # (L, B, nh, T_max, hs)
        self.v = torch.zeros(shape)
        self.pos = 0  # positions already filled

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new positions' k, v (B, nh, T, hs) for `layer`; return all k, v so far."""
        end = self.pos + k.size(2)
        self.k[layer, :, :, self.pos : end] = k
        self.v[layer, :, :, self.pos : end] = v
        return self.k[layer, :, :, :end], self.v[layer, :, :, :end]


def rotary_tables(config: GPTConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (block_size, head_size / 2) of RoPE's rotation angles, base 10,000."""
    hs = config.n_embd // config.n_head
    freqs = 1.0 / (10_000 ** (torch.arange(0, hs - 1, 2, dtype=torch.float32) / hs))  # (hs/2,)
    angles = torch.outer(torch.arange(config.block_size, dtype=torch.float32), freqs)  # (T_max, hs/2)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (B, nh, T, hs) with each pair of halves rotated by its position's angles cos, sin (T, hs/2)."""
    half = x.size(-1) // 2
    x1, x2 = x[..., :half], x[..., half : 2 * half]
    rotated = torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return torch.cat((rotated, x[..., 2 * half :]), dim=-1)  # an odd head size keeps its last channel


class CausalSelfAttention(nn.Module):
    """Multi-head masked self-attention."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.n_head <= 0 or config.n_embd % config.n_head:
            raise ValueError(f"n_embd {config.n_embd} is not a multiple of n_head {config.n_head}")
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.dropout = config.dropout

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0, rope=None) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        if rope is not None:  # (cos, sin) of these T positions
            q, k = rotate(q, *rope), rotate(k, *rope)
        p = self.dropout if self.training else 0.0
        if cache is None:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            start = cache.pos
            k, v = cache.update(layer, k, v)  # (B, nh, start+T, hs)
            if T == 1:  # one new position sees every key so far: no mask (SDPA's fused kernel, not its math path)
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            elif start == 0:  # a prompt fed at once: plain causal attention
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            else:  # query i (at position start+i) sees keys 0..start+i
                mask = torch.ones(T, start + T, dtype=torch.bool).tril(diagonal=start)
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward layer, 4x wide."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    """Pre-LayerNorm transformer block."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0, rope=None) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), cache, layer, rope)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """The language model: token (and learned position) embeddings, blocks, final norm, tied head."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.position not in POSITIONS:
            raise ValueError(f"position must be one of {', '.join(POSITIONS)}, not {config.position!r}")
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd) if config.position == "learned" else None
        if config.position == "rope":  # derived from the shape, so not saved with the weights
            cos, sin = rotary_tables(config)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # tied output embedding
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def set_dropout(self, p: float) -> None:
        """Set every dropout probability in the model (and in its config, so checkpoints record it)."""
        self.config.dropout = p
        for m in self.modules():
            if isinstance(m, nn.Dropout):
                m.p = p
            elif isinstance(m, CausalSelfAttention):
                m.dropout = p  # the attention's own dropout, passed to scaled_dot_product_attention

    def num_params(self) -> int:
        """Trainable parameters (the tied head counted once)."""
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, cache: KVCache | None = None):
        """Logits (B, T, vocab) for ids (B, T); with targets, also the mean loss over targets != -1.

        With a cache, idx holds the next T positions after those already cached, and the cache advances.
        """
        B, T = idx.size()
        start = cache.pos if cache is not None else 0
        assert start + T <= self.config.block_size, "sequence longer than the context"
        x = self.wte(idx)  # (B, T, C)
        rope = None
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(start, start + T))
        else:
            rope = (self.rope_cos[start : start + T], self.rope_sin[start : start + T])  # (T, hs/2) each
        x = self.drop(x)
        for i, block in enumerate(self.blocks):
            x = block(x, cache, i, rope)
        if cache is not None:
            cache.pos += T
        logits = self.head(self.ln_f(x))  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)
        return logits, loss
