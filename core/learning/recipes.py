"""How each recipe that trains on a mix trains a model in place: the trainer registered under its name.

`core.world.runs.recipes` names the recipes and their settings; this module gives each mix recipe its
torch side, a function `(model, mix, settings, on_step) -> losses`, and optionally a measurement taken
before training (`BEFORE`). `experiment.train_run` wraps any of them the same way (load the base, measure,
keep snapshots, evaluate, record), so a new way of learning is a trainer here, built on `train.run` with its
own batches and loss, as learning from reward (`core.learning.rl`) is.
"""

from __future__ import annotations

from collections.abc import Callable

from breadth.core.learning.model import GPT
from breadth.core.learning.rl import before_training, from_reward
from breadth.core.learning.train import finetune
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.recipes import FINETUNE, REWARD, RecipeError, recipe
from breadth.core.world.runs.records import OnStep

Trainer = Callable[[GPT, Mix, object, OnStep | None], list[float]]  # trains in place; the loss of every step
Measure = Callable[[GPT, Mix, object], dict[str, float]]  # what a recipe measures of the model before training


def from_demonstrations(model: GPT, mix: Mix, settings: object, on_step: OnStep | None) -> list[float]:
    """The plate's recipe: the mix's demonstrations, loss on the model's own actions only."""
    return finetune(model, mix.demonstrations(settings.seed), settings, on_step)


TRAINERS: dict[str, Trainer] = {FINETUNE: from_demonstrations, REWARD: from_reward}
BEFORE: dict[str, Measure] = {REWARD: before_training}  # pass@G on the training prompts before learning from reward


def trainer(name: str) -> Trainer:
    """The trainer of the mix recipe `name`; RecipeError (one line) for a recipe with none."""
    made_by = recipe(name)
    if not made_by.on_mix or name not in TRAINERS:
        raise RecipeError(f"the {name} recipe does not train on a mix")
    return TRAINERS[name]
