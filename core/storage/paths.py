"""Where breadth's files live: the shipped checkpoints (package data) and the user's data folder.

The shipped checkpoints are found through `importlib.resources`, so a plain `pip install .` works
without the source tree. Nothing is ever written into the installed package (`installed_folder_of`: the one
writer and the store refuse it): models made by the user go to the user's data folder (`platformdirs`, e.g.
`~/.local/share/breadth`, or where BREADTH_HOME says, checked by `location`) or where they say.
`fresh_home()` swaps that folder for a temporary one (`breadth-tui --fresh`, so a talk never shows last
week's runs, and what `--serve` gives each browser off loopback) and removes it afterwards. `BREADTH_MAX_CHECKPOINTS`
caps the trained models a runs folder takes (`folder_full`): a served browser's folder holds VISITOR_CHECKPOINTS.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.resources import files
from importlib.util import find_spec
from pathlib import Path

from platformdirs import user_data_path

from breadth.core.storage.files import UserFileError, inside_the_package, process_running, same_file, user_path


def shipped_checkpoint(name: str) -> Path:
    """The shipped checkpoint `name` (`base`, `mix_35_35`, ...), inside the installed `checkpoints` package."""
    return Path(str(files("breadth.checkpoints").joinpath(f"{name}.safetensors")))


BASE = shipped_checkpoint("base")  # the shipped pre-trained model every fine-tune starts from
# the pool's base (issue 34): 4 layers of width 128, pre-trained as `base` (`breadth pretrain --layers 4 --width 128`),
# which a pool of many environments is fine-tuned from (docs/environments.md, the pool's recipe)
POOL_BASE = shipped_checkpoint("pool_base")
SHIPPED_RESULTS = Path(str(files("breadth.results").joinpath("grid.sqlite")))  # the README's matrix runs (read only)
SHIPPED_CURVE = Path(str(files("breadth.results").joinpath("curve.sqlite")))  # the README's breadth curve (read only)
SHIPPED_MAP = Path(str(files("breadth.results").joinpath("transfer.sqlite")))  # the README's transfer map (read only)


LOG_LIMIT = 1_000_000  # bytes a log in the user's folder (app.log, engine.log) keeps: past this it starts afresh


LOCATIONS = ("BREADTH_HOME", "BREADTH_RUNS", "BREADTH_STORE")  # the variables that say where breadth's files are
PACKAGES = ("breadth.core", "breadth.tui", "breadth.checkpoints", "breadth.results")  # the installed folders


@cache
def installed_folders() -> tuple[Path, ...]:
    """The installed package's folders (its code, the shipped checkpoints and results), resolved: nothing of
    breadth's is ever written inside them. Found without importing them (`breadth.tui` would load Textual)."""
    specs = [find_spec(name) for name in PACKAGES]
    return tuple(Path(os.path.realpath(f)) for spec in specs if spec for f in spec.submodule_search_locations or [])


def installed_folder_of(path: str | os.PathLike) -> Path | None:
    """The installed folder or file that writing `path` would change (None: nothing installed): a path inside
    one of `installed_folders()` once `..` and symlinks are resolved, or a hard link to an installed file."""
    try:
        real = Path(os.path.realpath(path))
        links = os.stat(path).st_nlink if os.path.isfile(path) else 1
    except (OSError, ValueError):
        return None
    inside = next((folder for folder in installed_folders() if real.is_relative_to(folder)), None)
    if inside is not None or links < 2:
        return inside
    for folder in installed_folders():  # another name for one of its files (only a file linked twice is looked for)
        for root, _, names in os.walk(folder):
            inside = next((Path(root, n) for n in names if same_file(path, Path(root, n))), None)
            if inside is not None:
                return inside
    return None


def location(name: str, folder: bool = True) -> Path | None:
    """The path the variable `name` (BREADTH_HOME, BREADTH_RUNS, BREADTH_STORE) names, `~` expanded; None when
    it is unset or empty. An odd value is one UserFileError line: blank, not UTF-8, relative (it would move with
    the current folder), a file where a folder is meant (or a folder where a file is), inside the installed
    package. A folder that cannot be made is said, in one line, by whatever writes there first."""
    raw = os.environ.get(name)
    if not raw:
        return None
    if not raw.strip():
        raise UserFileError(errno.EINVAL, f"{name} is blank; unset it, or give a full path")
    try:
        raw.encode()
    except UnicodeEncodeError:
        raise UserFileError(errno.EINVAL, f"{name} is not UTF-8 text; name a path that is") from None
    path = user_path(raw)
    if not path.is_absolute():
        raise UserFileError(
            errno.EINVAL, f"{name}={raw}: a relative path (it would move with the current folder); give a full path"
        )
    if folder and path.exists() and not path.is_dir():
        raise UserFileError(errno.ENOTDIR, f"{name}={raw}: not a folder")
    if not folder and path.is_dir():
        raise UserFileError(errno.EISDIR, f"{name}={raw}: a folder; name the store's file, e.g. {path}/runs.sqlite")
    if folder and (installed := installed_folder_of(path)) is not None:
        raise UserFileError(errno.EINVAL, f"{name}={raw}: {inside_the_package(installed)}")
    return path


def data_dir() -> Path:
    """The user's breadth folder: `BREADTH_HOME`, else the platform's user data folder."""
    return location("BREADTH_HOME") or user_data_path("breadth", appauthor=False)


def runs_dir() -> Path:
    """Where models trained in the app are saved as soon as they finish: `BREADTH_RUNS`, else `data_dir()/runs`."""
    return location("BREADTH_RUNS") or data_dir() / "runs"


def check_locations() -> None:
    """Refuse, in one line, an odd BREADTH_HOME, BREADTH_RUNS or BREADTH_STORE before anything uses them."""
    for name in LOCATIONS:
        location(name, folder=name != "BREADTH_STORE")


def default_base_out() -> Path:
    """Where `breadth pretrain` writes when not told: the user's folder, never the installed package."""
    return data_dir() / "base.safetensors"


FRESH_PREFIX = "breadth-fresh-"  # a temporary breadth folder's name starts so, in the system's temporary folder
FRESH_OWNER = "owner.pid"  # inside it: the id of the process that made it (a folder whose maker is gone is removed)


@contextmanager
def fresh_home() -> Iterator[Path]:
    """A new, empty breadth folder for this process and the processes it starts, removed on leaving.

    `BREADTH_HOME` points at it, and `BREADTH_RUNS` and `BREADTH_STORE` are unset so that runs and the results
    store live inside it too: nothing in the user's own folders is read or written. On leaving (also by an
    exception) the variables are restored and the folder is removed. A folder left by a process that was killed
    outright (kill -9: nothing of it runs) is removed the next time one is made.
    """
    remove_orphans()
    folder = Path(tempfile.mkdtemp(prefix=FRESH_PREFIX))
    (folder / FRESH_OWNER).write_text(str(os.getpid()))
    try:
        with environment({name: None for name in LOCATIONS} | {"BREADTH_HOME": str(folder)}):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def environment(changes: dict[str, str | None]) -> Iterator[None]:
    """Set the variables of `changes` (None: unset) for this process and those it starts; as they were on leaving
    (also by an exception), so the next thing run in-process (a test, a script) finds them untouched."""
    before = {name: os.environ.get(name) for name in changes}
    try:
        _set_variables(changes)
        yield
    finally:
        _set_variables(before)


def _set_variables(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def remove_orphans(where: Path | None = None) -> list[Path]:
    """Remove the fresh folders in `where` (the temporary folder) whose maker is no longer running; the removed.

    Only a folder that `fresh_home` made is touched: named `breadth-fresh-*`, holding `owner.pid`, owned by this
    user, its maker's process gone. Anything else (another user's, one still in use, a stranger's) is left alone.
    """
    removed = []
    for folder in Path(where or tempfile.gettempdir()).glob(FRESH_PREFIX + "*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            owner = int((folder / FRESH_OWNER).read_text().strip())
        except (OSError, ValueError):
            continue
        if not _running(owner):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    """Whether process `pid` exists (a pid fresh_home cannot have written counts as running: keep the folder)."""
    return pid <= 0 or process_running(pid)


CHECKPOINTS_ENV = "BREADTH_MAX_CHECKPOINTS"  # the most trained models a runs folder takes (unset: no cap)
# What `--serve` gives each browser's own temporary folder: a class's afternoon of experiments. A trained model is a
# 1.4 MB checkpoint and its snapshots (2.8 MB beside the shipped 400-step runs; at most 40 stored, each 343,968
# weights in float16: 27.5 MB), so a page's folder stays under 20 x 29 MB = 0.58 GB however long it is used.
VISITOR_CHECKPOINTS = 20


def checkpoints_cap() -> int | None:
    """The most trained models a runs folder may hold (`BREADTH_MAX_CHECKPOINTS`), or None: no cap."""
    text = os.environ.get(CHECKPOINTS_ENV, "")
    return int(text) if text.isdigit() else None


def folder_full(folder: str | os.PathLike) -> str | None:
    """None while the runs `folder` may take another trained model; else the one line saying it is full."""
    cap = checkpoints_cap()
    if cap is None:
        return None
    try:
        held = sum(1 for f in Path(folder).glob("*.safetensors") if not f.name.endswith(".snapshots.safetensors"))
    except OSError:
        held = 0
    if held < cap:
        return None
    models = "model" if cap == 1 else "models"
    return f"folder full ({cap} {models}): reload for an empty one"  # short: a panel's border, a toast, 80 columns
