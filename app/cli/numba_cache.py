"""Where the `slabscope` command lets numba cache compiled kernels.

The planner, imported as a library, leaves the environment and numba's settings alone (and
compiles in each process where numba can cache nowhere). The command line sets
`NUMBA_CACHE_DIR` for its own process, before the planner is imported, when none of numba's
own places is writable (beside the installed source, the user's cache folder): a read-only
install with no writable home then still reuses compiled kernels, from a per-user temporary
folder.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    """Whether `folder` (or, when absent, its nearest existing parent) accepts new files."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK | os.X_OK)
    return False


def fallback_cache_dir() -> str:
    """A per-user cache folder under the system's temporary directory."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return str(Path(tempfile.gettempdir()) / f"slabscope-numba-{uid}")


def configure_numba_cache() -> None:
    """Set `NUMBA_CACHE_DIR` to `fallback_cache_dir()` where numba could cache nowhere else.

    Call before the planner is imported: numba picks a kernel's cache folder when the kernel
    is defined."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("slabscope.planner")  # imports slabscope, not the planner
    if spec is not None and spec.origin is not None:
        if _writable(Path(spec.origin).parent / "__pycache__"):
            return
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    if not _writable(home_cache):
        os.environ["NUMBA_CACHE_DIR"] = fallback_cache_dir()
