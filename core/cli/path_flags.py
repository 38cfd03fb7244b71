"""The command line's path flags: a flag's type says what the command does with the path (an output, an input,
a store it adds to or reads), so `check_paths` finds every output of every command from the parser alone and
refuses, before any work, one that would write over the results store, an input or the installed package.
"""

from __future__ import annotations

import argparse
import errno
import os
from collections.abc import Callable
from pathlib import Path


def typed_path(text: str) -> Path:
    """A path flag as typed: `~` and `~user` expanded (an unknown user is one line), never taken literally."""
    from breadth.core.storage.files import user_path

    return user_path(text)


def path_kind(name: str, what: str) -> Callable[[str], Path]:
    """A path flag's type: a path as typed (`typed_path`), its identity saying what the command does with it."""

    def kind(text: str) -> Path:
        return typed_path(text)

    kind.__name__, kind.__doc__ = name, what
    return kind


input_file = path_kind("input", "a path the command reads")
output_file = path_kind("output", "a file the command writes (checked with every other output by `check_paths`)")
checkpoint_out = path_kind("checkpoint_out", "a checkpoint the command writes, with its snapshots beside it")
store_written = path_kind("store", "--store of a command that adds runs to it")
store_read = path_kind("store", "--store of a command that only reads it")


CHECKPOINT_HELP = "a checkpoint file, or a shipped model's name (base, two_digit_70, ...: `breadth models`)"


def checkpoint_in(text: str) -> Path:
    """A checkpoint argument: a file, else a shipped model's name (`two_digit_70`); one line if neither."""
    from breadth.core.storage.presets import UnknownCheckpoint, checkpoint_path

    try:
        return checkpoint_path(text)
    except UnknownCheckpoint as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def figure_file(text: str) -> Path:
    """A --figure flag: a file name (FIGURE.png and FIGURE.svg are written), not a folder."""
    from breadth.core.storage.files import user_path

    path = user_path(text)
    if path.name in ("", ".", "..") or text.endswith(("/", os.sep)) or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is a folder; name a file, e.g. {text.rstrip('/')}/figure")
    return path


def figure_paths(figure: Path | None) -> list[Path]:
    """The files `--figure FIGURE` writes: FIGURE.png and FIGURE.svg (none if the flag was not given)."""
    return [] if figure is None else [figure.with_suffix(".png"), figure.with_suffix(".svg")]


OUTPUTS = (output_file, checkpoint_out, figure_file)  # the types of the flags naming what a command writes
INPUTS = (checkpoint_in, input_file)  # ... and what it reads (besides its store)
STORES = (store_written, store_read)


def command_actions(parser: argparse.ArgumentParser) -> dict[str, list[argparse.Action]]:
    """Each subcommand's flags and arguments, by the subcommand's name."""
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: command._actions for name, command in sub.choices.items()}


def files_written(action: argparse.Action, value: Path) -> list[Path]:
    """The files an output flag of `action`'s type, given `value`, writes."""
    from breadth.core.storage.snapshot_file import sidecar_of

    if action.type is figure_file:
        return figure_paths(value)
    return [value, sidecar_of(value)] if action.type is checkpoint_out and value.name else [value]  # `/`: a folder


def check_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any work, an output (every flag of an output type, and a default output) that would write
    over the user's results store or its journals (given, $BREADTH_STORE or the breadth folder's, whether or not
    the command reads it), over one of the command's inputs, or into the installed package; and a store the
    command adds runs to that is one of its inputs or inside the installed package. One UserFileError line."""
    from breadth.core.storage.files import UserFileError, check_outputs, same_file
    from breadth.core.storage.store import check_written_store, default_store, store_files

    actions = command_actions(parser)[args.command]
    given = [(a, getattr(args, a.dest, None)) for a in actions]
    store = next((value for a, value in given if a.type in STORES and value is not None), None) or default_store()
    inputs = [value for a, value in given if a.type in INPUTS and value is not None]
    outputs = [
        path
        for a, value in given
        if a.type in OUTPUTS and (value is not None or hasattr(a, "written_by_default"))
        for path in files_written(a, value if value is not None else a.written_by_default())
    ]
    for path in outputs:
        if path is not None and any(same_file(path, part) for part in store_files(store)):
            raise UserFileError(errno.EINVAL, f"{path}: that is your results store; write the result somewhere else")
    check_outputs(outputs, inputs=inputs)
    if any(a.type is store_written for a in actions):
        check_written_store(store)
        if any(same_file(store, path) for path in inputs):
            raise UserFileError(errno.EINVAL, f"{store}: the results store is also an input; name another store")
