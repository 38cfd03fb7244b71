"""One fine-tuning run end to end: load the base, fine-tune on a mix, score held-out sums, record it.

The command line, the plate and the UI's engine process all run fine-tunes through `finetune_run`, so
every number they show comes from the same code and lands in the same record.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .mix import Mix
from .settings import FinetuneSettings

CHECKPOINTS = Path(os.environ.get("BREADTH_CHECKPOINTS", Path(__file__).resolve().parent.parent / "checkpoints"))
BASE = CHECKPOINTS / "base.safetensors"  # the shipped pre-trained model
SHIPPED = {  # the plate's models, fine-tuned from BASE with seed 0 and the default settings
    "two_digit": CHECKPOINTS / "two_digit.safetensors",
    "three_digit": CHECKPOINTS / "three_digit.safetensors",
    "mix": CHECKPOINTS / "mix.safetensors",
}


@dataclass
class RunRecord:
    """What a fine-tuning run did and scored: everything needed to repeat and compare it."""

    mix: str  # the mix in `family=count,...` form
    seed: int
    settings: dict  # FinetuneSettings fields
    held_out: int | None  # held-out sums per family (None: all)
    scores: dict = field(default_factory=dict)  # family -> {"solved", "total", "failures"}
    losses: list[float] = field(default_factory=list)  # training loss per step
    train_seconds: float = 0.0
    eval_seconds: float = 0.0
    completed: bool = True  # False if stopped before the planned steps

    def to_dict(self) -> dict:
        return {"mix": self.mix, "seed": self.seed, "settings": self.settings, "held_out": self.held_out,
                "scores": self.scores, "train_seconds": round(self.train_seconds, 3),
                "eval_seconds": round(self.eval_seconds, 3), "completed": self.completed,
                "steps_taken": len(self.losses)}

    def checkpoint_meta(self, base: str) -> dict:
        """Metadata for a checkpoint of this run's model."""
        return {"kind": "finetune", "base": base, **self.to_dict(),
                "losses": [round(x, 5) for x in self.losses]}


def finetune_run(mix: Mix, settings: FinetuneSettings, base: str | os.PathLike = BASE, held_out: int | None = 30,
                 on_step=None):
    """Fine-tune the base on `mix` and evaluate; returns the model and its RunRecord."""
    from . import checkpoint
    from .evaluate import evaluate
    from .train import finetune, use_one_thread

    use_one_thread()
    model, _ = checkpoint.load(base)
    start = time.perf_counter()
    losses = finetune(model, mix.demonstrations(settings.seed), settings, on_step)
    trained = time.perf_counter()
    scores, _ = evaluate(model, settings.seed, held_out)
    record = RunRecord(mix.spec(), settings.seed, settings.to_dict(), held_out,
                       {name: s.to_dict() for name, s in scores.items()}, losses,
                       trained - start, time.perf_counter() - trained, len(losses) == settings.steps)
    return model, record
