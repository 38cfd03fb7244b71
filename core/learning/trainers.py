"""How each recipe that trains on a mix trains a model in place: its trainer, imported from the entry point it names.

`core.world.runs.recipes` registers each recipe once: its name, its settings and, as text (`module:attr`, as
Gymnasium's `EnvSpec(entry_point=...)` names an environment's class), its trainer, a function
`(model, mix, settings, on_step) -> losses`, and optionally what it measures before training. `load` imports an
entry point when a run first needs it, so the world stays free of torch and a recipe is registered in one place.
`experiment.train_run` wraps any trainer the same way (load the base, measure, keep snapshots, evaluate, record),
so a new way of learning is a trainer built on `train.run` with its own batches and loss, as learning from reward
(`core.learning.reward`) is, named by its recipe.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from breadth.core.learning.model import GPT
from breadth.core.learning.resume import Resume
from breadth.core.learning.train import finetune
from breadth.core.world.environments.mix import Mix
from breadth.core.world.runs.recipes import RecipeError, did_you_mean, recipe
from breadth.core.world.runs.records import OnStep

Trainer = Callable[[GPT, Mix, object, OnStep | None], list[float]]  # trains in place; the loss of every step
Measure = Callable[[GPT, Mix, object], dict[str, float]]  # what a recipe measures of the model before training


def from_demonstrations(
    model: GPT, mix: Mix, settings: object, on_step: OnStep | None, resume: Resume | None = None
) -> list[float]:
    """The plate's recipe: the mix's demonstrations, loss on the model's own actions only (with `resume`, going on
    from the state saved there: a sweep's long runs)."""
    return finetune(model, mix.demonstrations(settings.seed), settings, on_step, resume=resume)


def load(entry_point: str) -> Callable:
    """The function an entry point `module:attr` names, its module imported now; RecipeError (one line, with the
    nearest name when one is near) for a module or a name that is not there."""
    module_name, _, name = entry_point.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is None or not module_name.startswith(e.name):  # the module is there; something it imports is not
            raise
        raise RecipeError(f"no module {module_name!r} for {entry_point!r}{_near_module(module_name)}") from None
    found = getattr(module, name, None)
    if not callable(found):
        names = [n for n, x in vars(module).items() if callable(x) and not n.startswith("_")]
        raise RecipeError(f"no function {name!r} in {module_name}{did_you_mean(name, names)}")
    return found


def _near_module(module_name: str) -> str:
    """`; did you mean 'rl'?` for the module beside `module_name` nearest it, when its package imports."""
    package, _, last = module_name.rpartition(".")
    try:
        path = importlib.import_module(package).__path__ if package else None
    except (ImportError, AttributeError):
        return ""
    return did_you_mean(last, [m.name for m in pkgutil.iter_modules(path)]) if path is not None else ""


def trainer(name: str) -> Trainer:
    """The trainer of the mix recipe `name`; RecipeError (one line) for a recipe with none or one not found."""
    made_by = recipe(name)
    if not made_by.on_mix:
        raise RecipeError(f"the {name} recipe does not train on a mix")
    return load(made_by.trainer)


def measure_before(name: str) -> Measure | None:
    """What the recipe `name` measures of the model before training (pass@G for learning from reward), or None."""
    made_by = recipe(name)
    return load(made_by.before) if made_by.before else None
