"""`breadth`: the headless command line: pre-train, fine-tune, evaluate, play one sum, run the plate.

Every user error (a bad sum, an unknown family, a missing or corrupt checkpoint, a bad flag) prints
one line to stderr and exits with status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

USAGE_ERROR = 2
HANDLERS = {"eval": "evaluate"}  # subcommands whose function in `commands` has another name (not the builtin)


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}")


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {n}")
    return n


def _seed(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"a seed is not negative, got {n}")
    return n


def _rate(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError(f"expected a value in [0, 1), got {x}")
    return x


def _lr(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < x <= 1:
        raise argparse.ArgumentTypeError(f"a learning rate in (0, 1], got {x}")
    return x


def _held_out(text: str) -> int | None:
    if text == "all":
        return None
    return _positive_int(text)


def _seeds(text: str) -> list[int]:
    seeds = [_seed(s.strip()) for s in text.split(",") if s.strip()]
    if not seeds:
        raise argparse.ArgumentTypeError("expected seeds such as 0,1,2")
    return seeds


def _settings_flags(s: argparse.ArgumentParser, ft) -> None:
    """The fine-tuning hyper-parameter flags shared by `train` and `plate`."""
    s.add_argument("--steps", type=_positive_int, default=ft.steps, help=f"optimiser steps (default {ft.steps})")
    s.add_argument("--lr", type=_lr, default=ft.lr, help=f"AdamW learning rate (default {ft.lr})")
    s.add_argument("--dropout", type=_rate, default=ft.dropout, help=f"dropout (default {ft.dropout})")
    s.add_argument("--batch-size", type=_positive_int, default=ft.batch_size,
                   help=f"demonstrations per step (default {ft.batch_size})")


def build_parser() -> argparse.ArgumentParser:
    from .settings import FinetuneSettings, PretrainSettings

    ft, pt = FinetuneSettings(), PretrainSettings()
    p = _Parser(prog="breadth", description="Fine-tune a tiny character model to call a calculator, "
                "and see which task families it learns.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("pretrain", help="pre-train the base model on single-digit worksheets",
                       description="Pre-train the base model on single-digit addition worksheets and "
                       "check it on all 100 worksheet sums.")
    s.add_argument("--steps", type=_positive_int, default=pt.steps, help=f"optimiser steps (default {pt.steps})")
    s.add_argument("--seed", type=_seed, default=pt.seed, help="seed (default 0)")
    s.add_argument("--out", type=Path, default=None, help="where to write it (default: the shipped base)")

    s = sub.add_parser("train", help="fine-tune the base on a mix of task families",
                       description="Fine-tune the base model on demonstrations from a mix of task "
                       "families (loss on the model's own actions only), then score held-out sums.")
    s.add_argument("--mix", required=True, help="demonstrations per family, e.g. two_digit=35,three_digit=35")
    s.add_argument("--seed", type=_seed, default=ft.seed, help="seeds demonstrations, held-out sets and "
                   "training (default 0)")
    _settings_flags(s, ft)
    s.add_argument("--base", type=Path, default=None, help="pre-trained checkpoint (default: the shipped base)")
    s.add_argument("--out", type=Path, required=True, help="checkpoint to write")

    s = sub.add_parser("eval", help="score a checkpoint on held-out sums of every family",
                       description="Greedy rollouts, with the calculator in the loop, on each family's "
                       "held-out sums; prints solved/total and the failure kinds.")
    s.add_argument("checkpoint", type=Path)
    s.add_argument("--held-out", type=_held_out, default=30, help="sums per family: a number or 'all' (default 30)")
    s.add_argument("--seed", type=_seed, default=None, help="held-out sets of this seed (default: the "
                   "checkpoint's training seed)")
    s.add_argument("--json", type=Path, default=None, help="also write the scores and episodes here")

    s = sub.add_parser("play", help="play one sum and show who wrote what",
                       description="Play one sum greedily with the calculator in the loop and print the "
                       "episode, each segment marked by who wrote it, and the verdict.")
    s.add_argument("checkpoint", type=Path)
    s.add_argument("sum", help="a sum such as 23+45 or 3+4+5")

    s = sub.add_parser("plate", help="reproduce the plate: three mixes on each seed",
                       description="Fine-tune the plate's three mixes on each seed in parallel processes, "
                       "score them, print the table beside the plate's numbers and write every run to JSON.")
    s.add_argument("--seeds", type=_seeds, default=[0, 1, 2], help="comma-separated seeds (default 0,1,2)")
    _settings_flags(s, ft)
    s.add_argument("--held-out", type=_held_out, default=30, help="sums per family: a number or 'all' (default 30)")
    s.add_argument("--workers", type=_positive_int, default=2, help="parallel processes (default 2)")
    s.add_argument("--json", type=Path, default=None, help="write every run here")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of `breadth`."""
    from .checkpoint import CheckpointError
    from .mix import MixError
    from .probe import SumError

    err = Console(stderr=True, highlight=False)
    try:
        args = build_parser().parse_args(argv)
        from . import commands

        return getattr(commands, HANDLERS.get(args.command, args.command))(args) or 0
    except (UsageError, CheckpointError, MixError) as e:
        err.print(f"error: {e}", markup=False, soft_wrap=True)
        return USAGE_ERROR
    except OSError as e:  # an unwritable --out or --json, a full disk: one line, not a traceback
        where = f"{e.filename}: " if e.filename else ""
        err.print(f"error: {where}{e.strerror or e}", markup=False, soft_wrap=True)
        return USAGE_ERROR
    except SumError as e:
        err.print(f"error: bad sum: {e}", markup=False, soft_wrap=True)
        return USAGE_ERROR
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        return 130


if __name__ == "__main__":
    sys.exit(main())
