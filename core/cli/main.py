"""`breadth`: the headless command line: pre-train, fine-tune, evaluate, play one sum, run the plate.

Every user error (a bad sum, an unknown environment, a missing or corrupt checkpoint, a bad flag) prints
one line to stderr and exits with status 2; no traceback reaches the user. A command's module is
imported only when it runs (a `breadth play` does not load the plotting library).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rich.console import Console

from breadth.core.cli.parser import USAGE_ERROR, UsageError, build_parser, parse_argv
from breadth.core.cli.path_flags import check_paths


def handler(command: str) -> Callable:
    """The function that runs `command`."""
    if command in ("sweep", "matrix"):
        from breadth.core.cli import grids

        return getattr(grids, command)
    if command in ("runs", "report"):
        from breadth.core.cli import stored

        return getattr(stored, command)
    if command == "curve":
        from breadth.core.cli import curve

        return curve.curve
    if command == "transfer":
        from breadth.core.cli import transfer

        return transfer.transfer
    if command == "study":
        from breadth.core.cli import study

        return study.study
    if command == "envs":
        from breadth.core.cli import envs

        return envs.envs
    if command == "rl":
        from breadth.core.cli import rl

        return rl.rl
    if command == "models":
        from breadth.core.cli import shipped

        return shipped.models
    from breadth.core.cli import commands

    return {"eval": commands.evaluate}.get(command) or getattr(commands, command)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `breadth`."""
    from breadth.core.results.figures import FigureError
    from breadth.core.results.grid import GridError
    from breadth.core.results.matrix import MatrixError
    from breadth.core.results.study import StudyError
    from breadth.core.storage.files import UserFileError
    from breadth.core.storage.header import CheckpointError
    from breadth.core.storage.paths import check_locations
    from breadth.core.storage.store import StoreError
    from breadth.core.sweeps.sweep import ClusterError
    from breadth.core.world.arithmetic.calculator import FormError
    from breadth.core.world.environments.mix import MixError
    from breadth.core.world.environments.probe import SumError
    from breadth.core.world.environments.registry import EnvError
    from breadth.core.world.runs.records import Diverged
    from breadth.core.world.runs.settings import SettingsError
    from breadth.core.world.text.shown import one_line

    refused = (
        UsageError,
        CheckpointError,
        MixError,
        SettingsError,
        Diverged,
        UserFileError,
        StoreError,
        GridError,
        ClusterError,
        FigureError,
        MatrixError,
        EnvError,
        FormError,
        StudyError,
    )
    err = Console(stderr=True, highlight=False, emoji=False)  # `:smile:` in a path stays `:smile:`

    def say(text: str) -> None:
        err.print(one_line(text), markup=False, soft_wrap=True)  # escaped, and cut if it quotes a huge input

    try:
        check_locations()  # an odd BREADTH_HOME, BREADTH_RUNS or BREADTH_STORE: one line, before anything
        parser = build_parser()
        args = parse_argv(parser, argv)
        check_paths(parser, args)  # no output over the store, an input or the installed package
        return handler(args.command)(args) or 0
    except refused as e:  # each is one line already
        say(f"error: {e}")
        return USAGE_ERROR
    except OSError as e:  # an unwritable --out or --json, a full disk: one line, not a traceback
        where = f"{e.filename}: " if e.filename else ""
        say(f"error: {where}{e.strerror or e}")
        return USAGE_ERROR
    except SumError as e:
        say(f"error: bad sum: {e}")
        return USAGE_ERROR
    except KeyboardInterrupt:
        say("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
