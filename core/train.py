"""Training loops: pre-training on worksheets and fine-tuning on demonstrations, loss on actions only.

The loops know nothing of any UI: each step is reported to an `on_step(StepStats) -> bool` callback,
which returns False to stop. One torch thread, a seeded generator for batches and a seeded global
RNG for dropout make a run repeat exactly.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import torch

from .families import Problem
from .model import GPT
from .settings import FinetuneSettings, PretrainSettings
from .vocab import encode
from .worksheets import worksheet_stream


@dataclass(frozen=True)
class StepStats:
    """What one optimiser step reports."""

    step: int  # 1-based step just taken
    steps: int  # steps planned
    loss: float  # training loss of this step's batch
    elapsed: float  # seconds since training started


OnStep = Callable[[StepStats], bool]  # return False to stop


def use_one_thread() -> None:
    """One torch thread per process: faster on a busy 2-core machine, and bit-for-bit repeatable."""
    torch.set_num_threads(1)


def set_dropout(model: GPT, p: float) -> None:
    """Set every dropout probability in the model."""
    model.config.dropout = p
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = p
        elif hasattr(m, "dropout") and isinstance(m.dropout, float):
            m.dropout = p


def demonstration_tensors(problems: list[Problem]) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets (N, T) of the demonstrations, padded; -1 targets off the model's actions."""
    pairs = [p.demonstration().training_pair() for p in problems]
    T = max(len(x) for x, _ in pairs)
    inputs = torch.zeros(len(pairs), T, dtype=torch.long)  # padding id 0
    targets = torch.full((len(pairs), T), -1, dtype=torch.long)  # -1: no loss on padding
    for i, (x, y) in enumerate(pairs):
        inputs[i, : len(x)] = torch.tensor(x)
        targets[i, : len(y)] = torch.tensor(y)  # already -1 on prompt and environment targets
    return inputs, targets


def _optimiser(model: GPT, lr: float, weight_decay: float) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay)


def finetune(model: GPT, problems: list[Problem], settings: FinetuneSettings, on_step: OnStep | None = None,
             ) -> list[float]:
    """Fine-tune `model` in place on the problems' demonstrations; returns the loss of every step taken."""
    torch.manual_seed(settings.seed)  # dropout masks
    gen = torch.Generator().manual_seed(settings.seed)  # batch order
    set_dropout(model, settings.dropout)
    inputs, targets = demonstration_tensors(problems)
    batch = min(settings.batch_size, len(problems))
    opt = _optimiser(model, settings.lr, settings.weight_decay)
    model.train()
    losses: list[float] = []
    start = time.perf_counter()
    try:
        for step in range(1, settings.steps + 1):
            rows = torch.randperm(len(problems), generator=gen)[:batch]
            x, y = inputs[rows], targets[rows]
            width = int((y != -1).nonzero()[:, 1].max()) + 1  # trim padding columns
            _, loss = model(x[:, :width], y[:, :width])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if on_step is not None and on_step(StepStats(step, settings.steps, losses[-1],
                                                         time.perf_counter() - start)) is False:
                break
    finally:
        model.eval()
    return losses


def pretrain(settings: PretrainSettings, model: GPT, on_step: OnStep | None = None) -> list[float]:
    """Pre-train `model` in place on random windows of a worksheet stream; returns the losses."""
    torch.manual_seed(settings.seed)
    gen = torch.Generator().manual_seed(settings.seed)
    T = model.config.block_size
    data = torch.tensor(encode(worksheet_stream(settings.seed, 20_000)))
    opt = _optimiser(model, settings.lr, 0.0)
    model.train()
    losses: list[float] = []
    start = time.perf_counter()
    try:
        for step in range(1, settings.steps + 1):
            lr = _warmup_cosine(step, settings)
            for group in opt.param_groups:
                group["lr"] = lr
            ix = torch.randint(len(data) - T - 1, (settings.batch_size,), generator=gen)
            x = torch.stack([data[i: i + T] for i in ix])  # (B, T)
            y = torch.stack([data[i + 1: i + T + 1] for i in ix])  # (B, T)
            _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if on_step is not None and on_step(StepStats(step, settings.steps, losses[-1],
                                                         time.perf_counter() - start)) is False:
                break
    finally:
        model.eval()
    return losses


def _warmup_cosine(step: int, s: PretrainSettings) -> float:
    if step <= s.warmup:
        return s.lr * step / s.warmup
    progress = (step - s.warmup) / max(1, s.steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
