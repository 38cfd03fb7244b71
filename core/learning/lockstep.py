"""Fine-tunes in lockstep: K runs of a demonstrations recipe trained together as one batched model, each its own run.

Each run has its own demonstrations (its mix and seed), its own batch order (a generator seeded as
`train.finetune` seeds it, so it draws the same batches), its own dropout stream (a second generator, seeded
from its seed) and its own learning rate, weight decay and dropout; runs share only the base and the shape.
The runs' weights live in stacks on a leading K dimension (`core.learning.stacked`), one stack per parameter
for each group of runs that share a learning rate, its schedule (`FinetuneSettings.rate`) and weight decay; every
step pads the going runs' batches to one width, takes one batched forward and backward, and one fused AdamW step
over the stacks. A run ends at its
own step count, when its `on_step` returns False, or when its loss stops being finite: its weights are copied
into its own `GPT` (which `checkpoint.save` writes like any fine-tune's) and the stacks are rebuilt without
it, the others keeping their optimiser state. One job alone (`finetune_cheap`) is the cheaper single run.

At dropout 0 a lockstep run computes what `train.finetune` computes, up to rounding; with dropout its masks
come from another generator than `F.dropout`'s, so it differs from a single run of the same seed as another
seed would, and repeats exactly when the same group of jobs runs again on the same machine. A run's numbers
depend a little on its group: batches are padded to the group's widest, which changes rounding and, with
dropout, how much of its stream a step draws.
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from breadth.core.learning import checkpoint, stacked
from breadth.core.learning.model import GPT
from breadth.core.learning.train import demonstration_tensors, use_one_thread
from breadth.core.storage.paths import BASE
from breadth.core.world.arithmetic.problem import Problem
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.mix import Mix
from breadth.core.world.environments.registry import by_name
from breadth.core.world.episodes.episode import Episode
from breadth.core.world.episodes.rollout import run_episodes
from breadth.core.world.episodes.scores import HELD_OUT, HeldOutScore
from breadth.core.world.episodes.scoring import Scored, tally
from breadth.core.world.episodes.verdict import judge
from breadth.core.world.runs.records import Diverged, RunMeta, StepStats
from breadth.core.world.runs.settings import FinetuneSettings

OnRunStep = Callable[[int, StepStats], bool | None]  # (the run's index among the jobs, its step) -> False stops it
DROPOUT_STREAM = 0x5DEECE66  # a run's dropout generator is seeded with its seed XOR this: not its batch stream


@dataclass(frozen=True)
class LockstepJob:
    """One run of a lockstep group: the plate's recipe (`FinetuneSettings`) on a mix."""

    mix: Mix
    settings: FinetuneSettings
    environments: tuple[str, ...] | None = None  # the environments it is scored on (None: every registered one)


class _Run:
    """One run's state inside a lockstep group: its model, its data, its generators and the losses so far."""

    def __init__(self, model: GPT, problems: list[Problem], settings: FinetuneSettings):
        self.model = model
        self.settings = settings
        self.inputs, self.targets = demonstration_tensors(problems)  # (n, T) each
        self.batch = min(settings.batch_size, len(problems))
        self.order = torch.Generator().manual_seed(settings.seed)  # batch order, as train.finetune draws it
        self.noise = torch.Generator().manual_seed(settings.seed ^ DROPOUT_STREAM)  # dropout masks
        self.losses: list[float] = []
        self.error: Diverged | None = None
        model.set_dropout(settings.dropout)  # the config records it, as a single run's does

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """This step's demonstrations (batch, width): drawn and trimmed exactly as `train.finetune` does."""
        rows = torch.randperm(len(self.inputs), generator=self.order)[: self.batch]
        x, y = self.inputs[rows], self.targets[rows]
        width = int((y != -1).nonzero()[:, 1].max()) + 1  # trim padding columns
        return x[:, :width], y[:, :width]


class _Stacks:
    """The trainable weights of the runs still going: one stack (K_g, ...) per parameter for each group of runs
    that share a learning rate, its schedule and weight decay, and one fused AdamW with a parameter group per
    such group.

    While a run trains, its weights live only here (its GPT still holds the base's); `unstack` copies a run's
    row into its GPT. When runs end, `drop` rebuilds the stacks without them, keeping the others' optimiser
    state, so an ended run costs nothing more.
    """

    def __init__(self, runs: list[_Run], base: GPT):
        self.runs = runs
        self.hyper = sorted({_hyper(r.settings) for r in runs})  # the learning rate's schedule and weight decay
        self.groups = [[k for k, r in enumerate(runs) if _hyper(r.settings) == h] for h in self.hyper]
        self.leaves = [stacked.stack(base, len(rows)) for rows in self.groups]
        self.opt = self._optimiser()

    def _optimiser(self) -> torch.optim.AdamW:
        groups = [
            {"params": list(leaves.values()), "lr": lr, "weight_decay": wd}
            for leaves, (lr, wd, *_) in zip(self.leaves, self.hyper, strict=True)
        ]
        return torch.optim.AdamW(groups, betas=(0.9, 0.99), fused=True)

    def set_rates(self, step: int) -> None:
        """Each group's learning rate at `step`, by its runs' schedule (`FinetuneSettings.rate`)."""
        for group, rows in zip(self.opt.param_groups, self.groups, strict=True):
            group["lr"] = self.runs[rows[0]].settings.rate(step)

    @property
    def order(self) -> list[int]:
        """The going runs' indices, in the order of the stacked K dimension."""
        return [k for rows in self.groups for k in rows]

    def weights(self) -> stacked.Weights:
        """Every going run's weights as one stack per parameter (no copy when all share lr and weight decay)."""
        if len(self.leaves) == 1:
            return self.leaves[0]
        return {n: torch.cat([leaves[n] for leaves in self.leaves]) for n in self.leaves[0]}

    def unstack(self, k: int) -> None:
        """Copy run k's trained weights into its GPT."""
        g = next(i for i, rows in enumerate(self.groups) if k in rows)
        stacked.unstack(self.leaves[g], self.groups[g].index(k), self.runs[k].model)

    def drop(self, ended: set[int]) -> None:
        """Rebuild the stacks and the optimiser without the runs in `ended`, the others keeping their AdamW state."""
        state: dict[torch.Tensor, dict] = {}
        groups, leaves, hyper = [], [], []
        for rows, stack, h in zip(self.groups, self.leaves, self.hyper, strict=True):
            keep = torch.tensor([i for i, k in enumerate(rows) if k not in ended], dtype=torch.long)
            if not len(keep):
                continue
            fresh = {n: t.detach()[keep].requires_grad_() for n, t in stack.items()}  # indexing copies
            for n, t in fresh.items():
                old = self.opt.state.get(stack[n], {})
                state[t] = {key: v[keep] if key.startswith("exp_avg") else v.clone() for key, v in old.items()}
            groups.append([rows[int(i)] for i in keep])
            leaves.append(fresh)
            hyper.append(h)
        self.groups, self.leaves, self.hyper = groups, leaves, hyper
        if not groups:  # every run has ended
            return
        self.opt = self._optimiser()
        for t, st in state.items():
            if st:
                self.opt.state[t] = st


def _hyper(settings: FinetuneSettings) -> tuple[float, float, int, int]:
    """What runs of one optimiser group share: learning rate, weight decay and the rate's schedule (its warm-up,
    and its steps when it has one, as the cosine ends at the last step)."""
    return (settings.lr, settings.weight_decay, settings.warmup, settings.steps if settings.warmup else 0)


def _pad(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Runs' batches as one (K, B, T): shorter batches padded with rows and columns that carry no loss."""
    B = max(x.size(0) for x, _ in batches)
    T = max(x.size(1) for x, _ in batches)
    inputs = torch.zeros(len(batches), B, T, dtype=torch.long)  # padding id 0
    targets = torch.full((len(batches), B, T), -1, dtype=torch.long)  # -1: no loss on padding
    for k, (x, y) in enumerate(batches):
        inputs[k, : x.size(0), : x.size(1)] = x
        targets[k, : y.size(0), : y.size(1)] = y
    return inputs, targets


def finetune_lockstep(
    models: list[GPT],
    problems: list[list[Problem]],
    settings: list[FinetuneSettings],
    on_step: OnRunStep | None = None,
) -> list[list[float] | Diverged]:
    """Fine-tune each model in place on its problems by its settings, all in lockstep; per run, the loss of every
    step it took, or Diverged if its loss stopped being finite (the others carry on). Models of one shape."""
    if not (len(models) == len(problems) == len(settings)) or not models:
        raise ValueError("give one model, one list of problems and one settings per run, and at least one run")
    shapes = {tuple((k, v) for k, v in m.config.to_dict().items() if k != "dropout") for m in models}
    if len(shapes) > 1:
        raise ValueError("runs in lockstep share one model shape")
    runs = [_Run(m, p, s) for m, p, s in zip(models, problems, settings, strict=True)]
    config = models[0].config
    stacks = _Stacks(runs, models[0])
    space = torch.empty(0)  # the dropout masks' memory, kept from step to step (fresh memory costs page faults)
    start = time.perf_counter()
    for step in range(1, max(s.steps for s in settings) + 1):
        order = stacks.order
        if not order:
            break
        going = [runs[k] for k in order]
        inputs, targets = _pad([r.next_batch() for r in going])  # (K, B, T)
        B, T = inputs.shape[1:]
        ps, drop = [r.settings.dropout for r in going], None
        if any(ps):
            n = stacked.dropout_sites(config, B, T)
            space = space if space.numel() >= len(going) * n else torch.empty(len(going) * n)
            drop = stacked.Dropout(ps, [r.noise for r in going], n, space)
        logits = stacked.forward(stacks.weights(), config, inputs, drop, stacked.rope_tables(models[0], T))
        loss = stacked.losses(logits, targets)  # (K,)
        stacks.opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # runs share no weights: each run's gradient is its own loss's
        stacks.set_rates(step)
        stacks.opt.step()
        elapsed = time.perf_counter() - start
        values = zip(order, loss.tolist(), strict=True)
        ended = {k for k, value in values if _ends(k, runs[k], step, value, elapsed, on_step)}
        for k in ended:
            stacks.unstack(k)
        if ended:
            stacks.drop(ended)
    return [r.error if r.error is not None else r.losses for r in runs]


def _ends(k: int, run: _Run, step: int, value: float, elapsed: float, on_step: OnRunStep | None) -> bool:
    """Keep run k's loss of this step and tell `on_step`; whether the run ends here: at its last step, on False
    or when its loss is not finite."""
    run.losses.append(value)
    if not math.isfinite(value):
        run.error = Diverged(f"the loss became {value} at step {step}; try a lower learning rate")
        return True
    stopped = on_step is not None and on_step(k, StepStats(step, run.settings.steps, value, elapsed)) is False
    return stopped or step == run.settings.steps


def finetune_cheap(
    model: GPT, problems: list[Problem], settings: FinetuneSettings, on_step: Callable | None = None
) -> list[float]:
    """`train.finetune` by the cheaper step (batched layout, cheap dropout, fused AdamW): one run in lockstep alone.

    The same batches as `train.finetune` for the seed; dropout masks from the run's own stream instead of
    `F.dropout`'s. Raises Diverged as a single run does.
    """
    hook = None if on_step is None else (lambda _k, stats: on_step(stats))
    (out,) = finetune_lockstep([model], [problems], [settings], hook)
    if isinstance(out, Diverged):
        raise out
    return out


EVAL_ROWS = 2048  # episodes decoded at once when scoring runs together (rows of the stacked KV cache)


def evaluate_lockstep(
    models: list[GPT],
    seeds: list[int],
    held_out: int | None = HELD_OUT,
    environments: list[tuple[str, ...] | list[str] | None] | None = None,
) -> list[dict[str, HeldOutScore]]:
    """Each model's held-out scores for its seed, as `evaluate.evaluate` scores them, the models playing together:
    greedy rollouts of every model at once (`stacked.Decoder`), `EVAL_ROWS` episodes at a time. `environments`,
    per model, the environments it is scored on (None: every registered environment)."""
    names = [list(REGISTERED) if e is None else list(e) for e in (environments or [None] * len(models))]
    problems = [
        [p for n in each for p in by_name(n).held_out(seed, held_out)] for each, seed in zip(names, seeds, strict=True)
    ]
    weights, config = stacked.frozen(models), models[0].config
    rope = stacked.rope_tables(models[0], config.block_size)
    most = max(len(p) for p in problems)
    chunks = -(-most // max(1, EVAL_ROWS // len(models)))  # as few as fit, of equal size: little padding
    rows = -(-most // chunks)  # each run's episodes played at a time
    scored: list[list[Scored]] = [[] for _ in models]
    for start in range(0, most, rows):
        chunks = [p[start : start + rows] for p in problems]
        padded = [c + [c[-1] if c else p[0]] * (rows - len(c)) for c, p in zip(chunks, problems, strict=True)]
        # each episode in its environment's call form (a postfix environment's calls are parsed as postfix)
        episodes = [Episode(p.prompt, max_length=config.block_size, syntax=p.syntax) for c in padded for p in c]
        episodes = run_episodes(stacked.Decoder(weights, config, rows, rope), episodes)
        for k, chunk in enumerate(chunks):  # padding rows are played and dropped
            mine = episodes[k * rows : k * rows + len(chunk)]
            scored[k] += [Scored(p, ep, judge(ep, p)) for p, ep in zip(chunk, mine, strict=True)]
    return [tally(s, each) for s, each in zip(scored, names, strict=True)]


def train_lockstep(
    jobs: list[LockstepJob],
    on_step: OnRunStep | None = None,
    base: str | os.PathLike = BASE,
    held_out: int | None = HELD_OUT,
) -> list[tuple[GPT, RunMeta] | Diverged]:
    """Train every job from the base in lockstep and score each on its held-out sums: per job, its model and its
    record (as `experiment.train_run` returns them), or the Diverged error of a run whose loss stopped being finite.

    A record's train seconds are the wall time from the group's start to that run's last step (the runs
    shared it); its eval seconds are its share of scoring every run together (`evaluate_lockstep`).
    """
    use_one_thread()
    loaded, _ = checkpoint.load(base)
    models = [copy.deepcopy(loaded) for _ in jobs]
    ended = [0.0] * len(jobs)
    start = time.perf_counter()

    def hook(k: int, stats: StepStats) -> bool | None:
        ended[k] = time.perf_counter() - start
        return None if on_step is None else on_step(k, stats)

    problems = [j.mix.demonstrations(j.settings.seed) for j in jobs]
    outcomes = finetune_lockstep(models, problems, [j.settings for j in jobs], hook)
    kept = [k for k, losses in enumerate(outcomes) if not isinstance(losses, Diverged)]
    scoring = time.perf_counter()
    seeds, environments = [jobs[k].settings.seed for k in kept], [jobs[k].environments for k in kept]
    scores = evaluate_lockstep([models[k] for k in kept], seeds, held_out, environments) if kept else []
    share = (time.perf_counter() - scoring) / max(1, len(kept))  # the runs were scored together
    results: list[tuple[GPT, RunMeta] | Diverged] = list(outcomes)  # type: ignore[arg-type]
    for k, scored in zip(kept, scores, strict=True):
        s, losses = jobs[k].settings, outcomes[k]
        record = RunMeta.of_run(
            s,
            jobs[k].mix,
            held_out,
            base,
            scores=scored,
            losses=tuple(losses),
            train_seconds=ended[k],
            eval_seconds=share,
            completed=len(losses) == s.steps,
        )
        results[k] = (models[k], record)
    return results
