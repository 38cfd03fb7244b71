"""Recipes: the ways a run is made, each with its own settings, named once.

A run's record names its recipe (`RunMeta.recipe`, a recipe's `name`, stored under the key `kind`), and its
settings are an instance of that recipe's settings class. `finetune` learns from demonstrations of a mix of
environments (the plate's recipe); `reward` learns from the reward of its own sampled episodes on the mix's
training sums; `pretrain` makes a base from single-digit worksheets. Everything that handles runs (records,
the results store, the engine's Train command, the command line's flags, the app's form) asks the
registry, so a new way of learning (learning from reward, say) is one `Recipe` here, with its settings declared
once on its settings class: it names its trainer (and what it measures before training, if anything) as an entry
point, `module:attr`, as Gymnasium's `EnvSpec(entry_point=...)` does, which the learning layer imports when the
recipe first trains (`breadth.core.learning.trainers.load`), so the world never imports torch.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from breadth.core.world.runs.settings import FinetuneSettings, PretrainSettings, RewardSettings, Setting, swept

ENTRY_POINT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")  # `module:attr`, as Gymnasium's entry points are written


class RecipeError(ValueError):
    """A recipe name that is not registered; the message is one line naming the registered ones."""


def did_you_mean(word: str, names) -> str:
    """`; did you mean 'finetune'?` for the name nearest `word` (difflib), or '' when none is near."""
    near = difflib.get_close_matches(word, list(names), n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


@dataclass(frozen=True)
class Recipe:
    """One way of making a model: its name (a run's `RunMeta.recipe`), its label for people, its settings."""

    name: str  # the kind stored in records and checkpoints: `finetune`
    label: str  # for people: `demonstrations`
    settings: type  # its settings class (declared with `setting(...)` fields)
    on_mix: bool = True  # trains a base on a mix of environments: stored in the results store, offered by the app
    trainer: str = ""  # a mix recipe's trainer, `module:attr`: a function (model, mix, settings, on_step) -> losses
    before: str = ""  # what it measures before training, `module:attr`: (model, mix, settings) -> {name: value}

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise RecipeError(f"a recipe's name is a word such as finetune, not {self.name!r}")
        if self.on_mix and not self.trainer:
            raise RecipeError(f"the {self.name} recipe trains on a mix: name its trainer, module:attr")
        wrong = next((e for e in (self.trainer, self.before) if e and not ENTRY_POINT.fullmatch(e)), None)
        if wrong is not None:
            raise RecipeError(f"an entry point is written module:attr, not {wrong[:60]!r}")


RECIPES: dict[str, Recipe] = {}  # name -> recipe, in registration order
FINETUNE = "finetune"  # the plate's recipe, and every run's recipe when its record names none
REWARD = "reward"  # learning from reward: sampled episodes, reward 1 when correct (nanochat's RL recipe)


def register(recipe: Recipe) -> Recipe:
    """Add a recipe to the registry (a name is registered once)."""
    if recipe.name in RECIPES:
        raise RecipeError(f"a recipe called {recipe.name!r} is registered already")
    RECIPES[recipe.name] = recipe
    return recipe


def recipe(name: object) -> Recipe:
    """The recipe called `name`; RecipeError (one line) for anything else."""
    found = RECIPES.get(name) if isinstance(name, str) else None
    if found is None:
        shown = repr(name)[:40]
        near = did_you_mean(name, RECIPES) if isinstance(name, str) else ""
        raise RecipeError(f"no recipe {shown}{near}; recipes: {', '.join(RECIPES)}")
    return found


def recipe_of(settings: object) -> Recipe:
    """The recipe whose settings class `settings` is an instance of; RecipeError for another object."""
    found = next((r for r in RECIPES.values() if type(settings) is r.settings), None)
    if found is None:
        raise RecipeError(f"{type(settings).__name__} are no recipe's settings; recipes: {', '.join(RECIPES)}")
    return found


def mix_recipes() -> list[Recipe]:
    """The recipes that train on a mix (what the app's form, `breadth train` and the store offer), in order."""
    return [r for r in RECIPES.values() if r.on_mix]


def swept_by_any() -> tuple[Setting, ...]:
    """The sweepable settings of every mix recipe, one per name (first declaration wins): a table's columns,
    the command line's flags. A run whose recipe lacks one shows `-` there."""
    seen: dict[str, Setting] = {}
    for r in mix_recipes():
        for s in swept(r.settings):
            seen.setdefault(s.name, s)
    return tuple(seen.values())


register(
    Recipe(FINETUNE, "demonstrations", FinetuneSettings, trainer="breadth.core.learning.trainers:from_demonstrations")
)
register(Recipe("pretrain", "worksheets", PretrainSettings, on_mix=False))  # `breadth pretrain`: a base, no mix
register(  # learning from reward with the calculator in the loop; pass@G on the training prompts measured first
    Recipe(
        REWARD,
        "reward",
        RewardSettings,
        trainer="breadth.core.learning.reward:from_reward",
        before="breadth.core.learning.reward:before_training",
    )
)
