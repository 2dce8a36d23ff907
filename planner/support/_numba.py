"""The one place the planner's kernels get `njit` from, with a cache only where numba can keep one.

Kernels are compiled with numba when it imports, and run as plain Python otherwise (same
results, slower). Compiled kernels are cached on disk (`cache=True`) so a later process loads
them instead of compiling. numba caches in `NUMBA_CACHE_DIR` when that is configured, else next
to the source, else under the user's cache directory. Importing the planner changes no
environment variable and no numba setting: where none of those places is writable (an
installed, read-only tree and no writable home), kernels compile in each process instead, and
the `slabscope` command points numba at a temporary folder before it imports the planner
(app/cli/numba_cache.py).
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import numba
    from numba import njit as _numba_njit
except ImportError:  # numba is optional: the kernels then run as plain Python
    numba = None


def _writable(folder: Path) -> bool:
    """Whether `folder` (or, when absent, its nearest existing parent) accepts new files."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK | os.X_OK)
    return False


def numba_can_cache() -> bool:
    """Whether one of the places numba caches in is configured or writable."""
    if os.environ.get("NUMBA_CACHE_DIR") or (numba is not None and numba.config.CACHE_DIR):
        return True
    if _writable(Path(__file__).resolve().parent / "__pycache__"):
        return True
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return _writable(home_cache)


if numba is None:
    def njit(*args, **kwargs):
        """Without numba: the function itself."""
        return args[0] if args and callable(args[0]) else (lambda f: f)
else:
    _CACHE = numba_can_cache()  # numba refuses `cache=True` outright where it has no place

    def njit(*args, **kwargs):
        """numba's `njit`, with `cache=True` dropped where numba has nowhere to cache."""
        if not _CACHE:
            kwargs["cache"] = False
        return _numba_njit(*args, **kwargs)

# Whether kernels are compiled (loops in them are then cheap enough to run millions of times).
COMPILED = numba is not None
