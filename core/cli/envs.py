"""`breadth envs`: the environment registry as a table or JSON, filtered by coordinates, or a seeded draw of it.

Like Gymnasium's `pprint_registry`: each environment's versioned id, its coordinates on the named dimensions,
how many distinct sums it holds, its splits and one demonstration. Read-only: it writes nothing but `--json`.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from breadth.core.storage.files import check_outputs, write_json
from breadth.core.world.environments import EnvError, coordinates_of, draw, env_id, environments, where
from breadth.core.world.families import DIMENSIONS, Family
from breadth.core.world.text import episode_text, shown, shown_text

console = Console(highlight=False, markup=False, emoji=False)


def envs(args) -> int:
    """List (or draw) environments; `--json` writes every field of each."""
    check_outputs([args.json], inputs=[])
    chosen = chosen_environments(args.where or [], args.draw, args.seed)
    t = Table(title=f"{len(chosen)} of {len(environments())} environments", title_justify="left", box=box.SIMPLE_HEAD)
    t.add_column("id", no_wrap=True)
    for d in DIMENSIONS:
        t.add_column(d, justify="right", no_wrap=True)
    t.add_column("sums", justify="right", no_wrap=True)
    t.add_column("a demonstration", overflow="fold", min_width=14)
    for family in chosen:
        t.add_row(
            shown_text(env_id(family)),
            *(shown_text(v) for v in coordinates_of(family).values()),
            f"{family.size():,}",
            episode_text(_example(family).demonstration()),
        )
    console.print(t)
    if args.json:
        write_json(args.json, [env_json(f) for f in chosen])
        console.print(f"wrote {shown(args.json)}")
    return 0


def chosen_environments(conditions: list[str], n: int | None, seed: int) -> list[Family]:
    """The environments `--where DIM=VALUE` (repeatable, all must hold) picks, then `--draw N` of them by `seed`."""
    values = {}
    for text in conditions:
        dimension, sep, value = text.partition("=")
        if not sep or not value.strip():
            raise EnvError(f"--where takes DIMENSION=VALUE, e.g. operands=3, not {text[:40]!r}")
        values[dimension.strip()] = value.strip()
    pool = where(**values) if values else environments()
    return pool if n is None else draw(n, seed, pool)


def _example(family: Family):
    """The environment's first problem of seed 0: the same demonstration every time it is listed."""
    return family.problem(0, 0)


def env_json(family: Family) -> dict:
    """Everything `breadth envs --json` says of one environment."""
    return {
        "id": env_id(family),
        "name": family.name,
        "coordinates": coordinates_of(family),
        "description": family.description,
        "sums": family.size(),
        "example": _example(family).demonstration().text,
    }
