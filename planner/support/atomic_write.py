"""Writing outputs so they never harm the user's files.

Every file Slabscope writes (CSV plans, pictures, session files, generated graphs) goes through
`write_atomic`: the bytes go to a temporary file in the target's own folder, are flushed to disk,
and only then renamed over the target. A crash, Ctrl+C or a full disk leaves the old file whole;
where the system allows (Linux `O_TMPFILE`), the temporary file has no name until it is complete,
so even a killed process leaves nothing behind.

Before anything is written, `check_outputs` refuses an output that is an input (same file, a
symlink or hard link to it), an output named twice, and an output that is not a regular file (a
FIFO would block forever, a device is no place for a plan), each as a one-line `PlanError`.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import tempfile
from pathlib import Path

from .errors import PlanError

# Suffix of the one backup `write_atomic(..., backup=True)` keeps of the file it replaces.
BACKUP_SUFFIX = "~"


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file `path` names (following links), None when there is none."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def check_output(path, what: str = "output") -> Path:
    """`path` as the real path to write (symlinks followed), or a PlanError when it cannot be a
    regular file in an existing folder: a folder, a FIFO, a device, a missing folder."""
    shown = Path(path)
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise PlanError(f"cannot write {what} {shown}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            why = "a folder"
        elif stat.S_ISFIFO(mode):
            why = "a FIFO, not a regular file"
        else:
            why = "not a regular file"
        raise PlanError(f"cannot write {what} {shown}: {why}")
    if not real.parent.is_dir():
        raise PlanError(f"cannot write {what} {shown}: no folder {shown.parent}")
    return real


def check_outputs(inputs, outputs) -> None:
    """A PlanError, before anything is written, when an output is one of the `inputs` (the same
    path, a symlink to it, or a hard link: the same inode), when two outputs are the same file,
    or when an output cannot be a regular file (`check_output`).

    `inputs`: paths read (None entries are skipped); `outputs`: (what, path) pairs such as
    ("CSV", "plan.csv"), None paths skipped.
    """
    read = {}
    for source in inputs:
        if source is None:
            continue
        read[os.path.realpath(source)] = source
        ident = _identity(source)
        if ident is not None:
            read[ident] = source
    written: dict = {}
    for what, target in outputs:
        if target is None:
            continue
        real = str(check_output(target, what))
        ident = _identity(target)
        for key in (real, ident):
            if key is None:
                continue
            if key in read:
                raise PlanError(f"{what} output {target} is the input file {read[key]}; "
                                f"choose another path")
            if key in written:
                raise PlanError(f"{what} output {target} is also the {written[key][0]} output "
                                f"{written[key][1]}; give each output its own path")
        written[real] = (what, target)
        if ident is not None:
            written[ident] = (what, target)


def write_atomic(path, data: bytes | str, what: str = "output", *, backup: bool = False) -> Path:
    """Write `data` (str as UTF-8) to `path` through a temporary file in the same folder renamed
    into place; returns the real path written. The target keeps its permissions when it exists.

    `backup`: first keep the file being replaced as `path~` (one backup, the previous one goes).
    Errors (a full disk, no permission, not a regular file) are a one-line PlanError naming the
    path; the old file is then untouched and no temporary file is left.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    shown = Path(path)
    target = check_output(path, what)
    try:
        temp = _written_temporary(target, data)
        try:
            if backup and target.is_file():
                _keep_backup(target)
            os.replace(temp, target)
        except BaseException:
            _remove(temp)
            raise
        finally:
            _pending.discard(temp)
    except OSError as exc:
        raise PlanError(f"cannot write {what} {shown}: {exc.strerror or exc}") from None
    return target


# Named temporary files being written now, so a process ending at once (`os._exit` after a
# timeout) can remove them first.
_pending: set[str] = set()


def discard_pending() -> None:
    """Remove the temporary files of writes still under way (for a process about to end)."""
    for name in list(_pending):
        _remove(name)


# Whether this system can give an O_TMPFILE file a name (some sandboxes refuse: EXDEV); None
# until first tried.
_unnamed_files: list = [None if hasattr(os, "O_TMPFILE") else False]


def _unnamed_supported(folder: Path) -> bool:
    """Whether unnamed temporary files can be used, tried once with an empty one in `folder`."""
    if _unnamed_files[0] is None:
        try:
            fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
        except OSError:
            _unnamed_files[0] = False
            return False
        name = _temporary_name(folder / "probe")
        try:
            _name_unnamed(fd, name)
            _unnamed_files[0] = True
        except OSError:
            _unnamed_files[0] = False
        finally:
            os.close(fd)
            _remove(name)
    return _unnamed_files[0]


def _name_unnamed(fd: int, name: str) -> None:
    """Give the unnamed file `fd` the name `name`: by linkat(AT_EMPTY_PATH) where the process
    may (it needs CAP_DAC_READ_SEARCH), else through /proc/self/fd (refused by some sandboxes)."""
    libc = _libc()
    if libc is not None and libc.linkat(fd, b"", _AT_FDCWD, os.fsencode(name),
                                        _AT_EMPTY_PATH) == 0:
        return
    os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)


_AT_FDCWD, _AT_EMPTY_PATH = -100, 0x1000  # Linux's values


@functools.cache
def _libc():
    """The C library, for linkat (None where it cannot be loaded)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _written_temporary(target: Path, data: bytes) -> str:
    """The name of a complete temporary copy of `data` in `target`'s folder, flushed to disk.

    An unnamed O_TMPFILE file is tried first: until it is complete it has no name, so a kill
    leaves nothing behind. Otherwise a hidden `.NAME.XXXX.tmp`, removed on any error.
    """
    if _unnamed_supported(target.parent):
        try:
            fd = os.open(target.parent, os.O_TMPFILE | os.O_WRONLY, 0o600)
        except OSError:
            pass  # this folder's filesystem has none: a named file instead
        else:
            try:
                _fill(fd, data, target)
                name = _temporary_name(target)
                _name_unnamed(fd, name)
                _pending.add(name)
                return name
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
                    raise
                # Otherwise no way to name it in this folder: a named file instead.
            finally:
                os.close(fd)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    _pending.add(name)
    try:
        _fill(fd, data, target)
    except BaseException:
        os.close(fd)
        _remove(name)
        _pending.discard(name)
        raise
    os.close(fd)
    return name


def _fill(fd: int, data: bytes, target: Path) -> None:
    """Write all of `data` to `fd`, give it the target's permissions and flush it to disk."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:1 << 24]):]
    os.fchmod(fd, _mode_for(target))
    os.fsync(fd)


def _temporary_name(target: Path) -> str:
    """A hidden name beside `target` that no file has now."""
    return tempfile.mktemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")


def _mode_for(target: Path) -> int:
    """The permissions of the file replaced, or what a new file gets under the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _keep_backup(target: Path) -> None:
    """Make `target~` a copy of `target` (a hard link where the folder allows) in one rename."""
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    staged = _temporary_name(backup)
    try:
        os.link(target, staged)
    except OSError:
        write_atomic(backup, target.read_bytes(), "backup")
        return
    try:
        os.replace(staged, backup)
    except BaseException:
        _remove(staged)
        raise


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass
