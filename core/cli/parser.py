"""The `breadth` command line's parser: its subcommands and flags, each setting's flag from its declaration.

Commands read what they need of parsed flags through `recipe_settings` (and `path_flags.figure_paths`); the
entry point is `breadth.core.cli.main`. A path flag's type (`core.cli.path_flags`) says what the command does
with it, so `path_flags.check_paths` finds every output of every command from this parser alone.
"""

from __future__ import annotations

import argparse

from breadth.core.cli.curve_flags import add_curve, add_study, add_transfer
from breadth.core.cli.flags import (
    WORKERS,
    lockstep_flag,
    pool_flag,
    positive_int,
    runner_flags,
    setting_flag,
    store_flag,
)
from breadth.core.cli.path_flags import (
    CHECKPOINT_HELP,
    checkpoint_in,
    checkpoint_out,
    figure_file,
    input_file,
    output_file,
)

USAGE_ERROR = 2


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}")


def _settings_flags(s: argparse.ArgumentParser, how: str = "one") -> None:
    """The settings a sweep may vary, a flag each, as every recipe that trains on a mix declares them (one flag
    per name): one value (`train`, `plate`), a comma-separated list to sweep (`sweep`), or a filter on stored runs."""
    from breadth.core.world.runs.recipes import swept_by_any

    for setting in swept_by_any():
        setting_flag(s, setting, {"one": "", "sweep": ": comma-separated values", "filter": None}[how])


def _declared_flags(s: argparse.ArgumentParser, settings_class) -> None:
    """A flag for every setting a settings class declares (pre-training, the model's shape), with its help."""
    for setting in settings_class.settings():
        setting_flag(s, setting, "")


def _held_out_flag(s: argparse.ArgumentParser, filter_only: bool = False) -> None:
    from breadth.core.world.episodes.scores import HELD_OUT

    if filter_only:
        s.add_argument("--held-out", help="only runs scored on this many sums per environment (a number or 'all')")
    else:
        s.add_argument(
            "--held-out", default=str(HELD_OUT), help=f"sums per environment: a number or 'all' (default {HELD_OUT})"
        )


def _recipe_flag(s: argparse.ArgumentParser) -> None:
    """`--recipe`: how the run learns, one of the recipes that train on a mix (the plate's by default)."""
    from breadth.core.world.runs.recipes import FINETUNE, mix_recipes

    ways = ", ".join(f"{r.name} (from {r.label})" for r in mix_recipes())
    s.add_argument("--recipe", default=FINETUNE, choices=[r.name for r in mix_recipes()], help=f"how it learns: {ways}")


def recipe_settings(args, seed: str | None = None):
    """The settings of the recipe the flags name (`--recipe`, else the plate's), defaults for flags not given;
    SettingsError (one line) if a value is bad or a flag is not a setting of that recipe."""
    from breadth.core.world.runs.recipes import FINETUNE, recipe, swept_by_any
    from breadth.core.world.runs.settings import SettingsError

    made_by = recipe(getattr(args, "recipe", FINETUNE))
    given = {s.name: getattr(args, s.name, None) for s in swept_by_any()} | {"seed": seed}
    given = {name: text for name, text in given.items() if text is not None}
    own = {s.name for s in made_by.settings.settings()}
    stray = next((s for s in swept_by_any() if s.name in given and s.name not in own), None)
    if stray is not None:
        raise SettingsError(f"--{stray.flag} is not a setting of the {made_by.name} recipe")
    return made_by.settings.from_text(**given)


def build_parser() -> argparse.ArgumentParser:
    from breadth.core.storage.paths import default_base_out
    from breadth.core.world.runs.settings import FinetuneSettings, ModelShape, PretrainSettings, RewardSettings

    ft = FinetuneSettings()
    p = _Parser(
        prog="breadth",
        description="Fine-tune a tiny character model to call a calculator, and see which environments it learns.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser(
        "pretrain",
        help="pre-train the base model on single-digit worksheets",
        description="Pre-train the base model on single-digit addition worksheets and "
        "check it on all 100 worksheet sums.",
    )
    _declared_flags(s, PretrainSettings)
    _declared_flags(s, ModelShape)
    out = s.add_argument(
        "--out",
        type=output_file,
        default=None,
        help="where to write it (default: base.safetensors in the user's breadth folder)",
    )
    out.written_by_default = default_base_out  # what `check_paths` checks when the flag is not given

    s = sub.add_parser(
        "train",
        help="fine-tune the base on a mix of environments",
        description="Fine-tune the base model on demonstrations from a mix of "
        "environments (loss on the model's own actions only), then score held-out sums.",
    )
    s.add_argument("--mix", required=True, help="demonstrations per environment, e.g. add_2x2=35,add_3x1=35")
    s.add_argument("--seed", help=f"seeds demonstrations, held-out sets and training (default {ft.seed})")
    _recipe_flag(s)
    _settings_flags(s)
    s.add_argument(
        "--base", type=checkpoint_in, default=None, help="pre-trained checkpoint (default: the shipped base)"
    )
    s.add_argument("--out", type=checkpoint_out, required=True, help="checkpoint to write")
    store_flag(s, written=True)

    s = sub.add_parser(
        "rl",
        help="learn from reward: sampled episodes with the calculator, reward 1 when correct",
        description="Learn from reward on a mix's training sums (nanochat's RL recipe): a group of sampled "
        "episodes per prompt, the calculator in the loop, advantage = reward - the group's mean, loss on the "
        "model's own characters only, the learning rate decaying to 0. Says pass@G on the training prompts "
        "before training, prints the metrics as it goes, then scores held-out sums of every named environment.",
    )
    s.add_argument(
        "--mix",
        required=True,
        help="training sums per environment, e.g. add_3x1=200 or add_2x2=100,add_3x1=100",
    )
    s.add_argument(
        "--from",
        dest="start",
        metavar="CHECKPOINT",
        type=checkpoint_in,
        default=None,
        help=f"{CHECKPOINT_HELP} (default: the shipped base)",
    )
    _declared_flags(s, RewardSettings)
    _held_out_flag(s)
    s.add_argument(
        "--every", type=positive_int, default=10, help="print the metrics every this many steps (default 10)"
    )
    s.add_argument("--out", type=checkpoint_out, required=True, help="checkpoint to write")
    store_flag(s, written=True)

    s = sub.add_parser(
        "eval",
        help="score a checkpoint on held-out sums of the ten named environments (or of many more: --envs)",
        description="Greedy rollouts, with the calculator in the loop, on each named environment's "
        "held-out sums; prints solved/total and the failure kinds. With --envs, --where or --draw: every chosen "
        "environment's test split, summarised by dimension (a table per operand count: digits of each number x "
        "the operation at each gap, in each call form), with the means per form, operation and operand count.",
    )
    s.add_argument("checkpoint", type=checkpoint_in, help=CHECKPOINT_HELP)
    _held_out_flag(s)
    s.add_argument("--seed", default=None, help="held-out sets of this seed (default: the checkpoint's training seed)")
    s.add_argument(
        "--envs",
        metavar="all|ID,...",
        help="score environments instead of the ten named ones: all, or ids (breadth/add-2x2-v1,...); "
        "summarised by dimension",
    )
    s.add_argument("--where", action="append", metavar="DIM=VALUE", help="only environments at this coordinate")
    s.add_argument("--draw", type=positive_int, help="a seeded draw of this many environments (after --where)")
    pool_flag(s)
    s.add_argument(
        "--draw-seed", type=int, default=0, help="the draw's seed, as `breadth envs --seed` takes it (default 0)"
    )
    s.add_argument("--json", type=output_file, default=None, help="also write the scores and episodes here")
    s.add_argument(
        "--figure",
        type=figure_file,
        default=None,
        help="also draw a projector slide of these scores and the model's loss curve: FIGURE.png and .svg",
    )

    s = sub.add_parser(
        "play",
        help="play one sum and show who wrote what",
        description="Play one sum greedily with the calculator in the loop and print the "
        "episode, each segment marked by who wrote it, and the verdict.",
    )
    s.add_argument("checkpoint", type=checkpoint_in, help=CHECKPOINT_HELP)
    s.add_argument("sum", nargs="?", help="a sum such as 23+45 or 3+4+5")

    s = sub.add_parser(
        "envs",
        help="list the environments: ids, coordinates, sizes, a demonstration each",
        description="The environment registry, filtered by coordinates (--where operands=3 --where op=sub) or "
        "drawn at random (--draw 64 --seed 3); as a table, and with --json as JSON.",
    )
    s.add_argument("--where", action="append", metavar="DIM=VALUE", help="only environments at this coordinate")
    s.add_argument("--draw", type=positive_int, help="a seeded draw of this many environments (after --where)")
    pool_flag(s)
    s.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    s.add_argument("--json", type=output_file, help="also write the environments here as JSON")

    add_curve(sub)
    add_transfer(sub)
    add_study(sub)

    sub.add_parser(
        "models",
        help="list the shipped models, by the names any command takes",
        description="The shipped models: the pre-trained base and the plate's three fine-tunes, each with what it "
        "was trained on and its held-out scores; `breadth play two_digit_70 23+45` names one.",
    )

    s = sub.add_parser(
        "plate",
        help="reproduce the plate: three mixes on each seed",
        description="Fine-tune the plate's three mixes on each seed in parallel processes, "
        "score them, print the table beside the plate's numbers and write every run to JSON.",
    )
    s.add_argument("--seeds", default="0,1,2", help="seeds: 0,1,2, 0-9 or 0-4,10 (default 0,1,2)")
    _settings_flags(s)
    _held_out_flag(s)
    s.add_argument("--workers", type=positive_int, default=WORKERS, help=f"parallel processes (default {WORKERS})")
    s.add_argument("--json", type=output_file, default=None, help="write every run here")
    store_flag(s, written=True)

    s = sub.add_parser(
        "sweep",
        help="run a grid of mixes x settings x seeds into the store",
        description="Fine-tune and score every cell of a grid (mixes x setting values) on the same seeds and "
        "held-out sets, skipping runs already in the store; print each cell's mean and intervals over seeds.",
    )
    s.add_argument("--mix", action="append", default=[], help="a mix to run (repeat for several)")
    s.add_argument(
        "--share",
        help="a share between two environments, e.g. add_2x2/add_3x1=70:7 "
        "(70 demonstrations split 0/70, 7/63, ..., 70/0)",
    )
    s.add_argument(
        "--budget",
        help="the cost of mixing, e.g. add_2x2/add_3x1=10,20,35,70,140: at each total, each environment alone "
        "and an even mix of the two",
    )
    s.add_argument("--plate", action="store_true", help="the plate's three mixes")
    s.add_argument("--seeds", default="0-2", help="seeds: 0-9, 0,1,2 or 0-4,10 (default 0-2)")
    _held_out_flag(s)
    _recipe_flag(s)
    _settings_flags(s, "sweep")
    lockstep_flag(s, "seeds of one cell")
    runner_flags(s, "success against the swept value", "the cells' summaries")

    s = sub.add_parser(
        "matrix",
        help="the transfer matrix: training mixes x every named environment, success over seeds",
        description="Rows: training mixes; columns: every named environment, grouped by operation, operands and "
        "digits; cells: mean held-out success over seeds with a 95%% interval. Runs what the store lacks, then prints "
        "the table; an environment outside a row's mix is held out.",
    )
    s.add_argument("--mix", action="append", default=[], help="a row: a mix, e.g. @operands:2=35 (repeatable)")
    s.add_argument(
        "--single", type=positive_int, help="a row per environment trained alone on this many demonstrations"
    )
    s.add_argument(
        "--curve",
        metavar="ENVIRONMENTS",
        help="also the breadth curve: success on these held-out environments (e.g. a3x2,s3x2) against how many "
        "environments each row trained on; with --figure, also FIGURE-curve.png and .svg",
    )
    s.add_argument("--plate", action="store_true", help="rows for the plate's three mixes")
    s.add_argument("--seeds", default="0-4", help="seeds: 0-9, 0,1,2 or 0-4,10 (default 0-4)")
    _held_out_flag(s)
    _settings_flags(s, "one")
    runner_flags(s, "the matrix", "the matrix")

    for name, help_text in (
        ("runs", "list stored runs, filtered; export CSV or JSON"),
        ("report", "summarise stored runs per cell: mean, intervals, paired differences"),
    ):
        s = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        s.add_argument("--mix", action="append", default=[], help="only this mix (repeat for several)")
        s.add_argument("--seeds", help="only these seeds (0-9, 0,1,2)")
        _held_out_flag(s, filter_only=True)
        _settings_flags(s, "filter")
        s.add_argument(
            "--base", type=input_file, help="only runs from this base checkpoint ('shipped' for the shipped one)"
        )
        store_flag(s, written=False)
        if name == "runs":
            s.add_argument("--csv", type=output_file, help="write the runs here as CSV")
            s.add_argument("--json", type=output_file, help="write the runs here as JSON")
        else:
            s.add_argument(
                "--compare",
                nargs=2,
                type=positive_int,
                metavar=("A", "B"),
                help="paired difference B - A between two cells (their numbers in the table)",
            )
            s.add_argument(
                "--figure", type=figure_file, help="draw success against the swept value: FIGURE.png and .svg"
            )
            s.add_argument("--json", type=output_file, help="also write the cells' summaries here")
    return p


def parse_argv(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse `argv`; a sum that starts with `-` (`-1+2`) is the sum of `play`, not an unknown option."""
    args, extra = parser.parse_known_args(argv)
    if args.command == "play" and args.sum is None and len(extra) == 1:
        args.sum = extra[0]  # the sum parser says why it is not a sum
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    elif args.command == "play" and args.sum is None:
        parser.error("the following arguments are required: sum")
    return args
