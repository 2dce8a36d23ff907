"""Execute a plan for real: one slab, every buffer a view at its planned offset, phases measured.

CuPy on an NVIDIA device, NumPy over a host byte buffer elsewhere, through the same binding code.
Imports `planner`, never `app`; CuPy is imported only when a backend asks for it.
"""

from .backend_choice import select_backend
from .backends import BACKEND_NAMES, SlabAllocationError
from .report import Clobbered, KernelTime, PhaseTime, Replay, RunReport, RunVerification
from .runner import LAYOUTS, RunCancelled, run

__all__ = [
    "BACKEND_NAMES", "Clobbered", "KernelTime", "LAYOUTS", "PhaseTime", "Replay", "RunCancelled",
    "RunReport", "RunVerification", "SlabAllocationError", "run", "select_backend",
]
