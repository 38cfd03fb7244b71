"""Recipes: the ways a run is made, each with its own settings, named once.

A run's record names its recipe (`RunMeta.kind`, a recipe's `name`), and its settings are an instance of
that recipe's settings class. `finetune` learns from demonstrations of a mix of families (the plate's
recipe); `reward` learns from the reward of its own sampled episodes on the mix's training sums;
`pretrain` makes a base from single-digit worksheets. Everything that handles runs (records,
the results store, the engine's Train command, the command line's flags, the app's form) asks the
registry, so a new way of learning (learning from reward, say) is one `Recipe` here plus its trainer
in `breadth.core.learning.recipes`, with its settings declared once on its settings class.
"""

from __future__ import annotations

from dataclasses import dataclass

from breadth.core.world.runs.settings import FinetuneSettings, PretrainSettings, RewardSettings, Setting, swept


class RecipeError(ValueError):
    """A recipe name that is not registered; the message is one line naming the registered ones."""


@dataclass(frozen=True)
class Recipe:
    """One way of making a model: its name (stored as a run's kind), its label for people, its settings."""

    name: str  # the kind stored in records and checkpoints: `finetune`
    label: str  # for people: `demonstrations`
    settings: type  # its settings class (declared with `setting(...)` fields)
    on_mix: bool = True  # trains a base on a mix of families: stored in the results store, offered by the app

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise RecipeError(f"a recipe's name is a word such as finetune, not {self.name!r}")


RECIPES: dict[str, Recipe] = {}  # name -> recipe, in registration order
FINETUNE = "finetune"  # the plate's recipe, and every run's kind when its record names none
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
        raise RecipeError(f"no recipe {shown}; recipes: {', '.join(RECIPES)}")
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


register(Recipe(FINETUNE, "demonstrations", FinetuneSettings))
register(Recipe("pretrain", "worksheets", PretrainSettings, on_mix=False))
register(Recipe(REWARD, "reward", RewardSettings))  # learning from reward with the calculator in the loop
