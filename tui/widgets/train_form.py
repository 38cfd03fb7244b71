"""The training form's fields: the count of each environment, the settings the recipes declare, and the rows of the
two folded sections, made when a section is first opened (`tui.widgets.folded`)."""

from __future__ import annotations

from collections.abc import Callable

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Button, Label, Select

from breadth.core.world.arithmetic.coordinates import DIMENSIONS
from breadth.core.world.environments.environment import REGISTERED, dimension_values
from breadth.core.world.environments.labels import column, label
from breadth.core.world.runs.recipes import mix_recipes
from breadth.core.world.runs.settings import Setting
from breadth.tui.catalog import PLATE
from breadth.tui.widgets.bounded_input import BoundedInput

MORE = tuple(n for n in REGISTERED if n not in PLATE)  # environments under "more environments"
MORE_COLUMNS = 2  # count inputs per row under "more environments" (`add 3 10-99` and its count, twice, fit 80x24)
FILL_COUNT = 35  # the count the fill-by-coordinates row starts with


def more_rows(take: Callable[[str], str], codes: bool) -> list[Widget]:
    """The rows under "more environments": fill by coordinates, then every other environment's count, each count's
    text taken from the form by its input's id (`take`), its environment named as `codes` says."""
    fill = Horizontal(
        Select(fill_choices(), value="all", allow_blank=False, compact=True, id="fill-by"),
        BoundedInput(str(FILL_COUNT), type="integer", max_length=3, compact=True, id="fill-count"),
        Button("fill", id="fill", compact=True),
        classes="row",
    )
    texts = {n: take(f"count-{n}") for n in MORE}
    rows = [
        Horizontal(*count_fields(MORE[i : i + MORE_COLUMNS], texts, "num more-count", MORE, codes), classes="row")
        for i in range(0, len(MORE), MORE_COLUMNS)
    ]
    return [fill, *rows]


def advanced_rows(take: Callable[[str], str]) -> list[Widget]:
    """The rows under "advanced": the settings the form keeps there, and the held-out sums per environment, each
    input's text taken from the form by its id (`take`)."""
    texts = {s.label: take(s.label) for s in form_settings() if s.form == "advanced"}
    held_out = BoundedInput(take("held-out"), type="integer", max_length=3, compact=True, id="held-out", classes="num")
    return [
        Horizontal(*setting_inputs("advanced", texts), classes="row"),
        Horizontal(Label("held-out ", classes="lbl"), held_out, Label("per environment", classes="lbl"), classes="row"),
    ]


def fill_choices() -> list[tuple[str, str]]:
    """The fill-by-coordinates options as (prompt, selector), built from the registry.

    All environments, all at each value of each dimension, then all but each environment (leave one out).
    """
    choices = [("all environments", "all")]
    for dimension in DIMENSIONS:
        for value in dimension_values(dimension):
            choices.append((_all_at(dimension, value), f"{dimension}:{value}"))
    for environment in REGISTERED.values():
        at = "&".join(f"{d}:{environment.at.value(d)}" for d in DIMENSIONS)
        choices.append((f"all but {label(environment)}", f"all!{at}"))
    return choices


def _all_at(dimension: str, value: str) -> str:
    """`all with 2 operands`, `all with 1 digit`, `all sub`: the environments at one value of a dimension."""
    if dimension == "op":
        return f"all {value}"
    noun = dimension if value != "1" else dimension.removesuffix("s")
    return f"all with {value} {noun}"


def form_settings() -> tuple[Setting, ...]:
    """The settings the form shows, as the recipes that train on a mix declare them (one input per name)."""
    seen: dict[str, Setting] = {}
    for r in mix_recipes():
        for s in r.settings.settings():
            if s.form:
                seen.setdefault(s.name, s)
    return tuple(seen.values())


def setting_inputs(where: str, texts: dict[str, str]):
    """A label and an input for each setting the form shows at `where` (as the recipes' settings declare), holding its
    text in `texts` (by label) or else its default."""
    for s in form_settings():
        if s.form == where:
            yield Label(f"{s.label} ", classes="lbl")
            width = len(str(int(s.high))) if s.kind is int else 8
            kind = "integer" if s.kind is int else "number"
            text = texts.get(s.label, str(s.default))
            yield BoundedInput(text, type=kind, max_length=width, compact=True, id=s.label, classes="num")


def label_width(names, codes: bool = False) -> int:
    """The width of the count labels of `names`: the longest name and a space, so that the counts stand in columns."""
    return max(len(column(REGISTERED[n], codes)) for n in names) + 1


def count_fields(names, texts: dict[str, str], classes: str, among=(), codes: bool = False):
    """A label and a count input (holding its text in `texts`) for each environment in `names`, the environment in
    words (`add 3 0-9`), or by its code (`a3x1`) with `codes`; with `among`, labels as wide as the widest of those, so
    that rows of counts stand in columns."""
    for name in names:
        label = Label(column(REGISTERED[name], codes), id=f"label-{name}", classes="lbl count-lbl")
        label.styles.width = label_width(among or (name,), codes)
        yield label
        yield BoundedInput(texts[name], type="integer", max_length=3, compact=True, id=f"count-{name}", classes=classes)
