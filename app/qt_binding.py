"""Refuse a Qt binding known to corrupt the interpreter, with one line instead of an abort.

PySide6-Essentials and shiboken6 6.12.0 lower None's reference count on every call of a
method that returns nothing, on Python before 3.12 (None is immortal from 3.12 on): drawing a
large DAG then frees None and the process aborts ("Fatal Python error: none_dealloc", exit
134). The window, the exports and the test suite ask `binding_problem()` before they draw.
"""

from __future__ import annotations

import sys

# Releases known to break, with what goes wrong; they apply to the Pythons before the version given.
KNOWN_BROKEN = {
    "6.12.0": ((3, 12), "lowers None's reference count on every void method call "
                        "(Fatal Python error: none_dealloc)"),
}
# The fix each message names: the newest release the suite is pinned to (constraints.txt).
KNOWN_GOOD = "6.11.3"
PROBE_CALLS = 64
_returned: list = []  # references given back to None when the probe found them taken


def _versions() -> tuple[str, str]:
    """(PySide6 version, shiboken6 version) as the installed modules report them."""
    import PySide6
    import shiboken6

    return PySide6.__version__, shiboken6.__version__


def none_references_lost(calls: int = PROBE_CALLS) -> int:
    """How many references to None `calls` calls of a void Qt method take and never give back
    (0 on a sound binding); those it took are given back, so the probe itself cannot free None."""
    from PySide6.QtGui import QPainterPath

    path = QPainterPath()
    before = sys.getrefcount(None)
    for _ in range(calls):
        path.cubicTo(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    lost = before - sys.getrefcount(None)
    if lost > 0:
        _returned.extend([None] * lost)
    return max(lost, 0)


def binding_problem() -> str | None:
    """One line naming the broken Qt binding and the fix, or None when it is sound."""
    fix = (f"install another release, e.g. pip install 'PySide6-Essentials=={KNOWN_GOOD}' "
           f"'shiboken6=={KNOWN_GOOD}'")
    pyside, shiboken = _versions()
    python = ".".join(map(str, sys.version_info[:3]))
    for version in (pyside, shiboken):
        if version in KNOWN_BROKEN:
            before, failure = KNOWN_BROKEN[version]
            if sys.version_info[:2] < before:
                return (f"PySide6 {pyside} / shiboken6 {shiboken} is known to break on Python "
                        f"{python}: it {failure}; {fix}")
    lost = none_references_lost()
    if lost >= PROBE_CALLS // 2:
        return (f"PySide6 {pyside} / shiboken6 {shiboken} is broken on Python {python}: "
                f"{PROBE_CALLS} void method calls lost {lost} references to None, which ends "
                f"in 'Fatal Python error: none_dealloc'; {fix}")
    return None


def require_sound_binding() -> None:
    """Raise PlanError (one line, exit 2 from the command line) on a broken Qt binding."""
    from slabscope.planner import PlanError

    problem = binding_problem()
    if problem is not None:
        raise PlanError(problem)
