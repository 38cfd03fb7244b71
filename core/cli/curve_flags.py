"""The flags of the commands that run a breadth curve's protocol: `breadth curve` (held-out sets drawn, or designed;
matched controls), `breadth transfer` (designs x ways of varying) and `breadth study` (a plan of both)."""

from __future__ import annotations

import argparse

from breadth.core.cli.flags import (
    lockstep_flag,
    pool_flag,
    positive_int,
    runner_flags,
    setting_flag,
    store_flag,
    where_flags,
)
from breadth.core.cli.path_flags import input_file
from breadth.core.results.breadth_curve import BUDGETS
from breadth.core.results.transfer_map import MAP_BUDGETS
from breadth.core.world.runs.settings import FinetuneSettings, swept


def add_curve(sub: argparse._SubParsersAction) -> None:
    """`breadth curve` and its flags."""
    s = sub.add_parser(
        "curve",
        help="the breadth curve: held-out success against the number of training environments",
        description="Cobbe's protocol on generated environments: each split holds some of the pool out at random, "
        "runs train on nested subsets of the rest (N environments, the same demonstrations each, steps growing "
        "with N), and every run is scored on its training and held-out environments, beside a ceiling run "
        "trained on the held-out ones. Resumable from the store, like a sweep.",
    )
    pool_flag(s)
    s.add_argument("--where", action="append", metavar="DIM=VALUE", help="only the pool's environments here")
    s.add_argument("--held", type=positive_int, help="environments held out per split, drawn (default 4)")
    s.add_argument(
        "--hold",
        action="append",
        metavar="DIM=VALUE",
        help="a designed hold-out: hold out every environment of the pool at this coordinate in every split "
        "(repeat: one dimension's values are alternatives, dimensions all apply; shell patterns: op=sub.*)",
    )
    s.add_argument(
        "--vary",
        action="append",
        metavar="DIM",
        help="with --hold: train only on environments that differ from a held-out one along these dimensions",
    )
    s.add_argument("--splits", type=positive_int, default=3, help="splits of the pool (default 3)")
    s.add_argument(
        "--folds",
        action="store_true",
        help="held-out sets as folds: disjoint sets of --held, shuffle after shuffle, so every environment is held "
        "out as often as every other (default: each split drawn at random)",
    )
    s.add_argument("--n", default="1,2,4,8,16", help="training environments per run (default 1,2,4,8,16)")
    _data_flags(s)
    s.add_argument("--passes", type=float, default=400 * 8 / 70, help="times each demonstration is seen (the plate's)")
    s.add_argument("--min-steps", type=positive_int, default=400, help="never fewer steps (default 400)")
    s.add_argument(
        "--budget",
        choices=BUDGETS,
        default="own",
        help="whose steps a run takes: its own (default), the largest N's for the ceiling (a matched ceiling), or "
        "the largest N's for every run (more environments, not more training)",
    )
    s.add_argument("--by-environment", action="store_true", help="also print each held-out environment's success per N")
    s.add_argument(
        "--total-demos",
        type=positive_int,
        metavar="T",
        help="the same T demonstrations in all, split over a run's environments (T // N each), instead of --demos",
    )
    _training_flags(s, "seeds of one point", "the curve", "the curve's points")


def add_transfer(sub: argparse._SubParsersAction) -> None:
    """`breadth transfer` and its flags."""
    s = sub.add_parser(
        "transfer",
        help="the transfer map: designed hold-outs x what training varied along, each beside a matched ceiling",
        description="For each design (environments of the pool held out by coordinates) and each way of varying "
        "(every other environment, or only those one step from a held-out one along the named dimensions), train "
        "on all that the row allows and a ceiling on the held-out ones at the same steps, on every seed, and print "
        "held-out success beside the ceiling. Resumable from the store, like a curve.",
    )
    pool_flag(s)
    s.add_argument("--where", action="append", metavar="DIM=VALUE", help="only the pool's environments here")
    s.add_argument(
        "--hold",
        action="append",
        required=True,
        metavar="DIM=VALUE,...",
        help="a design (a column): hold out the pool's environments at these coordinates (repeat for more designs)",
    )
    s.add_argument(
        "--vary",
        action="append",
        metavar="DIM,...",
        help="a row: train only on environments one step from a held-out one along these dimensions, or `all` "
        "for every other environment (repeat for more rows; default all)",
    )
    s.add_argument(
        "--budget",
        choices=MAP_BUDGETS,
        default="own",
        help="whose steps a cell takes: its own (default: its row's environments x demonstrations x passes), or "
        "the map's largest cell's for every cell (matched: rows differ in what they saw, not in how long they trained)",
    )
    s.add_argument("--passes", type=float, default=400 * 8 / 70, help="times each demonstration is seen (the plate's)")
    s.add_argument("--min-steps", type=positive_int, default=400, help="never fewer steps (default 400)")
    s.add_argument(
        "--failures",
        action="store_true",
        help="also print, per cell, how its held-out episodes failed (each kind counted) and a few as written",
    )
    _data_flags(s)
    _training_flags(s, "seeds of one cell", "the map", "the map's cells")


def add_study(sub: argparse._SubParsersAction) -> None:
    """`breadth study FILE` and its flags: where its steps run; every other flag is the plan's."""
    s = sub.add_parser(
        "study",
        help="run a study's plan (a TOML file of curve and transfer steps, written before the runs) and report it",
        description="Check every step of the plan, run them in order into one store (resuming, as curve and "
        "transfer do), record each stored run under the plan's hash, then report every step: its pool, design and "
        "reading, flat or not, and what the plan says was chosen after looking at results.",
    )
    s.add_argument("file", type=input_file, metavar="FILE", help="the study's plan (docs/studies/*.toml)")
    where_flags(s)
    store_flag(s, written=True)
    s.add_argument(
        "--status",
        action="store_true",
        help="train nothing: count each step's runs and training steps already in the store, and those to train",
    )


def _data_flags(s: argparse.ArgumentParser) -> None:
    """Demonstrations per environment, seeds, and test sums per environment."""
    s.add_argument("--demos", type=positive_int, default=30, help="demonstrations per environment (default 30)")
    s.add_argument("--seeds", default="0-4", help="seeds: 0-4, 0,1,2 (default 0-4)")
    s.add_argument("--held-out-sums", type=positive_int, default=30, help="test sums per environment (default 30)")


def _training_flags(s: argparse.ArgumentParser, together: str, drawn: str, written: str) -> None:
    """Lockstep or alone, the fine-tuning settings but the steps (the protocol's budget sets them), where it runs."""
    lockstep_flag(s, together)
    for setting in swept(FinetuneSettings):
        if setting.name != "steps":
            setting_flag(s, setting, "")
    runner_flags(s, drawn, written)
