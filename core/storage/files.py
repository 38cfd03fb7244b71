"""Reading and writing the user's files safely: the one opener for what a user hands in, the one writer.

Reading: only regular files are opened (a FIFO, a device, a directory or a symlink loop is refused
before anything blocks), and every failure becomes one `UserFileError` line naming the path.
Writing: a temporary file beside the target, fsynced, then renamed over it (or linked, when the
target must not exist yet), so a crash, a cancel or Ctrl-C at any moment leaves the old file or the
new one, never half. Only a regular file (or nothing) is ever replaced, never the file being read, never
anything inside the installed package; writability is checked before long work starts; temporary files of dead
writers are removed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

TMP_SUFFIX = ".tmp"


class UserFileError(OSError):
    """A file the user named cannot be read or written as asked; the message is one line naming the path."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def user_path(text: str | os.PathLike) -> Path:
    """A path as typed by a person, `~` expanded; UserFileError for `~nosuchuser/...` or an empty path."""
    raw = os.fspath(text)
    if not str(raw).strip():
        raise UserFileError("a path is needed")
    try:
        return Path(raw).expanduser()
    except RuntimeError:  # `~nosuchuser`: no such home directory
        raise UserFileError(f"{raw}: no such user's home folder") from None


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_error(path: Path, e: OSError, doing: str) -> UserFileError:
    """One line for an OSError met while `doing` (read, write) `path`."""
    why = {
        errno.ENOENT: "no such file",
        errno.ELOOP: "a symlink loop",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENAMETOOLONG: "the name is too long",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.ENOSPC: "no space left on the device",
        errno.EROFS: "a read-only file system",
    }.get(e.errno, e.strerror or str(e) or type(e).__name__)
    error = UserFileError(e.errno or 0, f"cannot {doing} {path}: {why}")
    error.filename = str(path)
    return error


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """Open `path` for reading if, and only if, it is a regular file; never blocks on a FIFO or a device."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO with no writer opens at once
    except OSError as e:
        raise _os_error(path, e, "read") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UserFileError(errno.EINVAL, f"{path}: {_describe(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The whole regular file at `path`, refused (not read) if it is larger than `limit` bytes."""
    path = Path(path)
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise UserFileError(errno.EFBIG, f"{path}: {size:,} bytes, more than the {limit:,} allowed")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise _os_error(path, e, "read") from None
    if len(data) > limit:
        raise UserFileError(errno.EFBIG, f"{path}: more than the {limit:,} bytes allowed")
    return data


def same_file(a: Path, b: Path) -> bool:
    """True if `a` and `b` name one file: the same inode (links), or the same place once resolved (not yet made)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        pass
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def check_output(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """Refuse, before any work, an output that cannot be written or would replace something it must not.

    Allowed: a new file in a writable folder, or a regular file there (replaced atomically). Refused: a
    symlink, a directory, a FIFO, a device, one of `inputs` (the files being read), an unwritable folder, and
    anything inside the installed package (its code, the shipped checkpoints and results) or linked to it.
    """
    from breadth.core.storage.paths import installed_folder_of  # paths builds on this module

    path = Path(path)
    for source in inputs:
        if same_file(path, Path(source)):
            raise UserFileError(errno.EINVAL, f"{path}: is also an input; write the result somewhere else")
    if (installed := installed_folder_of(path)) is not None:
        raise UserFileError(errno.EINVAL, f"{path}: {inside_the_package(installed)}; write it somewhere else")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise _os_error(path, e, "write") from None
    if mode is not None and stat.S_ISLNK(mode):
        raise UserFileError(errno.EINVAL, f"{path}: a symlink; breadth replaces only regular files")
    if mode is not None and not stat.S_ISREG(mode):
        raise UserFileError(errno.EINVAL, f"{path}: {_describe(mode)}; breadth replaces only regular files")
    folder = _existing_parent(path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserFileError(errno.EACCES, f"cannot write {path}: the folder {folder} is not writable")
    return path


def inside_the_package(installed: Path) -> str:
    """Why a path in (or linked to) `installed`, a folder or file of the installed package, is never written."""
    return f"inside the installed breadth package ({installed}), which breadth never writes into"


def check_outputs(outputs: Iterable[str | os.PathLike | None], inputs: Iterable[str | os.PathLike] = ()) -> None:
    """`check_output` for each of a command's outputs (None: a flag not given), and no two of them the same file."""
    given = [Path(o) for o in outputs if o is not None]
    inputs = list(inputs)
    for i, path in enumerate(given):
        check_output(path, inputs)
        for other in given[:i]:
            if same_file(path, other):
                raise UserFileError(errno.EINVAL, f"{path}: named for two outputs; give each its own file")


def _existing_parent(path: Path) -> Path:
    """The nearest folder above `path` that exists (where missing folders would be created)."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UserFileError(errno.ENOTDIR, f"cannot write {path}: {folder} is not a folder")
    return folder


def write_atomic(path: str | os.PathLike, data: bytes, exclusive: bool = False) -> Path:
    """Write `data` to `path` so that readers only ever see a complete file.

    `exclusive`: fail with FileExistsError rather than replace an existing file (for names that must be new).
    """
    path = Path(path)
    check_output(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temporaries(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TMP_SUFFIX, dir=path.parent)
    except OSError as e:
        raise _os_error(path, e, "write") from None
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; a checkpoint is an ordinary file
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if exclusive:
            os.link(tmp, path)  # fails if the name was taken meanwhile: nothing is replaced
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _os_error(path, e, "write") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_new(folder: str | os.PathLike, stem: str, suffix: str, data: bytes) -> Path:
    """Write `data` under a name not yet taken in `folder`: `stem+suffix`, else `stem-2+suffix`, `stem-3`..."""
    folder = Path(folder)
    for n in range(1, 10_000):
        path = folder / f"{stem}{'' if n == 1 else f'-{n}'}{suffix}"
        if path.exists() or path.is_symlink():
            continue
        try:
            return write_atomic(path, data, exclusive=True)
        except FileExistsError:
            continue  # taken between the check and the link: try the next name
    raise UserFileError(errno.EEXIST, f"cannot write in {folder}: every name {stem}-N{suffix} is taken")


def write_json(path: str | os.PathLike, obj) -> Path:
    """Write `obj` as indented JSON, atomically."""
    return write_atomic(path, (json.dumps(obj, indent=2) + "\n").encode())


def clean_stale_temporaries(folder: Path) -> None:
    """Remove temporary files this module left in `folder` from writers that are no longer running."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(".") and n.endswith(TMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        parts = name.rsplit(".", 3)  # . <target> . <pid> . <random>.tmp
        if len(parts) < 4 or not parts[-3].isdigit() or _alive(int(parts[-3])):
            continue
        try:
            (folder / name).unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    return pid == os.getpid() or process_running(pid)


def process_running(pid: int) -> bool:
    """Whether process `pid` exists (another user's counts: it exists, we may not signal it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before any thread starts
    os.umask(mask)
    return mask


_UMASK = _read_umask()
