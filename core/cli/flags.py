"""Flags several `breadth` commands share: a positive whole number, where a grid of runs runs (workers or a Dask
cluster, the base, the outputs), how many of its runs train together (lockstep), and the results store."""

from __future__ import annotations

import argparse
import os

from breadth.core.cli.path_flags import checkpoint_in, figure_file, output_file, store_read, store_written
from breadth.core.results.groups import AUTO_GROUP
from breadth.core.world.environments.pools import DEFAULT_POOL, POOLS

WORKERS = os.cpu_count() or 1  # one worker per core: each runs one torch thread


def positive_int(text: str) -> int:
    """An argparse type: a whole number above 0, or one line saying what it got."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {n}")
    return n


def pool_flag(s: argparse.ArgumentParser) -> None:
    """--pool: which named set of environments --where filters (core.world.environments.pools)."""
    s.add_argument(
        "--pool",
        choices=POOLS,
        default=DEFAULT_POOL,
        help=f"the environments to choose from: {', '.join(POOLS)} (default {DEFAULT_POOL}: the ten named and the "
        "173 generated; wide: those a model learns trained on each alone, three-digit numbers too; all: every id)",
    )


def where_flags(s: argparse.ArgumentParser) -> None:
    """Where runs run: --workers local processes, or --cluster (a Dask scheduler)."""
    s.add_argument(
        "--workers",
        type=positive_int,
        default=WORKERS,
        help=f"local processes, one torch thread each (default {WORKERS}, one per core)",
    )
    s.add_argument("--cluster", help="a Dask scheduler's address (tcp://host:8786): run there instead")


def runner_flags(s: argparse.ArgumentParser, drawn: str, written: str) -> None:
    """Where a grid of runs runs (local processes or Dask), from which base, into which store, with what outputs."""
    where_flags(s)
    s.add_argument(
        "--base", type=checkpoint_in, default=None, help="pre-trained checkpoint (default: the shipped base)"
    )
    s.add_argument("--figure", type=figure_file, help=f"also draw {drawn}: FIGURE.png and .svg")
    s.add_argument("--json", type=output_file, help=f"also write {written} here")
    store_flag(s, written=True)


def lockstep_flag(s: argparse.ArgumentParser, what: str) -> None:
    """--lockstep K / --alone: how many runs train together as one batched model (default: chosen from the seeds
    and workers, `core.results.groups.group_size`)."""
    how = s.add_mutually_exclusive_group()
    how.add_argument(
        "--lockstep",
        type=positive_int,
        metavar="K",
        help=f"train up to K {what} together as one batched model on one worker, more runs a minute; stored "
        "apart from runs trained alone, whose numbers they match only within seed noise (default: the largest K up "
        f"to {AUTO_GROUP} that still gives every worker a group; each run alone where that is 1)",
    )
    how.add_argument(
        "--alone", action="store_true", help="train each run by itself, as runs stored before lockstep were"
    )


def store_flag(s: argparse.ArgumentParser, written: bool) -> None:
    """--store: the results store the command adds its runs to (`written`) or only reads."""
    s.add_argument(
        "--store",
        type=store_written if written else store_read,
        default=None,
        help="the results store (default: $BREADTH_STORE, else runs.sqlite in the user's breadth folder)",
    )


def setting_flag(s: argparse.ArgumentParser, setting, how: str | None) -> None:
    """`--flag` for a declared setting; `how` follows its help (None: a filter on stored runs)."""
    default = f" (default {setting.show(setting.default)})"
    text = f"only runs with this {setting.help}" if how is None else f"{setting.help}{how}{default}"
    metavar = None if setting.choices else setting.flag.upper().replace("-", "_")
    s.add_argument(f"--{setting.flag}", dest=setting.name, metavar=metavar, choices=setting.choices or None, help=text)
