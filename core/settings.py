"""Training hyper-parameters as dataclasses, importable without torch (the UI shows their defaults)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class FinetuneSettings:
    """Fine-tuning hyper-parameters; the defaults reproduce the plate."""

    steps: int = 400  # optimiser steps
    lr: float = 2e-3  # constant AdamW learning rate
    batch_size: int = 8  # demonstrations per step, drawn without replacement each step
    dropout: float = 0.0  # dropout while fine-tuning
    weight_decay: float = 0.0  # AdamW weight decay
    seed: int = 0  # seeds the demonstrations, the held-out sets, batch order and dropout

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PretrainSettings:
    """Pre-training hyper-parameters."""

    steps: int = 600  # optimiser steps
    lr: float = 2e-3  # peak learning rate
    warmup: int = 50  # linear warm-up steps, then cosine decay to lr/10
    batch_size: int = 64  # windows per step
    seed: int = 0  # seeds the worksheets, initial weights and batch order

    def to_dict(self) -> dict:
        return asdict(self)
