"""K GPTs of one shape as one batched model: their weights stacked on a leading K dimension, every matrix product
a batched one (`baddbmm`/`bmm`), attention written out, and dropout from one cheap draw per run and step.

The stacks are the runs' trainable weights (`stack` makes them from a model, linear weights transposed to
(K, in, out) so products and their gradients need no copies); `unstack` turns a run back into an ordinary `GPT`
that `checkpoint.save` writes. Besides the products, a step is memory-bound elementwise work, so dropout
is drawn the cheap way: per run and step one `randint` of 32-bit integers, viewed as twice as many 16-bit ones,
turned by plain float arithmetic into a mask of scales (0 or 1/(1-p)) that multiplies activations; `Dropout`
holds the masks of every site of one step. `forward` mirrors `GPT.forward` (same layout of q, k, v, same
causal attention, GELU, tied head), so at dropout 0 it computes what K separate GPTs compute, up to rounding.
`Decoder` plays K models greedily together, as `GreedyPolicy` plays one.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from breadth.core.learning.model import GPT, GPTConfig, rotate
from breadth.core.world.text.vocab import CHARS, PAD, PAD_ID, encode

Weights = dict[str, torch.Tensor]  # parameter name (as in GPT.named_parameters) -> stack (K, *shape)
_PRODUCTS = ("c_attn.weight", "c_proj.weight", "c_fc.weight")  # linear layers' weights: stacked as (K, in, out)


def _transposed(name: str) -> bool:
    """Whether the stack of parameter `name` holds its matrix transposed, as products take it: (K, in, out)."""
    return name.endswith(_PRODUCTS)


def stack(model: GPT, k: int) -> Weights:
    """K copies of `model`'s parameters as trainable stacks (leaves); linear weights transposed to (K, in, out)."""
    out = {}
    for name, p in model.named_parameters():  # the tied head is wte.weight: one stack serves both
        t = p.detach().t() if _transposed(name) else p.detach()
        out[name] = t.unsqueeze(0).repeat(k, *(1,) * t.dim()).requires_grad_()  # new memory, even for k = 1
    return out


def unstack(weights: Weights, row: int, model: GPT) -> None:
    """Copy the run in `row` of the stacks into `model`'s parameters: an ordinary GPT again."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            w = weights[name][row]
            p.copy_(w.t() if _transposed(name) else w)


def dropout_sites(config: GPTConfig, batch: int, width: int) -> int:
    """Dropout mask elements one run needs for a step on `batch` rows of `width` positions (an even number)."""
    C, nh, T = config.n_embd, config.n_head, width
    n = batch * T * C + config.n_layer * (batch * nh * T * T + 2 * batch * T * C)  # embeddings; attention, 2 residuals
    return n + n % 2


class Dropout:
    """One step's dropout masks for K runs, each drawn from its run's own generator; handed out site by site.

    Thresholds and scales are per run: a run keeps an element when its 16-bit draw is at least
    t = -32768 + round(p * 65536), so it drops with probability p (to 1/65536), and kept elements are scaled by
    1/(1-p); a run at p = 0 keeps everything unscaled. The test draw >= t is float arithmetic, exact on these whole
    numbers: draw - (t - 1) is at least 1 where kept and at most 0 where dropped, so clamped to [0, 1] it is exactly
    1 or 0 (a comparison and a bool-to-float copy cost several times these passes). `space`, a float tensor of at
    least K * n elements, holds the masks: one kept from step to step saves the page faults of fresh memory.

    Drawing 64-bit numbers (four draws each) would halve the random numbers' cost, but it is another stream whose
    paired scores (`bench.lockstep_bench --paired 10`) fell by 2-5 points where these draws' match today's loop:
    these draws stay, so lockstep runs keep their numbers.
    """

    def __init__(self, ps: list[float], generators: list[torch.Generator], n: int, space: torch.Tensor | None = None):
        if n % 2:
            raise ValueError(f"dropout masks come two to a random number: {n} is not even")
        space = torch.empty(len(ps) * n) if space is None else space
        bits = torch.empty(len(ps), n // 2, dtype=torch.int32)
        for k, g in enumerate(generators):  # one draw per run: its stream is its own
            torch.randint(-(2**31), 2**31, (n // 2,), dtype=torch.int32, generator=g, out=bits[k])
        thresholds = torch.tensor([[-32768 + round(p * 65536)] for p in ps], dtype=torch.float32)  # (K, 1)
        scales = torch.tensor([[1.0 / (1.0 - p)] for p in ps])  # (K, 1)
        self.masks = space[: len(ps) * n].view(len(ps), n)
        self.masks.copy_(bits.view(torch.int16))  # (K, n): each element's draw, -32768..32767, exactly
        self.masks.sub_(thresholds - 1).clamp_(0.0, 1.0).mul_(scales)  # 0 or 1/(1-p)
        self.used = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """x (K, ...) times the next x[0].numel() mask elements of each run."""
        K, n = x.size(0), x[0].numel()
        mask = self.masks[:, self.used : self.used + n]  # (K, n)
        self.used += n
        return (x.reshape(K, n) * mask).view(x.shape)


def _one(t: torch.Tensor) -> torch.Tensor:
    """The only run of a stack of one, as a view (its gradient flows back without the copy indexing costs)."""
    return t.view(t.shape[1:])


def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """x (K, N, in) through K linear layers of weights w (K, in, out) and biases b (K, out) -> (K, N, out)."""
    if x.size(0) == 1:  # one run: a plain product, faster than a batch of one (views, not `[0]`: no copies back)
        return torch.addmm(_one(b), _one(x), _one(w)).unsqueeze(0)
    return torch.baddbmm(b.unsqueeze(1), x, w)


def _layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """x (K, N, C) normalised per position, then each run's own gain w (K, C) and bias b (K, C)."""
    if x.size(0) == 1:
        return F.layer_norm(_one(x), x.shape[-1:], _one(w), _one(b)).unsqueeze(0)
    return torch.addcmul(b.unsqueeze(1), F.layer_norm(x, x.shape[-1:]), w.unsqueeze(1))


def forward(
    w: Weights,
    config: GPTConfig,
    idx: torch.Tensor,
    drop: Dropout | None = None,
    rope: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Logits (K, B, T, vocab) of K models for their ids idx (K, B, T); `drop` None means no dropout."""
    K, B, T = idx.shape
    C, V, nh = config.n_embd, config.vocab_size, config.n_head
    hs = C // nh
    offsets = torch.arange(K).view(K, 1, 1) * V  # run k's tokens are rows k*V.. of the stacked table
    x = F.embedding(idx + offsets, w["wte.weight"].reshape(K * V, C))  # (K, B, T, C)
    if "wpe.weight" in w:
        x = x + w["wpe.weight"][:, None, :T]  # (K, 1, T, C)
    x = x.reshape(K, B * T, C)  # (K, N, C)
    if drop is not None:
        x = drop(x)
    causal = torch.full((T, T), float("-inf")).triu(1)  # query i sees keys 0..i
    for i in range(config.n_layer):
        p = f"blocks.{i}."
        h = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = _linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"])  # (K, N, 3C)
        q, k, v = qkv.view(K * B, T, 3, nh, hs).permute(2, 0, 3, 1, 4)  # each (K*B, nh, T, hs)
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        if drop is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (K*B, nh, T, hs)
        else:  # written out, so its dropout draws from each run's own stream
            att = torch.baddbmm(causal, q.reshape(-1, T, hs), k.reshape(-1, T, hs).transpose(1, 2), alpha=hs**-0.5)
            att = drop(att.softmax(-1).view(K, B * nh, T, T))
            y = torch.bmm(att.view(-1, T, T), v.reshape(-1, T, hs)).view(K * B, nh, T, hs)
        y = y.transpose(1, 2).reshape(K, B * T, C)
        y = _linear(y, w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
        x = x + (drop(y) if drop is not None else y)
        h = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        h = F.gelu(_linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]))  # (K, N, 4C)
        y = _linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
        x = x + (drop(y) if drop is not None else y)
    x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return torch.bmm(x, w["wte.weight"].transpose(1, 2)).view(K, B, T, V)  # tied head


def losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each run's mean cross-entropy (K,) over its targets (K, B, T) that are not -1, as GPT.forward computes it."""
    K, V = logits.size(0), logits.size(-1)
    each = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1, reduction="none")
    counted = (targets != -1).reshape(K, -1).sum(1)  # (K,)
    return each.view(K, -1).sum(1) / counted


def rope_tables(model: GPT, width: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """A rotary model's (cos, sin) for positions 0..width-1, or None for learned positions."""
    return (model.rope_cos[:width], model.rope_sin[:width]) if model.wpe is None else None


def flops_per_step(config: GPTConfig, batch: int, width: int) -> float:
    """Floating-point operations of one run's training step (forward and backward: 3x the forward's products)."""
    C, T, L, V = config.n_embd, width, config.n_layer, config.vocab_size
    per_position = L * (2 * C * 3 * C + 2 * C * C + 2 * 2 * C * 4 * C + 2 * 2 * T * C) + 2 * C * V
    return 3.0 * batch * T * per_position


def frozen(models: list[GPT]) -> Weights:
    """The models' weights as stacks to decode with (no gradients), in the layout `forward` reads."""
    with torch.no_grad():
        parts = [stack(m, 1) for m in models]
        return {name: torch.cat([p[name] for p in parts]).detach() for name in parts[0]}


class Decoder:
    """Greedy decoding of K stacked models at once, one position per step for every row (a `Policy` for `rollout`):
    rows k*R to (k+1)*R - 1 are run k's. It decodes as `GreedyPolicy` does, with the KV cache stacked."""

    def __init__(self, weights: Weights, config: GPTConfig, rows: int, rope: tuple | None = None):
        self.w, self.config, self.rows, self.rope = weights, config, rows, rope
        self.K = weights["wte.weight"].size(0)
        hs = config.n_embd // config.n_head
        shape = (config.n_layer, self.K * rows * config.n_head, config.block_size, hs)
        self.keys, self.values = torch.zeros(shape), torch.zeros(shape)  # (L, K*R*nh, T_max, hs)
        self.pos = 0  # positions decoded so far

    def step(self, chars: list[str]) -> list[str]:
        """Feed one character per row (PAD for finished rows); each row's likeliest next character."""
        ids = torch.tensor([encode(c)[0] if c != PAD else PAD_ID for c in chars]).view(self.K, self.rows)
        with torch.no_grad():
            logits = self._next(ids)  # (K, R, vocab)
        logits[..., PAD_ID] = float("-inf")  # the model never chooses padding
        return [CHARS[i] for i in logits.argmax(-1).view(-1).tolist()]

    def _next(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (K, R, vocab) of the next character after ids (K, R) at position `pos`; the cache advances."""
        w, config, K, R, t = self.w, self.config, self.K, self.rows, self.pos
        C, V, nh = config.n_embd, config.vocab_size, config.n_head
        hs = C // nh
        x = F.embedding(ids + torch.arange(K).view(K, 1) * V, w["wte.weight"].reshape(K * V, C))  # (K, R, C)
        if "wpe.weight" in w:
            x = x + w["wpe.weight"][:, None, t]  # (K, 1, C)
        rope = None if self.rope is None else (self.rope[0][t : t + 1], self.rope[1][t : t + 1])
        for i in range(config.n_layer):
            p = f"blocks.{i}."
            h = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
            qkv = _linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"])  # (K, R, 3C)
            q, k, v = qkv.view(K * R, 1, 3, nh, hs).permute(2, 0, 3, 1, 4)  # each (K*R, nh, 1, hs)
            if rope is not None:
                q, k = rotate(q, *rope), rotate(k, *rope)
            self.keys[i, :, t], self.values[i, :, t] = k.reshape(-1, hs), v.reshape(-1, hs)
            # the one new query sees every position so far, so no mask; products over the cache in place
            att = torch.bmm(q.reshape(-1, 1, hs), self.keys[i, :, : t + 1].transpose(1, 2)) * hs**-0.5
            y = torch.bmm(att.softmax(-1), self.values[i, :, : t + 1])  # (K*R*nh, 1, hs)
            y = _linear(y.view(K, R, C), w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
            x = x + y
            h = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
            h = F.gelu(_linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]))
            x = x + _linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
        self.pos += 1
        x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
        return torch.bmm(x, w["wte.weight"].transpose(1, 2))  # (K, R, vocab)
