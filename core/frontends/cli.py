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


def _seeds(text: str) -> list[str]:
    seeds = [s.strip() for s in text.split(",") if s.strip()]
    if not seeds:
        raise argparse.ArgumentTypeError("expected seeds such as 0,1,2")
    return seeds


def _settings_flags(s: argparse.ArgumentParser, ft) -> None:
    """The fine-tuning hyper-parameter flags shared by `train` and `plate`; checked by FinetuneSettings."""
    s.add_argument("--steps", help=f"optimiser steps (default {ft.steps})")
    s.add_argument("--lr", help=f"AdamW learning rate (default {ft.lr})")
    s.add_argument("--dropout", help=f"dropout (default {ft.dropout})")
    s.add_argument("--batch-size", help=f"demonstrations per step (default {ft.batch_size})")
    s.add_argument("--weight-decay", help=f"AdamW weight decay (default {ft.weight_decay})")


def finetune_settings(args, seed: str | None = None):
    """The FinetuneSettings the flags ask for (defaults for those not given); SettingsError if one is bad."""
    from ..world.settings import FinetuneSettings

    given = {
        "steps": args.steps,
        "lr": args.lr,
        "dropout": args.dropout,
        "batch_size": args.batch_size,
        "weight_decay": args.weight_decay,
        "seed": seed,
    }
    return FinetuneSettings.from_text(**{k: v for k, v in given.items() if v is not None})


def build_parser() -> argparse.ArgumentParser:
    from ..world.settings import HELD_OUT, FinetuneSettings, PretrainSettings

    ft, pt = FinetuneSettings(), PretrainSettings()
    p = _Parser(
        prog="breadth",
        description="Fine-tune a tiny character model to call a calculator, and see which task families it learns.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser(
        "pretrain",
        help="pre-train the base model on single-digit worksheets",
        description="Pre-train the base model on single-digit addition worksheets and "
        "check it on all 100 worksheet sums.",
    )
    s.add_argument("--steps", help=f"optimiser steps (default {pt.steps})")
    s.add_argument("--seed", help=f"seed (default {pt.seed})")
    s.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write it (default: base.safetensors in the user's breadth folder)",
    )

    s = sub.add_parser(
        "train",
        help="fine-tune the base on a mix of task families",
        description="Fine-tune the base model on demonstrations from a mix of task "
        "families (loss on the model's own actions only), then score held-out sums.",
    )
    s.add_argument("--mix", required=True, help="demonstrations per family, e.g. two_digit=35,three_digit=35")
    s.add_argument("--seed", help=f"seeds demonstrations, held-out sets and training (default {ft.seed})")
    _settings_flags(s, ft)
    s.add_argument("--base", type=Path, default=None, help="pre-trained checkpoint (default: the shipped base)")
    s.add_argument("--out", type=Path, required=True, help="checkpoint to write")

    s = sub.add_parser(
        "eval",
        help="score a checkpoint on held-out sums of every family",
        description="Greedy rollouts, with the calculator in the loop, on each family's "
        "held-out sums; prints solved/total and the failure kinds.",
    )
    s.add_argument("checkpoint", type=Path)
    s.add_argument("--held-out", default=str(HELD_OUT), help=f"sums per family: a number or 'all' (default {HELD_OUT})")
    s.add_argument("--seed", default=None, help="held-out sets of this seed (default: the checkpoint's training seed)")
    s.add_argument("--json", type=Path, default=None, help="also write the scores and episodes here")

    s = sub.add_parser(
        "play",
        help="play one sum and show who wrote what",
        description="Play one sum greedily with the calculator in the loop and print the "
        "episode, each segment marked by who wrote it, and the verdict.",
    )
    s.add_argument("checkpoint", type=Path)
    s.add_argument("sum", nargs="?", help="a sum such as 23+45 or 3+4+5")

    s = sub.add_parser(
        "plate",
        help="reproduce the plate: three mixes on each seed",
        description="Fine-tune the plate's three mixes on each seed in parallel processes, "
        "score them, print the table beside the plate's numbers and write every run to JSON.",
    )
    s.add_argument("--seeds", type=_seeds, default=[0, 1, 2], help="comma-separated seeds (default 0,1,2)")
    _settings_flags(s, ft)
    s.add_argument("--held-out", default=str(HELD_OUT), help=f"sums per family: a number or 'all' (default {HELD_OUT})")
    s.add_argument("--workers", type=_positive_int, default=2, help="parallel processes (default 2)")
    s.add_argument("--json", type=Path, default=None, help="write every run here")
    return p


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse `argv`; a sum that starts with `-` (`-1+2`) is the sum of `play`, not an unknown option."""
    args, extra = parser.parse_known_args(argv)
    if args.command == "play" and args.sum is None and len(extra) == 1:
        args.sum = extra[0]  # the sum parser says why it is not a sum
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    elif args.command == "play" and args.sum is None:
        parser.error("the following arguments are required: sum")
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point of `breadth`."""
    from ..world.files import UserFileError
    from ..world.header import CheckpointError
    from ..world.mix import MixError
    from ..world.probe import SumError
    from ..world.records import Diverged
    from ..world.settings import SettingsError

    err = Console(stderr=True, highlight=False)
    try:
        args = _parse(build_parser(), argv)
        from . import commands

        return getattr(commands, HANDLERS.get(args.command, args.command))(args) or 0
    except (UsageError, CheckpointError, MixError, SettingsError, Diverged) as e:
        err.print(f"error: {e}", markup=False, soft_wrap=True)
        return USAGE_ERROR
    except UserFileError as e:  # already one line naming the path
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
