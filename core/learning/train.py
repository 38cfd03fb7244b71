"""The training loop: one loop for every way of learning, which differ only in their batches and their loss.

`run` knows nothing of any UI or data: it asks `batches(step)` for a batch, `loss(model, batch)` for the
loss to minimise (by default cross-entropy on the batch's targets; a loss may also return what else it
measured, which the step's report carries), sets the learning rate from
`schedule(step)`, and reports each step to `on_step(StepStats) -> bool`, which returns False to stop.
Fine-tuning draws demonstrations (loss on the model's own actions only); pre-training draws windows
of a worksheet stream. One torch thread, a seeded generator for batches
and a seeded global RNG for dropout make a run repeat exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import torch

from breadth.core.learning.model import GPT
from breadth.core.learning.resume import Resume
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.runs.records import Diverged, OnStep, StepStats
from breadth.core.world.runs.settings import FinetuneSettings, PretrainSettings
from breadth.core.world.text.vocab import BOS, encode
from breadth.core.world.text.worksheets import worksheet_stream

Batch = tuple[torch.Tensor, torch.Tensor]  # inputs (B, T), targets (B, T) with -1 where no loss
# (model, a batch) -> the scalar loss to minimise, or the loss and what else the step measured (reward, ...)
Loss = Callable[[GPT, object], torch.Tensor | tuple[torch.Tensor, dict[str, float]]]


def cross_entropy(model: GPT, batch: Batch) -> torch.Tensor:
    """Next-character cross-entropy on the batch's targets (-1 targets carry no loss): demonstrations, worksheets."""
    x, y = batch
    _, loss = model(x, y)
    return loss


def use_one_thread() -> None:
    """One torch thread per process: faster on a busy 2-core machine, and bit-for-bit repeatable."""
    torch.set_num_threads(1)


def run(
    model: GPT,
    batches: Callable[[int], object],
    steps: int,
    opt: torch.optim.Optimizer,
    schedule: Callable[[int], float] | None = None,
    on_step: OnStep | None = None,
    loss: Loss = cross_entropy,
    resume: Resume | None = None,
    generators: Sequence[torch.Generator] = (),
) -> list[float]:
    """Take up to `steps` optimiser steps minimising `loss(model, batches(step))`; the loss of every step taken.

    With `resume`, the run goes on from the state it saved (if any: model, optimiser, the global RNG and the
    `generators` its batches draw from) and saves it every `resume.every` steps; the losses returned are the whole
    run's, the steps' seconds count the earlier pieces too."""
    model.train()
    losses: list[float] = [] if resume is None else resume.restore(model, opt, generators)
    start = time.perf_counter() - (0.0 if resume is None else resume.seconds_before)
    try:
        for step in range(len(losses) + 1, steps + 1):
            if schedule is not None:
                for group in opt.param_groups:
                    group["lr"] = schedule(step)
            value = loss(model, batches(step))
            value, measured = value if isinstance(value, tuple) else (value, {})
            opt.zero_grad(set_to_none=True)
            value.backward()
            opt.step()
            losses.append(value.item())
            if not math.isfinite(losses[-1]):
                raise Diverged(f"the loss became {losses[-1]} at step {step}; try a lower learning rate")
            stats = StepStats(step, steps, losses[-1], time.perf_counter() - start, measured)
            if resume is not None and step % resume.every == 0 and step < steps:
                resume.save(model, opt, generators, losses, stats.elapsed)
            if on_step is not None and on_step(stats) is False:
                break
    finally:
        model.eval()
    return losses


def demonstration_tensors(problems: list[Problem]) -> Batch:
    """Inputs and targets (N, T) of the demonstrations, padded; -1 targets off the model's actions."""
    pairs = [p.demonstration().training_pair() for p in problems]
    T = max(len(x) for x, _ in pairs)
    inputs = torch.zeros(len(pairs), T, dtype=torch.long)  # padding id 0
    targets = torch.full((len(pairs), T), -1, dtype=torch.long)  # -1: no loss on padding
    for i, (x, y) in enumerate(pairs):
        inputs[i, : len(x)] = torch.tensor(x)
        targets[i, : len(y)] = torch.tensor(y)  # already -1 on prompt and environment targets
    return inputs, targets


def adamw(model: GPT, lr: float, weight_decay: float) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay)


def finetune(
    model: GPT,
    problems: list[Problem],
    settings: FinetuneSettings,
    on_step: OnStep | None = None,
    schedule: Callable[[int], float] | None = None,
    resume: Resume | None = None,
) -> list[float]:
    """Fine-tune `model` in place on the problems' demonstrations; returns the loss of every step taken. The learning
    rate is `schedule(step)` when one is given, else `settings.rate(step)`: `settings.lr` at every step (the
    plate's) or, with `settings.warmup`, a warm-up and a cosine decay. With `resume`, it goes on from the state
    saved there and keeps saving it (see `run`)."""
    torch.manual_seed(settings.seed)  # dropout masks
    gen = torch.Generator().manual_seed(settings.seed)  # batch order
    model.set_dropout(settings.dropout)
    inputs, targets = demonstration_tensors(problems)
    batch = min(settings.batch_size, len(problems))

    def demonstrations(step: int) -> Batch:
        rows = torch.randperm(len(problems), generator=gen)[:batch]
        x, y = inputs[rows], targets[rows]
        width = int((y != -1).nonzero()[:, 1].max()) + 1  # trim padding columns
        return x[:, :width], y[:, :width]

    opt = adamw(model, settings.lr, settings.weight_decay)
    if schedule is None and settings.warmup:
        schedule = settings.rate
    return run(model, demonstrations, settings.steps, opt, schedule, on_step, resume=resume, generators=(gen,))


def pretrain(settings: PretrainSettings, model: GPT, on_step: OnStep | None = None) -> list[float]:
    """Pre-train `model` in place on random windows of a worksheet stream; returns the losses."""
    torch.manual_seed(settings.seed)
    gen = torch.Generator().manual_seed(settings.seed)
    T = model.config.block_size
    data = torch.tensor(encode(worksheet_stream(settings.seed, 20_000)))
    if settings.windows == "lines":  # windows start at a line's start token, as every episode does
        starts = (data[: len(data) - T - 1] == encode(BOS)[0]).nonzero()[:, 0]
    else:
        starts = torch.arange(len(data) - T - 1)

    def windows(step: int) -> Batch:
        ix = starts[torch.randint(len(starts), (settings.batch_size,), generator=gen)]
        x = torch.stack([data[i : i + T] for i in ix])  # (B, T)
        y = torch.stack([data[i + 1 : i + T + 1] for i in ix])  # (B, T): every next character counts
        return x, y

    opt = adamw(model, settings.lr, 0.0)
    return run(model, windows, settings.steps, opt, lambda step: _warmup_cosine(step, settings), on_step)


def _warmup_cosine(step: int, s: PretrainSettings) -> float:
    if step <= s.warmup:
        return s.lr * step / s.warmup
    progress = (step - s.warmup) / max(1, s.steps - s.warmup)
    return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
