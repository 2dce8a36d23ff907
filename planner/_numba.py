"""The one place the planner's kernels get `njit` from, with a cache that works read-only.

Kernels are compiled with numba when it imports, and run as plain Python otherwise (same
results, slower). Compiled kernels are cached on disk (`cache=True`) so a later process loads
them instead of compiling. numba caches next to the source, or else under the user's cache
directory; when neither is writable (an installed, read-only tree and no writable home), the
cache goes to a per-user folder under the system's temporary directory instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    """Whether `folder` (or, when absent, its nearest existing parent) accepts new files."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK | os.X_OK)
    return False


def _fallback_cache_dir() -> str | None:
    """A writable cache folder when numba's own choices are not writable, else None."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _writable(Path(__file__).resolve().parent / "__pycache__"):
        return None
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    if _writable(home_cache):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return str(Path(tempfile.gettempdir()) / f"slabscope-numba-{uid}")


_cache_dir = _fallback_cache_dir()
if _cache_dir is not None:
    os.environ["NUMBA_CACHE_DIR"] = _cache_dir

try:
    import numba
    from numba import njit
except ImportError:  # numba is optional: the kernels then run as plain Python
    numba = None

    def njit(*args, **kwargs):
        """Without numba: the function itself."""
        return args[0] if args and callable(args[0]) else (lambda f: f)
else:
    if _cache_dir is not None:
        # numba may have been imported before this module set the variable.
        numba.config.CACHE_DIR = _cache_dir

# Whether kernels are compiled (loops in them are then cheap enough to run millions of times).
COMPILED = numba is not None
