"""`breadth envs`: the environment registry as a table or JSON, filtered by coordinates, or a seeded draw of it.

Like Gymnasium's `pprint_registry`: each environment's versioned id, its coordinates on the named dimensions,
how many distinct sums it holds, its splits and one demonstration. Read-only: it writes nothing but `--json`.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from breadth.core.storage.files import write_json
from breadth.core.world.arithmetic.calculator import FORMS
from breadth.core.world.environments.environment import Environment
from breadth.core.world.environments.pools import DEFAULT_POOL, POOLS, pool
from breadth.core.world.environments.registry import EnvError, coordinates_of, draw, env_id, where
from breadth.core.world.environments.task import Task
from breadth.core.world.text.shown import episode_text, shown, shown_text

console = Console(highlight=False, markup=False, emoji=False)


def envs(args) -> int:
    """List (or draw) environments; `--json` writes every field of each."""
    chosen = chosen_environments(args.where or [], args.draw, args.seed, args.pool)
    title = f"{len(chosen)} of {len(pool(args.pool))} environments in the {args.pool} pool (--pool {either(POOLS)})"
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    longest = max((len(env_id(f)) for f in chosen), default=0)
    t.add_column("id, and one demonstration", overflow="fold", min_width=longest)  # ids whole, transcripts folded
    for header in ("numbers", "digits", "ops", "form", "sums"):  # the dimensions, as --where names them in JSON
        t.add_column(header, justify="right", no_wrap=True)
    for env in chosen:
        demonstration = episode_text(_example(env).demonstration())
        at = env.at
        t.add_row(
            Text.assemble(shown_text(env_id(env)), "\n  ", demonstration),
            str(at.operands),
            at.value("digits"),
            at.op,  # the signs read shorter than their names: `+-` is add.sub
            at.form,
            f"{env.size():,}",
        )
    t.caption = f"--where takes operands=, digits= (2 or 2.1.2), op= (add, sub or add.sub) and form= ({either(FORMS)})"
    t.caption_justify = "left"
    console.print(t)
    if args.json:
        write_json(args.json, [env_json(f) for f in chosen])
        console.print(f"wrote {shown(args.json)}")
    return 0


def either(names) -> str:
    """Names as a choice in words: `infix or postfix`, `a, b or c`."""
    names = list(names)
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def chosen_environments(
    conditions: list[str], n: int | None, seed: int, pool_name: str = DEFAULT_POOL
) -> list[Environment]:
    """The environments of the pool `pool_name` (`--pool`) that `--where DIM=VALUE` (repeatable, all must hold) picks,
    then `--draw N` of them by `seed`."""
    values: dict[str, str] = {}
    for text in conditions:
        dimension, sep, value = text.partition("=")
        dimension, value = dimension.strip(), value.strip()
        if not sep or not value:
            raise EnvError(f"--where takes DIMENSION=VALUE, e.g. operands=3, not {text[:40]!r}")
        if dimension in values:  # the last would win, silently: an environment has one value on each dimension
            raise EnvError(
                f"--where names {dimension[:20]!r} twice ({dimension[:20]}={values[dimension][:20]} and "
                f"{dimension[:20]}={value[:20]}); give each dimension once"
            )
        values[dimension] = value
    chosen = pool(pool_name)
    chosen = where(chosen, **values) if values else chosen
    return chosen if n is None else draw(n, seed, chosen)


def pool_words(pool_name: str, conditions: list[str] | None) -> str:
    """A pool and its --where conditions as a header says them: `operands=3` or `every environment` in the default
    pool (as before pools had names), `the wide pool: operands=3` or `the wide pool` in another."""
    where_text = " ".join(conditions or [])
    if pool_name == DEFAULT_POOL:
        return where_text or "every environment"
    return f"the {pool_name} pool" + (f": {where_text}" if where_text else "")


def _example(env: Task):
    """The environment's first problem of seed 0: the same demonstration every time it is listed."""
    return env.problem(0, 0)


def env_json(env: Environment) -> dict:
    """Everything `breadth envs --json` says of one environment."""
    return {
        "id": env_id(env),
        "name": env.name,
        "coordinates": coordinates_of(env),
        "description": env.description,
        "sums": env.size(),
        "example": _example(env).demonstration().text,
    }
